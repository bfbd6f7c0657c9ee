// The HTTP/2 stream under a grpc-js server call. grpc-js's write callback fires only once a
// message's last byte has passed HTTP/2 flow control and been written to the connection (measured
// on grpc-js 1.14 / Node 20: a client that stops reading leaves the callback pending after the
// first 64 KiB window, with the rest queued in the http2 stream). It offers no way to see progress
// within a message, nor to reset a stream; both are needed to cut a client that stopped reading,
// so they are reached here, behind one small interface. grpc-js is pinned to an exact version
// (package.json); test/integration/xds/grpc-canary.test.ts drives a real call through every
// reach and fails when its shape changes, and each caller reports a lost reach (hooks.ts) and
// falls back to grpc-js's public path.

import * as http2 from 'node:http2';
import type { MessageFramer } from '../wire/request-stream';

/** grpc-js wraps the http2 stream in a chain of intercepting calls; it is one or two links deep. */
const MAX_CALL_CHAIN = 8;

export interface CallTransport {
  /** Bytes the call's connection has written to its socket so far. */
  bytesWritten(): number | undefined;
  /** Resets the stream (RST_STREAM CANCEL): the bytes queued for it are dropped at once. */
  cancel(): void;
}

/**
 * A direct write hands the HTTP/2 stream its message this many bytes at a time (views of the
 * shared body, nothing copied), the next slice as one is taken. Queued whole, a 28 MB message
 * lets nghttp2 send as much as the client's window allows in one go (ztunnel's hyper client
 * opens 2 MiB per stream and 5 MiB per connection), and node:tls encrypts each such burst into a
 * buffer of its own that the connection keeps. In slices, what a connection holds encrypted is
 * bounded by the slices queued, at no extra CPU (BENCHMARKS.md, "Figures behind the code's
 * comments").
 */
export const DIRECT_WRITE_SLICE_BYTES = 256 * 1024;
/** Slices queued on the stream at once: the next is there while one is being sent. */
export const DIRECT_WRITE_SLICES_QUEUED = 2;

/**
 * The receive windows a Delta stream's connection advertises, per stream and for the whole
 * connection. node:http2 (so grpc-js) opens 64 KiB of each and grpc-js has no setting for them: a
 * reconnecting ztunnel's first request lists the version of every resource it holds (5.7 MB at
 * 100k workloads), and at 64 KiB it can send only a window's worth before it waits for the
 * server's WINDOW_UPDATE, many times over for one request. istiod's gRPC (Go) grows its
 * windows toward 16 MiB as it measures the connection; ztunnel's own client opens 2 MiB per
 * stream and 5 MiB per connection. With these, a reconnect's request arrives without waiting for
 * a WINDOW_UPDATE every window's worth (the unchanged-reconnect row of `npm run bench xds`). They
 * also bound what a client can make the server hold unread: a connection's bytes in flight stay
 * under the second.
 */
export const STREAM_RECEIVE_WINDOW_BYTES = 1024 * 1024;
export const CONNECTION_RECEIVE_WINDOW_BYTES = 4 * 1024 * 1024;

/** Writes on the HTTP/2 stream under a call, past grpc-js. */
export interface MessageWriter {
  /**
   * Writes one gRPC message, already framed and given as pieces, on the HTTP/2 stream itself.
   * grpc-js would copy a message into a new buffer of its own per call (17-28 MB per full sync
   * at 100k workloads, and the garbage collections its external memory triggers); here the pieces
   * are queued as they are (DIRECT_WRITE_SLICE_BYTES at a time), shared with every other stream
   * writing them. `done` is called as grpc-js's write callback is: when the last byte has passed
   * flow control into the connection, or with the error. The response headers must have been sent
   * (grpc-js's sendMetadata).
   */
  writeMessage(pieces: readonly Buffer[], done: (err?: Error | null) => void): void;
}

/** The message writer of a grpc-js server call, or undefined if grpc-js no longer has this shape. */
export function callMessageWriter(call: object): MessageWriter | undefined {
  const stream = findStream(call);
  if (!stream || !isWritable(stream)) return undefined;
  return {
    writeMessage: (pieces, done) => {
      const slices: Buffer[] = [];
      for (const p of pieces)
        for (let at = 0; at < p.length; at += DIRECT_WRITE_SLICE_BYTES)
          slices.push(p.subarray(at, at + DIRECT_WRITE_SLICE_BYTES));
      let next = 0;
      let inFlight = 0;
      let failed = false;
      const pump = (): void => {
        while (inFlight < DIRECT_WRITE_SLICES_QUEUED && next < slices.length) {
          const slice = slices[next++];
          if (!slice) break;
          inFlight++;
          stream.write(slice, (err) => {
            inFlight--;
            if (failed) return;
            if (err) {
              failed = true;
              done(err);
              return;
            }
            if (next >= slices.length && inFlight === 0) done();
            else pump();
          });
        }
      };
      pump();
    },
  };
}

interface StreamLike {
  close(code?: number): void;
  write?: unknown;
  closed: boolean;
  destroyed: boolean;
  session?: { socket?: { bytesWritten?: unknown } } | undefined;
}

function isStream(v: unknown): v is StreamLike {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Partial<StreamLike> & { rstCode?: unknown };
  return typeof s.close === 'function' && typeof s.closed === 'boolean' && 'rstCode' in s && 'session' in s;
}

interface WritableStream {
  write(chunk: Buffer, cb?: (err?: Error | null) => void): boolean;
}

function isWritable(s: StreamLike): s is StreamLike & WritableStream {
  return typeof s.write === 'function';
}

/** The link of grpc-js's call chain that holds the HTTP/2 stream (and the call's message decoder). */
function findStreamLink(call: object): { stream: StreamLike; decoder?: unknown } | undefined {
  let link: unknown = (call as { call?: unknown }).call;
  for (let i = 0; i < MAX_CALL_CHAIN && typeof link === 'object' && link !== null; i++) {
    const stream = (link as { stream?: unknown }).stream;
    if (isStream(stream)) return link as { stream: StreamLike; decoder?: unknown };
    link = (link as { nextCall?: unknown }).nextCall;
  }
  return undefined;
}

function findStream(call: object): StreamLike | undefined {
  return findStreamLink(call)?.stream;
}

/** grpc-js's StreamDecoder (stream-decoder.ts) before it has been given a byte. */
interface FreshDecoder {
  write(data: Buffer): Buffer[];
  maxReadMessageLength: number;
}

function isFreshDecoder(d: unknown): d is FreshDecoder {
  if (typeof d !== 'object' || d === null) return false;
  const s = d as Partial<FreshDecoder> & { readState?: unknown; readPartialMessage?: unknown };
  return (
    typeof s.write === 'function' &&
    typeof s.maxReadMessageLength === 'number' &&
    s.readState === 0 &&
    Array.isArray(s.readPartialMessage) &&
    s.readPartialMessage.length === 0
  );
}

/** The http2 stream's side of grpc-js's DATA path: its one 'data' listener calls handleDataFrame. */
interface DataPath {
  stream: { listeners(event: 'data'): unknown[]; removeListener(event: 'data', fn: never): unknown };
  handleDataFrame(data: Buffer): void;
}

function hasDataPath(link: { stream: unknown }): link is { stream: unknown } & DataPath {
  const l = link as { stream: Partial<DataPath['stream']>; handleDataFrame?: unknown };
  return (
    typeof l.handleDataFrame === 'function' &&
    typeof l.stream.listeners === 'function' &&
    typeof l.stream.removeListener === 'function' &&
    l.stream.listeners('data').length === 1
  );
}

/**
 * Puts `make(max_receive_message_length)` in place of grpc-js's message decoder for a server call.
 * grpc-js hands its decoder every DATA chunk of the request stream and queues the messages it
 * returns (server-interceptors.ts handleDataFrame). Here the framer reads the chunks from the http2
 * stream itself, and grpc-js's handleDataFrame runs only when a chunk completed a message (or the
 * framer threw, which grpc-js turns into RESOURCE_EXHAUSTED as before), its decoder handing over
 * what the framer made, so grpc-js's per-chunk work (a trace string built for every DATA frame, the
 * cancellation check) runs once per message, not once per chunk of a multi-megabyte request. Only
 * before the decoder has seen a byte: grpc-js pauses the stream until the handler reads, so a
 * handler that calls this first replaces it for the whole call. If the stream's data path has
 * another shape, the framer is only put in the decoder's place; false (grpc-js's decoder stays) if
 * grpc-js no longer has this shape at all.
 */
export function replaceMessageDecoder(call: object, make: (maxLength: number) => MessageFramer): boolean {
  const link = findStreamLink(call);
  const decoder = link?.decoder;
  if (!link || !isFreshDecoder(decoder)) return false;
  const framer = make(decoder.maxReadMessageLength);
  if (!hasDataPath(link)) {
    link.decoder = framer;
    return true;
  }
  let ready: Buffer[] = [];
  let failure: { error: unknown } | undefined;
  link.decoder = {
    write: (): Buffer[] => {
      if (failure) {
        const { error } = failure;
        failure = undefined;
        throw error;
      }
      const out = ready;
      ready = [];
      return out;
    },
  };
  const [grpcListener] = link.stream.listeners('data');
  link.stream.removeListener('data', grpcListener as never);
  const stream = link.stream as unknown as { on(event: 'data', fn: (chunk: Buffer) => void): void };
  stream.on('data', (chunk: Buffer) => {
    try {
      const out = framer.write(chunk);
      if (out.length === 0) return;
      for (const m of out) ready.push(m);
    } catch (error) {
      failure = { error };
    }
    link.handleDataFrame(chunk);
  });
  return true;
}

/** The node:http2 session calls that widen its receive windows (public Node API). */
interface WindowedSession {
  closed: boolean;
  destroyed: boolean;
  setLocalWindowSize(size: number): void;
  settings(settings: http2.Settings): void;
}

function isWindowedSession(v: unknown): v is WindowedSession {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Partial<WindowedSession>;
  return typeof s.setLocalWindowSize === 'function' && typeof s.settings === 'function';
}

/** Sessions whose windows were widened: the SETTINGS frame goes out once per connection. */
const widened = new WeakSet<object>();

/**
 * Widens the receive windows of the connection a server call came on to
 * STREAM_RECEIVE_WINDOW_BYTES per stream (a SETTINGS frame, which also applies to the streams
 * already open) and CONNECTION_RECEIVE_WINDOW_BYTES for the connection (a WINDOW_UPDATE), once
 * per connection. The first call's client may already have sent its first 64 KiB; the rest of
 * its request flows under the wider windows. 'closing' when the session is closing (nothing to
 * widen); 'unreachable' when grpc-js no longer has this shape (the windows stay as they were).
 */
export function widenReceiveWindows(call: object): 'widened' | 'closing' | 'unreachable' {
  const session = findStream(call)?.session;
  if (!isWindowedSession(session)) return 'unreachable';
  if (session.closed || session.destroyed) return 'closing';
  if (widened.has(session)) return 'widened';
  widened.add(session);
  session.setLocalWindowSize(CONNECTION_RECEIVE_WINDOW_BYTES);
  session.settings({ initialWindowSize: STREAM_RECEIVE_WINDOW_BYTES });
  return 'widened';
}

/** The transport of a grpc-js server call, or undefined if grpc-js no longer has this shape. */
export function callTransport(call: object): CallTransport | undefined {
  const stream = findStream(call);
  return stream ? streamTransport(stream) : undefined;
}

function streamTransport(stream: StreamLike): CallTransport {
  return {
    bytesWritten: () => {
      const n = stream.session?.socket?.bytesWritten;
      return typeof n === 'number' ? n : undefined;
    },
    cancel: () => {
      if (!stream.closed && !stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
    },
  };
}
