// How long, how many and how much one client may hold of the webhook listener (:15017), which
// every pod in a cluster can reach. Its one real caller, the Kubernetes API server, waits at most
// 30 s for a webhook (timeoutSeconds is capped at 30; the chart sets 10), sends each review in one
// go over HTTP/1.1 keep-alive and never pipelines; everything here is generous for it and
// finite for everyone else.

import { checkHttpDeadlines, type HttpDeadlines } from '../net/deadlines';
import { HTTP_KEEP_ALIVE_TIMEOUT_MS } from '../net/http-listener';

/**
 * Absolute time for a request head, from its first byte (or from the end of the TLS handshake for
 * a connection's first request): istiod's ReadHeaderTimeout. Trickling header lines does not
 * extend it.
 */
export const HEADERS_TIMEOUT_MS = 30_000;
/**
 * Absolute time for a whole request, head and body, from its first byte. The API server has
 * given up on a review after 30 s, so an answer later than that reaches no one.
 */
export const REQUEST_TIMEOUT_MS = 30_000;
/** How long a keep-alive connection may sit idle between requests: istiod's IdleTimeout, as on every HTTP listener. */
export const KEEP_ALIVE_TIMEOUT_MS = HTTP_KEEP_ALIVE_TIMEOUT_MS;
/**
 * Time for the TLS handshake. Node's default is 120 s; the API server's Go client gives up on a
 * handshake after 10 s.
 */
export const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;
/**
 * After the last answer on a connection is flushed and the connection half-closed, how long the
 * peer has to close its side before it is destroyed. Closing at once could reset the connection
 * before the peer has read the answer; Go's server waits 500 ms for the same reason.
 */
export const CLOSE_LINGER_MS = 500;
/**
 * Open connections, counted from TCP accept. At the cap the oldest idle connection is closed for
 * a new one (server.ts); only when every connection is busy is the new one closed, before any TLS
 * work. The API server opens about one connection per concurrent review, and its default
 * in-flight limits (400 + 200 per replica) keep three replicas well below this; each idle TLS
 * connection costs tens of KB, so the cap bounds them to tens of MB.
 */
export const WEBHOOK_MAX_CONNECTIONS = 1_024;
/**
 * Requests one connection carries; the last is answered with `Connection: close`. kube-proxy
 * balances connections, not requests, so without this a long-lived API server connection would
 * never reach a replica started after it (as istiod bounds xDS connection age for the same reason).
 * At 10 reviews per second that is a new connection every quarter of an hour.
 */
export const MAX_REQUESTS_PER_CONNECTION = 10_000;
/**
 * Requests a client may have sent without its answers having left for the socket. The API server
 * sends one review at a time per connection; beyond this a client is answered 429 and closed,
 * rather than making the server answer an unbounded batch in one go.
 */
export const MAX_PIPELINED_REQUESTS = 32;

/** The webhook listener's limits; tests shorten them. */
export interface WebhookLimits extends HttpDeadlines {
  handshakeMs: number;
  lingerMs: number;
  maxConnections: number;
  maxRequestsPerConnection: number;
  maxPipelined: number;
}

export const WEBHOOK_LIMITS: Readonly<WebhookLimits> = {
  headersMs: HEADERS_TIMEOUT_MS,
  requestMs: REQUEST_TIMEOUT_MS,
  keepAliveMs: KEEP_ALIVE_TIMEOUT_MS,
  handshakeMs: TLS_HANDSHAKE_TIMEOUT_MS,
  lingerMs: CLOSE_LINGER_MS,
  maxConnections: WEBHOOK_MAX_CONNECTIONS,
  maxRequestsPerConnection: MAX_REQUESTS_PER_CONNECTION,
  maxPipelined: MAX_PIPELINED_REQUESTS,
};

/**
 * The defaults with `overrides` applied. A request deadline left out follows a given head
 * deadline (they are equal by default), so shortening the head deadline alone shortens both.
 */
export function webhookLimits(overrides: Partial<WebhookLimits> = {}): WebhookLimits {
  const limits = {
    ...WEBHOOK_LIMITS,
    ...overrides,
    requestMs: overrides.requestMs ?? overrides.headersMs ?? REQUEST_TIMEOUT_MS,
  };
  checkHttpDeadlines(limits);
  return limits;
}
