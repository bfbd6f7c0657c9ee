// One webhook connection: requests read in order by the strict HTTP/1.1 reader, answers written
// with backpressure, and the deadlines that bound how long one client holds the connection.
//
// Deadlines are absolute: a request head must be complete within headersMs of its first byte and
// the whole request within requestMs, however steadily bytes trickle in. The server checks every
// connection's deadline on a timer (see server.ts) instead of arming a timer per request.

import type { TLSSocket } from 'node:tls';
import type { Logger } from '../log/logger';
import { MAX_REQUEST_BODY_BYTES } from './admission';
import { formatResponse, HttpProtocolError, HttpRequest, isProtocolError, RequestReader } from './http1';
import type { WebhookLimits } from './limits';

const TEXT = 'text/plain; charset=utf-8';

export interface Answer {
  status: number;
  contentType: string;
  body: string;
}

export interface ConnectionHost {
  limits: WebhookLimits;
  log: Logger;
  /** The answer to one request. */
  answer(req: HttpRequest): Answer;
  /** The answer to a request the reader refused; the connection closes after it. */
  refuse(err: HttpProtocolError, peer: string | undefined): Answer;
  /** True once the listener is closing: the next answer closes the connection. */
  shuttingDown(): boolean;
  /** The Date header value. */
  date(): string;
  /** Where answers on a kept-alive connection wait to be sent with others (see WriteBatch). */
  batch: WriteBatch;
}

/** Most answers held back in one write batch; the next answer sends the batch first. */
export const MAX_BATCHED_ANSWERS = 16;
/**
 * Longest an answer is held back for the rest of its batch, checked as the next answer is
 * written: one review, however long it takes, is the most any held answer waits beyond this.
 */
export const MAX_BATCH_HOLD_MS = 1;

/**
 * Answers written while the event loop reads one round of ready connections, sent together after
 * it. Sending an answer wakes its reader, and on a busy server each of those wake-ups cost more
 * than the review itself (on two cores, sending the answers one by one between reviews doubled the
 * event loop's CPU per review and the callers' too); a batch of answers sent back to back costs one.
 * Each socket is corked at its first answer in the batch; the batch is uncorked in the check phase,
 * right after the round, or sooner when it reaches MAX_BATCHED_ANSWERS or MAX_BATCH_HOLD_MS.
 */
export class WriteBatch {
  private sockets: TLSSocket[] = [];
  private openedAt = 0;
  private scheduled = false;
  private readonly onCheck = (): void => {
    this.scheduled = false;
    this.flush();
  };

  /** Holds what is written to `socket` until the batch is sent. */
  hold(socket: TLSSocket): void {
    if (socket.writableCorked > 0) return;
    const now = performance.now();
    if (
      this.sockets.length >= MAX_BATCHED_ANSWERS ||
      (this.sockets.length > 0 && now - this.openedAt > MAX_BATCH_HOLD_MS)
    )
      this.flush();
    if (this.sockets.length === 0) {
      this.openedAt = now;
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.onCheck);
      }
    }
    this.sockets.push(socket);
    socket.cork();
  }

  /** Sends every held answer now. */
  flush(): void {
    const { sockets } = this;
    if (sockets.length === 0) return;
    this.sockets = [];
    // A socket ended or destroyed meanwhile is already uncorked; uncork is then a no-op.
    for (const socket of sockets) socket.uncork();
  }
}

export class WebhookConnection {
  private readonly reader = new RequestReader(MAX_REQUEST_BODY_BYTES);
  /** When the request being read began (its first byte, or the connection's start). */
  private requestStart: number;
  private lastDataAt: number;
  /** Answers written but not yet handed to the socket: requests the client has not had answered. */
  private unflushed = 0;
  private answered = 0;
  /** The socket's buffer is full: reading and answering wait for 'drain'. */
  private blocked = false;
  /** The last answer is written (or the connection is being closed); later bytes are ignored. */
  private ending = false;
  /** performance.now() at which check() acts. */
  private deadline: number;
  private readonly flushed = () => {
    this.unflushed--;
  };

  constructor(
    readonly socket: TLSSocket,
    private readonly host: ConnectionHost,
  ) {
    const now = performance.now();
    this.requestStart = this.lastDataAt = now;
    this.deadline = now + host.limits.headersMs;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    // One listener for the connection's life, however many answers wait for it.
    socket.on('drain', () => this.onDrain());
    socket.on('error', (err: Error) =>
      host.log.debug({ err: err.message, peer: socket.remoteAddress }, 'webhook connection failed'),
    );
  }

  /** Nothing of a request has arrived since the last answer. */
  get idle(): boolean {
    return this.reader.idle && !this.ending;
  }

  /** Called by the server's timer: acts on a passed deadline. */
  check(now: number): void {
    if (now < this.deadline) return;
    if (this.ending || this.blocked) {
      // A peer that neither reads its answers nor closes its side.
      this.socket.destroy();
    } else if (this.reader.idle) {
      // Idle keep-alive, or a connection that never sent a request: closed without an answer.
      this.socket.destroy();
    } else {
      this.end(formatResponse(408, TEXT, 'request not received in time\n', { close: true, date: this.host.date() }));
    }
  }

  /**
   * Nothing is owed either way: no request under way, every answer handed to the socket, not
   * closing. Such a connection may be closed to make room at the cap without losing a review.
   */
  get reclaimable(): boolean {
    return this.idle && !this.blocked && this.unflushed === 0;
  }

  /**
   * Closes a reclaimable connection to make room for a new one: TLS close_notify and FIN, then the
   * socket is gone at once (an idle peer owes nothing, so there is no linger).
   */
  evict(): void {
    this.ending = true;
    this.socket.end(() => this.socket.destroy());
  }

  /** Closes an idle connection now (the listener is closing). */
  closeIdle(): void {
    if (this.idle) this.end();
  }

  private onData(chunk: Buffer): void {
    if (this.ending) return;
    const now = performance.now();
    // A connection's first request is timed from the end of the handshake, so silence before
    // its first byte counts too.
    if (this.reader.idle && this.answered > 0) this.requestStart = now;
    this.lastDataAt = now;
    this.reader.push(chunk);
    this.process();
  }

  private onDrain(): void {
    if (!this.blocked || this.ending) return;
    this.blocked = false;
    this.socket.resume();
    this.process();
  }

  /** Answers every complete request in order, until the socket's buffer is full. */
  private process(): void {
    const { limits } = this.host;
    while (!this.blocked && !this.ending) {
      const next = this.reader.next();
      if (next === undefined) break;
      if (isProtocolError(next)) {
        this.endWith(this.host.refuse(next, this.socket.remoteAddress));
        return;
      }
      if (this.unflushed >= limits.maxPipelined) {
        const message = `more than ${limits.maxPipelined} requests sent without reading their answers; send one at a time`;
        this.host.log.info({ peer: this.socket.remoteAddress, limit: limits.maxPipelined }, message);
        this.endWith({ status: 429, contentType: TEXT, body: `${message}\n` });
        return;
      }
      const reply = this.host.answer(next);
      this.answered++;
      if (!next.keepAlive || this.answered >= limits.maxRequestsPerConnection || this.host.shuttingDown()) {
        this.endWith(reply);
        return;
      }
      this.unflushed++;
      this.host.batch.hold(this.socket);
      this.socket.write(
        formatResponse(reply.status, reply.contentType, reply.body, { close: false, date: this.host.date() }),
        this.flushed,
      );
      // Whatever is left in the reader began arriving by the last chunk.
      this.requestStart = this.lastDataAt;
      if (this.socket.writableNeedDrain) {
        // The client is not reading: stop reading its requests too, so nothing piles up here.
        this.blocked = true;
        this.socket.pause();
        this.deadline = performance.now() + limits.requestMs;
        return;
      }
    }
    if (this.ending || this.blocked) return;
    if (this.reader.idle) this.deadline = performance.now() + limits.keepAliveMs;
    else this.deadline = this.requestStart + (this.reader.receivingBody ? limits.requestMs : limits.headersMs);
  }

  private endWith(a: Answer): void {
    this.end(formatResponse(a.status, a.contentType, a.body, { close: true, date: this.host.date() }));
  }

  /**
   * Writes the last bytes and half-closes. A peer that has not closed its side within requestMs
   * (it is not reading) or lingerMs after the bytes left is destroyed by check().
   */
  private end(last?: Buffer): void {
    if (this.ending) return;
    this.ending = true;
    this.deadline = performance.now() + this.host.limits.requestMs;
    this.socket.resume();
    const flushed = () => {
      this.deadline = Math.min(this.deadline, performance.now() + this.host.limits.lingerMs);
    };
    if (last) this.socket.end(last, flushed);
    else this.socket.end(flushed);
  }
}
