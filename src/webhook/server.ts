// The HTTPS listener the Kubernetes API server calls (Service port 443 -> httpsAddr, :15017).
// It moves bytes in and out: TLS from node:tls, HTTP/1.1 from the strict reader in http1.ts (the
// API server speaks HTTP/1.1 keep-alive to admission webhooks), the decisions in admission.ts.
// The serving certificate comes from the CA and is swapped in place on renewal, so open
// keep-alive connections survive.

import type { Socket } from 'node:net';
import * as tls from 'node:tls';
import type { SecureContextOptions } from 'node:tls';
import type { ServerContext, ServingCertificate } from '../server/context';
import { scopedLogger } from '../log/logger';
import { listen } from '../server/http';
import { AdmissionReply, bodyTooLarge, MAX_REQUEST_BODY_BYTES, reviewAdmission } from './admission';
import { formatResponse, HttpRequest, isProtocolError, RequestReader } from './http1';
import { webhookMetrics, WebhookMetrics } from './metrics';

const log = scopedLogger('webhook');

/** istiod's webhook server timeouts (ReadHeaderTimeout 30s, IdleTimeout 90s). */
export const HEADERS_TIMEOUT_MS = 30_000;
export const KEEP_ALIVE_TIMEOUT_MS = 90_000;
export const READINESS_CONDITION = 'webhook';

/** The connection timeouts; tests shorten them. */
export interface WebhookTimeouts {
  headersMs: number;
  keepAliveMs: number;
}

const ISTIOD_TIMEOUTS: WebhookTimeouts = { headersMs: HEADERS_TIMEOUT_MS, keepAliveMs: KEEP_ALIVE_TIMEOUT_MS };

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

function isValidatePath(target: string): boolean {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  return path === '/validate' || path.startsWith('/validate/');
}

const TEXT = 'text/plain; charset=utf-8';

/** The Date header, formatted at most once a second. */
let dateSecond = 0;
let dateText = '';
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

/** The answer to one request. */
function answer(req: HttpRequest, metrics: WebhookMetrics): { status: number; contentType: string; body: string } {
  if (req.target === '/ready') return { status: 200, contentType: TEXT, body: 'ok\n' };
  if (!isValidatePath(req.target)) return { status: 404, contentType: TEXT, body: '404 page not found\n' };
  let reply: AdmissionReply;
  try {
    reply = reviewAdmission(req.body, req.headers.get('content-type'));
  } catch (err) {
    // A validator bug must not leave the API server waiting until its timeout.
    log.error({ err }, 'validating the request failed');
    metrics.record({ type: 'http-error', status: 500, message: (err as Error).message });
    return { status: 500, contentType: TEXT, body: 'internal error while validating\n' };
  }
  metrics.record(reply.outcome);
  const o = reply.outcome;
  if (o.type === 'failed' && !o.allowed) log.info({ reason: o.reason, resource: o.resource.resource, dryRun: o.dryRun }, o.message);
  else if (o.type === 'http-error' || o.type === 'undecodable') log.info({ status: reply.status }, o.message);
  return { status: reply.status, contentType: reply.contentType, body: reply.body };
}

interface Connection {
  socket: tls.TLSSocket;
  reader: RequestReader;
  /** Set once the last response is written; later bytes are ignored. */
  closing: boolean;
}

/**
 * Serves one TLS connection: requests in order, keep-alive, and an inactivity timeout that is
 * keepAliveMs between requests and headersMs once one has begun.
 */
function serve(socket: tls.TLSSocket, metrics: WebhookMetrics, connections: Set<Connection>, shuttingDown: () => boolean, timeouts: WebhookTimeouts): void {
  const conn: Connection = { socket, reader: new RequestReader(MAX_REQUEST_BODY_BYTES), closing: false };
  connections.add(conn);
  socket.setNoDelay(true);
  let timeout = timeouts.keepAliveMs;
  socket.setTimeout(timeout);
  const finish = (response: Buffer) => {
    conn.closing = true;
    socket.end(response);
  };
  socket.on('data', (chunk: Buffer) => {
    if (conn.closing) return;
    conn.reader.push(chunk);
    for (;;) {
      const next = conn.reader.next();
      if (next === undefined) break;
      if (isProtocolError(next)) {
        const reply = next.tooLarge ? bodyTooLarge() : undefined;
        const status = reply?.status ?? next.status;
        const message = reply ? reply.body : `${next.message}\n`;
        metrics.record({ type: 'http-error', status, message: message.trim() });
        log.info({ status, peer: socket.remoteAddress }, message.trim());
        finish(formatResponse(status, TEXT, message, { close: true, date: httpDate() }));
        return;
      }
      const { status, contentType, body } = answer(next, metrics);
      const close = !next.keepAlive || shuttingDown();
      const bytes = formatResponse(status, contentType, body, { close, date: httpDate() });
      if (close) return finish(bytes);
      // A client that sends but does not read must not make its answers pile up in memory.
      if (!socket.write(bytes)) {
        socket.pause();
        socket.once('drain', () => socket.resume());
      }
    }
    const wanted = conn.reader.idle ? timeouts.keepAliveMs : timeouts.headersMs;
    if (wanted !== timeout) socket.setTimeout((timeout = wanted));
  });
  socket.on('timeout', () => {
    if (conn.reader.idle) socket.destroy();
    else finish(formatResponse(408, TEXT, 'request not received in time\n', { close: true, date: httpDate() }));
  });
  socket.on('error', (err) => log.debug({ err: err.message, peer: socket.remoteAddress }, 'webhook connection failed'));
  socket.on('close', () => connections.delete(conn));
}

/**
 * Starts the webhook listener on --httpsAddr once the serving certificate exists. Registers a
 * readiness condition that turns true when it listens (istiod's "config validation" probe).
 */
export async function startWebhookServer(ctx: ServerContext, timeouts: WebhookTimeouts = ISTIOD_TIMEOUTS): Promise<WebhookServerHandle> {
  const addr = ctx.options.flags.httpsAddr;
  if (!addr) {
    log.info('httpsAddr is empty: the validating webhook is disabled');
    return { enabled: false, close: async () => undefined };
  }
  const ready = ctx.readiness.register(READINESS_CONDITION);
  const cert = await ctx.servingCerts.whenAvailable();
  const metrics = webhookMetrics(ctx.metrics);
  const connections = new Set<Connection>();
  let closing: Promise<void> | undefined;
  const server = tls.createServer({ ...tlsOptions(cert), ALPNProtocols: ['http/1.1'], keepAlive: true }, (socket) => serve(socket, metrics, connections, () => closing !== undefined, timeouts));
  server.on('tlsClientError', (err: Error, socket: Socket) => log.debug({ err: err.message, peer: socket.remoteAddress }, 'TLS handshake failed'));
  const unsubscribe = ctx.servingCerts.onChange((next) => {
    server.setSecureContext(tlsOptions(next));
    log.info('serving certificate renewed');
  });

  const { address, port } = await listen('webhook', server, addr, log);
  ready(true);

  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      unsubscribe();
      ready(false);
      server.close(() => resolve());
      // Keep-alive connections would otherwise hold close() open until they idle out; one
      // mid-request answers first and then closes (see serve).
      for (const c of connections) if (c.reader.idle) c.socket.end();
    }));
  ctx.onShutdown(close);
  return { enabled: true, address, port, close };
}
