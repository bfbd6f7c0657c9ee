// The request deadlines every HTTP listener keeps: node:http's (http-listener.ts) and the webhook's
// own HTTP/1.1 reader. Both are absolute from a request's first byte, so the head's must fall
// within the whole request's.

/** Deadlines of one HTTP listener, in milliseconds; tests shorten them. */
export interface HttpDeadlines {
  /** The request's head, from its first byte. */
  headersMs: number;
  /** The whole request, head and body, from its first byte. */
  requestMs: number;
  /** An idle keep-alive connection, between requests. */
  keepAliveMs: number;
}

/** Throws, naming both values, when the head deadline exceeds the request deadline. */
export function checkHttpDeadlines(deadlines: HttpDeadlines): void {
  if (deadlines.headersMs > deadlines.requestMs)
    throw new Error(
      `the head deadline (${deadlines.headersMs} ms) must not exceed the request deadline (${deadlines.requestMs} ms)`,
    );
}
