// The HTTPS listener the Kubernetes API server calls (Service port 443 -> httpsAddr, :15017).
// It moves bytes in and out; the decisions are in admission.ts. The serving certificate comes
// from the CA and is swapped in place on renewal, so open keep-alive connections survive.

import * as https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SecureContextOptions } from 'node:tls';
import type { ServerContext, ServingCertificate } from '../server/context';
import { scopedLogger } from '../log/logger';
import { listen } from '../server/http';
import { AdmissionReply, MAX_REQUEST_BODY_BYTES, reviewAdmission } from './admission';
import { webhookMetrics, WebhookMetrics } from './metrics';

const log = scopedLogger('webhook');

/** istiod's webhook server timeouts (ReadHeaderTimeout 30s, IdleTimeout 90s). */
export const HEADERS_TIMEOUT_MS = 30_000;
export const KEEP_ALIVE_TIMEOUT_MS = 90_000;
export const READINESS_CONDITION = 'webhook';

export interface WebhookServerHandle {
  /** False when httpsAddr is empty. */
  enabled: boolean;
  /** The bound address, e.g. "[::]:15017"; undefined when disabled. */
  address?: string;
  port?: number;
  close(): Promise<void>;
}

function tlsOptions(cert: ServingCertificate): SecureContextOptions {
  return { cert: cert.certChainPem, key: cert.privateKeyPem, minVersion: 'TLSv1.2' };
}

function isValidatePath(url: string | undefined): boolean {
  const path = (url ?? '').split('?')[0]!;
  return path === '/validate' || path.startsWith('/validate/');
}

/** Reads the body, keeping at most one byte over the limit so an oversized body is refused. */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      if (size > MAX_REQUEST_BODY_BYTES) return;
      chunks.push(chunk);
      size += chunk.length;
      if (size > MAX_REQUEST_BODY_BYTES) {
        // Stop buffering; the reply closes the connection instead of draining the rest.
        req.pause();
        resolve(Buffer.concat(chunks).subarray(0, MAX_REQUEST_BODY_BYTES + 1));
      }
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

function handler(metrics: WebhookMetrics): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (req.url === '/ready') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('ok\n');
      return;
    }
    if (!isValidatePath(req.url)) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
    readBody(req).then(
      (body) => {
        let reply: AdmissionReply;
        try {
          reply = reviewAdmission(body, req.headers['content-type']);
        } catch (err) {
          // A validator bug must not leave the API server waiting until its timeout.
          log.error({ err }, 'validating the request failed');
          metrics.record({ type: 'http-error', status: 500, message: (err as Error).message });
          res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('internal error while validating\n');
          return;
        }
        metrics.record(reply.outcome);
        const o = reply.outcome;
        if (o.type === 'failed' && !o.allowed) log.info({ reason: o.reason, resource: o.resource.resource, dryRun: o.dryRun }, o.message);
        else if (o.type === 'http-error' || o.type === 'undecodable') log.info({ status: reply.status }, o.message);
        const headers: Record<string, string | number> = { 'content-type': reply.contentType, 'content-length': Buffer.byteLength(reply.body) };
        if (body.length > MAX_REQUEST_BODY_BYTES) headers['connection'] = 'close';
        res.writeHead(reply.status, headers).end(reply.body);
      },
      (err: Error) => {
        log.warn({ err }, 'reading the request body failed');
        res.destroy();
      },
    );
  };
}

/**
 * Starts the webhook listener on --httpsAddr once the serving certificate exists. Registers a
 * readiness condition that turns true when it listens (istiod's "config validation" probe).
 */
export async function startWebhookServer(ctx: ServerContext): Promise<WebhookServerHandle> {
  const addr = ctx.options.flags.httpsAddr;
  if (!addr) {
    log.info('httpsAddr is empty: the validating webhook is disabled');
    return { enabled: false, close: async () => undefined };
  }
  const ready = ctx.readiness.register(READINESS_CONDITION);
  const cert = await ctx.servingCerts.whenAvailable();
  const server = https.createServer({ ...tlsOptions(cert), keepAlive: true }, handler(webhookMetrics(ctx.metrics)));
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  const unsubscribe = ctx.servingCerts.onChange((next) => {
    server.setSecureContext(tlsOptions(next));
    log.info('serving certificate renewed');
  });

  const { address, port } = await listen('webhook', server, addr, log);
  ready(true);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      unsubscribe();
      ready(false);
      server.close(() => resolve());
      // Keep-alive connections would otherwise hold close() open until they idle out.
      server.closeIdleConnections();
    }));
  ctx.onShutdown(close);
  return { enabled: true, address, port, close };
}
