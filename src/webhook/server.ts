// The HTTPS listener the Kubernetes API server calls (Service port 443 -> httpsAddr, :15017).
// It moves bytes in and out: TLS from node:tls, HTTP/1.1 from the strict reader in http1.ts (the
// API server speaks HTTP/1.1 keep-alive to admission webhooks), the decisions in admission.ts.
// The serving certificate comes from the CA and is swapped in place on renewal, so open
// keep-alive connections survive. Each connection is served by connection.ts; the listener caps
// open connections, checks their deadlines on one timer, and closes gracefully (limits.ts).

import type { Socket } from 'node:net';
import * as tls from 'node:tls';
import type { SecureContextOptions } from 'node:tls';
import type { Registry } from 'prom-client';
import type { ServeFlags } from '../config/options';
import type { OnShutdown, Readiness } from '../contract/host';
import type { ServingCertificate, ServingCertSink } from '../contract/serving-cert';
import { scopedLogger } from '../log/logger';
import { connectionRejections, idleClosedCounter, LISTENER_CLOSE_DEADLINE_MS, listen } from '../net/http-listener';
import { AdmissionReply, bodyTooLarge, reviewAdmission } from './admission';
import { Answer, WebhookConnection, WriteBatch } from './connection';
import type { HttpProtocolError, HttpRequest } from './http1';
import { WebhookLimits, webhookLimits } from './limits';
import { webhookMetrics, WebhookMetrics } from './metrics';
import { CloseDeadline } from '../net/close-deadline';

export { HEADERS_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS, type WebhookLimits } from './limits';

const log = scopedLogger('webhook');

export const READINESS_CONDITION = 'webhook';

export interface WebhookServerHandle {
  /** False when httpsAddr is empty. */
  enabled: boolean;
  /** The bound address, e.g. "[::]:15017"; undefined when disabled. */
  address?: string;
  port?: number;
  /**
   * Graceful close: turns readiness off, stops accepting, drops connections still in their TLS
   * handshake and closes idle keep-alive connections at once; a request under way is answered
   * (with `Connection: close`) and its connection closed. At `deadlineMs` (default
   * LISTENER_CLOSE_DEADLINE_MS) whatever is left is destroyed. Resolves when every connection is
   * closed. Also registered as a shutdown hook; calling it again returns the same promise, and a
   * shorter deadline wins.
   */
  close(deadlineMs?: number): Promise<void>;
  /** Destroys every connection now; a pending close() then resolves. */
  forceClose(): void;
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
function answer(req: HttpRequest, metrics: WebhookMetrics): Answer {
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
  if (o.type === 'failed' && !o.allowed)
    log.info({ reason: o.reason, resource: o.resource.resource, dryRun: o.dryRun }, clipForLog(o.message));
  else if (o.type === 'http-error' || o.type === 'undecodable')
    log.info({ status: reply.status }, clipForLog(o.message));
  return { status: reply.status, contentType: reply.contentType, body: reply.body };
}

/**
 * A denial can list 100 errors of 4 KiB each (validators/common/report.ts); the client gets all of
 * it, the log only this much, so one hostile review cannot write a megabyte per line.
 */
export const MAX_LOGGED_MESSAGE_CHARS = 4096;

export function clipForLog(message: string): string {
  if (message.length <= MAX_LOGGED_MESSAGE_CHARS) return message;
  return `${message.slice(0, MAX_LOGGED_MESSAGE_CHARS)}... (${message.length - MAX_LOGGED_MESSAGE_CHARS} more characters)`;
}

/** A refused request: counted as istiod counts HTTP errors, and answered before the connection closes. */
function refuse(err: HttpProtocolError, peer: string | undefined, metrics: WebhookMetrics): Answer {
  const reply = err.tooLarge ? bodyTooLarge() : undefined;
  const status = reply?.status ?? err.status;
  const body = reply ? reply.body : `${err.message}\n`;
  metrics.record({ type: 'http-error', status, message: body.trim() });
  log.info({ status, peer }, body.trim());
  return { status, contentType: TEXT, body };
}

/** How often connection deadlines are checked: a twentieth of the shortest, within 5 ms..1 s. */
function checkInterval(l: WebhookLimits): number {
  return Math.min(1000, Math.max(5, Math.floor(Math.min(l.headersMs, l.requestMs, l.keepAliveMs) / 20)));
}

/** What the webhook listener takes from the process that hosts it. */
export interface WebhookServerDeps {
  options: { flags: Pick<ServeFlags, 'httpsAddr' | 'shutdownDuration'> };
  readiness: Readiness;
  servingCerts: Pick<ServingCertSink, 'whenAvailable' | 'onChange'>;
  metrics: Registry;
  onShutdown: OnShutdown;
}

/**
 * Starts the webhook listener on --httpsAddr once the serving certificate exists. Registers a
 * readiness condition that turns true when it listens (istiod's "config validation" probe).
 * `overrides` shorten the limits in tests (see limits.ts).
 */
export async function startWebhookServer(
  ctx: WebhookServerDeps,
  overrides: Partial<WebhookLimits> = {},
): Promise<WebhookServerHandle> {
  const addr = ctx.options.flags.httpsAddr;
  if (!addr) {
    log.info('httpsAddr is empty: the validating webhook is disabled');
    return { enabled: false, close: () => Promise.resolve(), forceClose: () => undefined };
  }
  const limits = webhookLimits(overrides);
  const ready = ctx.readiness.register(READINESS_CONDITION);
  const cert = await ctx.servingCerts.whenAvailable();
  const metrics = webhookMetrics(ctx.metrics);
  /** Every accepted TCP connection, from accept (before its handshake) to close. */
  const sockets = new Set<Socket>();
  const connections = new Set<WebhookConnection>();
  let closing: Promise<void> | undefined;
  const host = {
    limits,
    log,
    answer: (req: HttpRequest) => answer(req, metrics),
    refuse: (err: HttpProtocolError, peer: string | undefined) => refuse(err, peer, metrics),
    shuttingDown: () => closing !== undefined,
    date: httpDate,
    batch: new WriteBatch(),
  };
  const server = tls.createServer(
    { ...tlsOptions(cert), ALPNProtocols: ['http/1.1'], keepAlive: true, handshakeTimeout: limits.handshakeMs },
    (socket) => {
      const conn = new WebhookConnection(socket, host);
      connections.add(conn);
      socket.on('close', () => connections.delete(conn));
    },
  );
  const rejections = connectionRejections('webhook', limits.maxConnections, log, ctx.metrics);
  const idleClosed = idleClosedCounter(ctx.metrics);
  /** Connections closed to make room and not yet gone: they no longer count against the cap. */
  let evicting = 0;
  /**
   * At the cap, the oldest connection that owes nothing (connections is in accept order) is
   * closed for the new one: idle keep-alive connections, however many, never lock the API server
   * out. Busy connections and those still in their TLS handshake (bounded by its deadline) keep
   * their slots; when every slot is busy the new connection is refused.
   */
  const makeRoom = (): boolean => {
    for (const conn of connections) {
      if (!conn.reclaimable) continue;
      evicting++;
      conn.socket.once('close', () => evicting--);
      conn.evict();
      idleClosed.inc({ listener: 'webhook' });
      return true;
    }
    return false;
  };
  server.on('connection', (socket: Socket) => {
    if (limits.maxConnections > 0 && sockets.size - evicting >= limits.maxConnections && !makeRoom()) {
      // Before any TLS byte is read: the handshake set up for it never starts.
      socket.destroy();
      rejections.reject();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', (err: Error, socket: Socket) => {
    log.debug({ err: err.message, peer: socket.remoteAddress }, 'TLS handshake failed');
    // With a listener here Node leaves the socket to us, even after a handshake timeout.
    socket.destroy();
  });
  const unsubscribe = ctx.servingCerts.onChange((next) => {
    server.setSecureContext(tlsOptions(next));
    log.info('serving certificate renewed');
  });
  const deadlines = setInterval(() => {
    const now = performance.now();
    for (const conn of connections) conn.check(now);
  }, checkInterval(limits));
  deadlines.unref();

  // The cap is enforced above, not by Node's maxConnections, which refuses without closing idle ones.
  const { address, port } = await listen('webhook', server, addr, { logger: log, metrics: ctx.metrics });
  ready(true);

  const forceClose = () => {
    server.close();
    for (const socket of sockets) socket.destroy();
  };
  const deadline = new CloseDeadline(forceClose);
  const close = (deadlineMs = LISTENER_CLOSE_DEADLINE_MS) => {
    closing ??= new Promise<void>((resolve) => {
      unsubscribe();
      ready(false);
      server.close(() => {
        clearInterval(deadlines);
        rejections.stop();
        deadline.cancel();
        resolve();
      });
      const peer = (s: Socket) => `${s.remoteAddress}|${s.remotePort}`;
      const served = new Set<string>();
      for (const conn of connections) {
        served.add(peer(conn.socket));
        // One mid-request is answered first and then closed (see WebhookConnection).
        conn.closeIdle();
      }
      // Still in the TLS handshake: nothing asked yet, nothing to answer.
      for (const socket of sockets) if (!served.has(peer(socket))) socket.destroy();
    });
    deadline.shorten(deadlineMs);
    return closing;
  };
  // The same deadline the process drains everything else by; close()'s own default is shorter
  // than a long --shutdownDuration, and the shorter of two deadlines wins.
  ctx.onShutdown(() => close(ctx.options.flags.shutdownDuration));
  return { enabled: true, address, port, close, forceClose };
}
