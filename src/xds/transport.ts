// The HTTP/2 stream under a grpc-js server call. grpc-js's write callback fires only once a
// message's last byte has passed HTTP/2 flow control and been written to the connection (measured
// on grpc-js 1.14 / Node 20: a client that stops reading leaves the callback pending after the
// first 64 KiB window, with the rest queued in the http2 stream). It offers no way to see progress
// within a message, nor to reset a stream; both are needed to cut a client that stopped reading,
// so they are reached here, behind one small interface, and pinned by a test.

import * as http2 from 'node:http2';
import * as tls from 'node:tls';

/** grpc-js wraps the http2 stream in a chain of intercepting calls; it is one or two links deep. */
const MAX_CALL_CHAIN = 8;

export interface CallTransport {
  /** Bytes the call's connection has written to its socket so far. */
  bytesWritten(): number | undefined;
  /** Resets the stream (RST_STREAM CANCEL): the bytes queued for it are dropped at once. */
  cancel(): void;
}

interface StreamLike {
  close(code?: number): void;
  closed: boolean;
  destroyed: boolean;
  session?: { socket?: { bytesWritten?: unknown } } | undefined;
}

function isStream(v: unknown): v is StreamLike {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Partial<StreamLike> & { rstCode?: unknown };
  return typeof s.close === 'function' && typeof s.closed === 'boolean' && 'rstCode' in s && 'session' in s;
}

function findStream(call: object): StreamLike | undefined {
  let link: unknown = (call as { call?: unknown }).call;
  for (let i = 0; i < MAX_CALL_CHAIN && typeof link === 'object' && link !== null; i++) {
    const stream = (link as { stream?: unknown }).stream;
    if (isStream(stream)) return stream;
    link = (link as { nextCall?: unknown }).nextCall;
  }
  return undefined;
}

/** The transport of a grpc-js server call, or undefined if grpc-js no longer has this shape. */
export function callTransport(call: object): CallTransport | undefined {
  const stream = findStream(call);
  return stream ? streamTransport(stream) : undefined;
}

/**
 * Whether a server call came over TLS. grpc-js's auth context reports TLS only when a client
 * certificate was verified, so a bearer-token caller over TLS would look like plaintext there.
 */
export function callEncrypted(call: object): boolean {
  return findStream(call)?.session?.socket instanceof tls.TLSSocket;
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
