// Binding a listener, and the limits every HTTP listener keeps: how many connections it holds,
// how long a request may take to arrive, how long an idle keep-alive connection stays, how many
// requests one connection carries, and a close that drains in-flight requests up to a deadline.
// node:http servers (httpAddr, monitoringAddr) get all of them here; the webhook's TLS listener
// keeps its own deadlines (webhook/limits.ts) and takes the connection cap from here.

import * as http from 'node:http';
import type * as net from 'node:net';
import { Counter, Registry } from 'prom-client';
import { formatAddress, type ListenAddress } from '../config/address';
import { Logger, scopedLogger } from '../log/logger';
import { CloseDeadline } from './close-deadline';
import { checkHttpDeadlines, type HttpDeadlines } from './deadlines';
import { bindErrorCode, ListenError } from './listen-error';

const log = scopedLogger('server');

/**
 * Absolute time for a request head on httpAddr and monitoringAddr, from the connection's first
 * byte (or its opening): a probe or a scrape sends its head in one packet, and Prometheus's
 * default scrape_timeout is 10 s. Node's own default is 60 s.
 */
export const HTTP_HEADERS_TIMEOUT_MS = 10_000;
/** Absolute time for a whole request, head and body: debug bodies are at most 64 KiB. */
export const HTTP_REQUEST_TIMEOUT_MS = 30_000;
/**
 * How long an idle keep-alive connection stays open: istiod's IdleTimeout, and longer than
 * Prometheus's default one-minute scrape interval, so a scraper keeps its connection.
 */
export const HTTP_KEEP_ALIVE_TIMEOUT_MS = 90_000;
/**
 * Requests one connection carries before its answer says `Connection: close` (Node answers
 * requests pipelined past it with 503). A scraper reconnects every few hours at most; no
 * connection is held forever.
 */
export const HTTP_MAX_REQUESTS_PER_SOCKET = 1_000;
/**
 * Open connections per plain HTTP listener: its callers are kubelet probes, a few Prometheus
 * replicas and operators; more than this is a flood. New connections beyond it are closed at accept.
 */
export const HTTP_MAX_CONNECTIONS = 100;
/**
 * How often Node checks the head and request deadlines (its default is 30 s, which would let a
 * 10 s deadline run to 40 s).
 */
export const HTTP_DEADLINE_CHECK_INTERVAL_MS = 1_000;
/** Connections refused at a cap are logged at most once per this interval, with their count. */
export const CONNECTION_LIMIT_LOG_INTERVAL_MS = 60_000;
/**
 * How long close() lets in-flight requests finish before it destroys what is left: istiod's
 * --shutdownDuration default.
 */
export const LISTENER_CLOSE_DEADLINE_MS = 10_000;

export const METRIC_CONNECTIONS_REJECTED = 'istiod_ts_listener_connections_rejected_total';
export const METRIC_IDLE_CONNECTIONS_CLOSED = 'istiod_ts_listener_idle_connections_closed_total';

/** The limits of a node:http listener; tests shorten them. */
export interface HttpLimits extends HttpDeadlines {
  maxRequestsPerSocket: number;
  maxConnections: number;
  deadlineCheckIntervalMs: number;
}

export const HTTP_LIMITS: Readonly<HttpLimits> = {
  headersMs: HTTP_HEADERS_TIMEOUT_MS,
  requestMs: HTTP_REQUEST_TIMEOUT_MS,
  keepAliveMs: HTTP_KEEP_ALIVE_TIMEOUT_MS,
  maxRequestsPerSocket: HTTP_MAX_REQUESTS_PER_SOCKET,
  maxConnections: HTTP_MAX_CONNECTIONS,
  deadlineCheckIntervalMs: HTTP_DEADLINE_CHECK_INTERVAL_MS,
};

export interface BoundListener {
  name: string;
  address: string;
  port: number;
  /**
   * Stops accepting, closes idle keep-alive connections at once, lets requests already under way
   * finish (their answers say `Connection: close`) and closes their connections; at `deadlineMs`
   * (default LISTENER_CLOSE_DEADLINE_MS) destroys whatever is left. Resolves when every
   * connection is closed. Calling it again returns the same promise; a shorter deadline wins.
   */
  close(deadlineMs?: number): Promise<void>;
  /** Destroys every connection now; a pending close() then resolves. A closure, so it may be passed on alone. */
  forceClose?: () => void;
}

export interface ListenOptions {
  logger?: Logger;
  /** Where refused connections are counted (METRIC_CONNECTIONS_REJECTED{listener}). */
  metrics?: Registry;
  /**
   * Open connections allowed; one more is closed at accept, before any TLS work. node:http
   * servers default to HTTP_MAX_CONNECTIONS; other servers have no cap unless given one.
   */
  maxConnections?: number;
  /** node:http servers only: overrides of HTTP_LIMITS. */
  http?: Partial<HttpLimits>;
}

/** Whether `server` is a node:http server (which gets HTTP_LIMITS and the graceful close). */
function isHttpServer(server: net.Server): server is http.Server {
  return server instanceof http.Server;
}

/** Applies deadlines, keep-alive and the per-socket bound to a node:http server (Node 20 semantics). */
function applyHttpLimits(server: http.Server, limits: HttpLimits): void {
  checkHttpDeadlines(limits);
  // Both are absolute from the request's start; Node answers 408 and closes when one passes.
  server.headersTimeout = limits.headersMs;
  server.requestTimeout = limits.requestMs;
  server.keepAliveTimeout = limits.keepAliveMs;
  server.maxRequestsPerSocket = limits.maxRequestsPerSocket;
  // A createServer option in @types/node, but a property Node 20 reads when the server starts listening.
  (server as http.Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
    limits.deadlineCheckIntervalMs;
  server.maxConnections = limits.maxConnections;
}

function rejectedCounter(registry: Registry): Counter<'listener'> {
  const existing = registry.getSingleMetric(METRIC_CONNECTIONS_REJECTED);
  // A second listen() on the same registry shares the counter the first one registered.
  if (existing instanceof Counter) return existing;
  return new Counter({
    name: METRIC_CONNECTIONS_REJECTED,
    help: 'Connections closed at accept because the listener held its maximum',
    labelNames: ['listener'],
    registers: [registry],
  });
}

/** Counts and logs the connections a listener refuses at its cap; stop() ends the log timer. */
export interface ConnectionRejections {
  reject: () => void;
  stop: () => void;
}

/** Idle connections a listener closed at its cap to make room for a new one. */
export function idleClosedCounter(registry: Registry): Counter<'listener'> {
  const existing = registry.getSingleMetric(METRIC_IDLE_CONNECTIONS_CLOSED);
  if (existing instanceof Counter) return existing;
  return new Counter({
    name: METRIC_IDLE_CONNECTIONS_CLOSED,
    help: 'Idle keep-alive connections closed, oldest first, to make room for a new connection at the listener maximum',
    labelNames: ['listener'],
    registers: [registry],
  });
}

/**
 * Counts connections refused at a cap of `maxConnections` and logs the first one, then at most one
 * line per interval with how many followed: a flood must not become a log flood. Listeners that
 * enforce their own cap (the webhook's, which first closes idle connections) call reject()
 * themselves; listen() calls it on Node's 'drop'.
 */
export function connectionRejections(
  name: string,
  maxConnections: number,
  logger: Logger,
  registry: Registry | undefined,
): ConnectionRejections {
  const counter = registry ? rejectedCounter(registry) : undefined;
  let since = 0;
  let timer: NodeJS.Timeout | undefined;
  const report = () => {
    if (since === 0) {
      timer = undefined;
      return;
    }
    logger.warn(
      { listener: name, maxConnections, rejected: since, intervalMs: CONNECTION_LIMIT_LOG_INTERVAL_MS },
      'connection limit: more connections were closed at accept',
    );
    since = 0;
    timer = setTimeout(report, CONNECTION_LIMIT_LOG_INTERVAL_MS).unref();
  };
  const reject = () => {
    counter?.inc({ listener: name });
    if (timer) {
      since++;
      return;
    }
    logger.warn({ listener: name, maxConnections }, 'connection limit reached: new connections are closed at accept');
    timer = setTimeout(report, CONNECTION_LIMIT_LOG_INTERVAL_MS).unref();
  };
  return { reject, stop: () => clearTimeout(timer) };
}

/** Node refuses connections at server.maxConnections with a 'drop' event: counted and logged here. */
function reportDrops(server: net.Server, name: string, logger: Logger, registry: Registry | undefined): () => void {
  const rejections = connectionRejections(name, server.maxConnections, logger, registry);
  server.on('drop', rejections.reject);
  return rejections.stop;
}

/**
 * close() for a node:http server. Node 20's server.close() stops accepting and closes idle
 * connections, but answers requests under way with keep-alive and leaves their connections open
 * until the keep-alive timeout; here they are answered with `Connection: close` instead.
 */
function httpCloser(server: http.Server, stopReporting: () => void): Pick<BoundListener, 'close' | 'forceClose'> {
  const inFlight = new Set<http.ServerResponse>();
  const served = new WeakMap<net.Socket, number>();
  let closing: Promise<void> | undefined;
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    // Node answers the last request under maxRequestsPerSocket with `Connection: close` but leaves
    // the connection open; without keep-alive it closes the connection after the answer.
    const count = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, count);
    const max = server.maxRequestsPerSocket ?? 0;
    if (closing || (max > 0 && count >= max)) res.shouldKeepAlive = false;
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });
  const forceClose = () => {
    server.close();
    server.closeAllConnections();
  };
  const deadline = new CloseDeadline(forceClose);
  const close = (deadlineMs = LISTENER_CLOSE_DEADLINE_MS) => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => {
        deadline.cancel();
        stopReporting();
        resolve();
      });
      server.closeIdleConnections();
      for (const res of inFlight) {
        if (!res.headersSent) res.shouldKeepAlive = false;
        else {
          const socket = res.socket;
          res.once('close', () => socket?.destroySoon());
        }
      }
    });
    deadline.shorten(deadlineMs);
    return closing;
  };
  return { close, forceClose };
}

/**
 * Binds a server and logs its real address; an empty host listens on every interface. node:http
 * servers get HTTP_LIMITS (merged with `opts.http`) and a graceful close; any server gets the
 * connection cap given in `opts.maxConnections`. The fourth argument may be a logger (as before)
 * or the options.
 */
export function listen(
  name: string,
  server: net.Server,
  addr: ListenAddress,
  loggerOrOptions?: Logger | ListenOptions,
): Promise<BoundListener> {
  const opts: ListenOptions = isLogger(loggerOrOptions) ? { logger: loggerOrOptions } : (loggerOrOptions ?? {});
  const logger = opts.logger ?? log;
  const isHttp = isHttpServer(server);
  if (isHttp)
    applyHttpLimits(server, {
      ...HTTP_LIMITS,
      ...opts.http,
      ...(opts.maxConnections !== undefined ? { maxConnections: opts.maxConnections } : {}),
    });
  else if (opts.maxConnections !== undefined) server.maxConnections = opts.maxConnections;
  const stopReporting = server.maxConnections > 0 ? reportDrops(server, name, logger, opts.metrics) : () => undefined;
  const closer: Pick<BoundListener, 'close' | 'forceClose'> = isHttp
    ? httpCloser(server, stopReporting)
    : {
        close: () =>
          new Promise<void>((done) =>
            server.close(() => {
              stopReporting();
              done();
            }),
          ),
      };
  return new Promise((resolve, reject) => {
    const failed = (err: Error) =>
      reject(
        new ListenError(
          name,
          formatAddress(addr.host === '' ? '::' : addr.host, addr.port),
          bindErrorCode(err),
          err.message,
        ),
      );
    server.once('error', failed);
    const onListening = () => {
      server.off('error', failed);
      const a = server.address();
      const port = typeof a === 'object' && a ? a.port : addr.port;
      const host = typeof a === 'object' && a ? a.address : addr.host;
      const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
      logger.info({ listener: name, address, port }, 'listening');
      resolve({ name, address, port, ...closer });
    };
    if (addr.host === '') server.listen(addr.port, onListening);
    else server.listen(addr.port, addr.host, onListening);
  });
}

function isLogger(x: Logger | ListenOptions | undefined): x is Logger {
  return typeof (x as Logger | undefined)?.info === 'function';
}
