// The plain HTTP listeners' handlers: httpAddr (/ready, /live, /debug/) and monitoringAddr (/metrics,
// /version). Their deadlines, connection cap and close are in net/http-listener.ts.

import type * as http from 'node:http';
import { isIP } from 'node:net';
import type { Registry } from 'prom-client';
import type { DebugRequest } from '../contract/host';
import { errorMessage } from '../log/error-message';
import type { DebugRouter } from './debug';
import type { LivenessStatus } from './liveness';
import type { ReadinessTracker } from './readiness';
import { versionInfo } from './version';

/** Debug request bodies are tiny (a log level); anything larger is refused. */
export const MAX_DEBUG_BODY_BYTES = 64 * 1024;

function send(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  contentType?: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body, null, 2) + '\n';
  res.writeHead(status, {
    ...headers,
    'content-type': contentType ?? (typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json'),
  });
  res.end(text);
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (a === '::1') return true;
  return isIP(a) === 4 && a.startsWith('127.');
}

function readBody(req: http.IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new Error(`request body is larger than ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The liveness probe's path (the chart's livenessProbe asks it). */
export const LIVE_PATH = '/live';

export interface HttpHandlers {
  readiness: ReadinessTracker;
  /** Answers /live: 200 while the event loop turns, 503 once it has been stuck (liveness.ts). */
  liveness: { status(): LivenessStatus };
  /** Absent when ENABLE_DEBUG_ON_HTTP is false: /debug/ is then not found here. */
  debug: DebugRouter | undefined;
  allowRemoteDebug: boolean;
}

function isDebugPath(url: URL): boolean {
  return url.pathname === '/debug' || url.pathname.startsWith('/debug/');
}

/** Answers a /debug/ request from the router, on either listener. */
function serveDebug(debug: DebugRouter, req: http.IncomingMessage, res: http.ServerResponse, url: URL): void {
  const name = url.pathname.slice('/debug/'.length);
  readBody(req, MAX_DEBUG_BODY_BYTES)
    .then((body) => {
      const dreq: DebugRequest = { path: url.pathname, query: url.searchParams, method: req.method ?? 'GET', body };
      return debug.handle(name, dreq);
    })
    .then((out) => send(res, out.status ?? 200, out.body, out.contentType, out.headers))
    .catch((err: unknown) => send(res, 400, { error: errorMessage(err) }));
}

/** /ready, /live and /debug/ on httpAddr. */
export function httpHandler(h: HttpHandlers): http.RequestListener {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === LIVE_PATH) {
      const { live, lagMs } = h.liveness.status();
      if (live) send(res, 200, 'live\n');
      else send(res, 503, `not live: the event loop has not turned for ${Math.round(lagMs)} ms\n`);
      return;
    }
    if (url.pathname === '/ready') {
      const missing = h.readiness.describeNotReady();
      if (missing.length === 0) send(res, 200, 'ready\n');
      else send(res, 503, `not ready: ${missing.join(', ')}\n`);
      return;
    }
    if (h.debug && isDebugPath(url)) {
      if (!h.allowRemoteDebug && !isLoopback(req.socket.remoteAddress)) {
        // Debug pages show the mesh's configuration; by default only local callers see them.
        send(res, 403, {
          error: 'debug endpoints answer only loopback callers; start with --debugAllowRemote to change that',
        });
        return;
      }
      serveDebug(h.debug, req, res, url);
      return;
    }
    send(res, 404, 'not found; try /ready, /live or /debug/\n');
  };
}

/** Whether a monitoring-port caller may read /debug/, and if not what it is told (debug-access.ts). */
export type DebugAccess = { allowed: true } | { allowed: false; status: 401 | 403 | 503; message: string };

/** /debug/ on monitoringAddr: the router and who may read it (debug-access.ts). */
export interface MonitoringDebug {
  router: DebugRouter;
  access: { check(req: http.IncomingMessage, res: http.ServerResponse): Promise<DebugAccess> };
}

/** /metrics and /version on monitoringAddr, and /debug/ with istiod's authentication rules when given. */
export function monitoringHandler(registry: Registry, debug?: MonitoringDebug): http.RequestListener {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/metrics') {
      registry
        .metrics()
        .then((text) => send(res, 200, text, registry.contentType))
        .catch((err: unknown) => send(res, 500, `metrics failed: ${errorMessage(err)}\n`));
      return;
    }
    if (url.pathname === '/version') {
      send(res, 200, versionInfo());
      return;
    }
    if (debug && isDebugPath(url)) {
      debug.access
        .check(req, res)
        .then((access) => {
          if (access.allowed) serveDebug(debug.router, req, res, url);
          else send(res, access.status, { error: access.message });
        })
        .catch((err: unknown) => send(res, 500, { error: `debug access check failed: ${errorMessage(err)}` }));
      return;
    }
    send(res, 404, 'not found; try /metrics or /version\n');
  };
}

// Binding and the listener limits live in net/http-listener.ts; re-exported for existing callers.
export { listen, type BoundListener, type ListenOptions } from '../net/http-listener';
