// A client certificate that TLS refused. grpc-js accepts the handshake (client certificates are
// optional here) but then reports an empty auth context, so an expired or foreign certificate
// would look like no credentials at all. The TLS socket still knows what was sent and why it was
// refused; grpc-js exposes it on no public API, so it is found through the call's wrappers.

import * as tls from 'node:tls';

/**
 * grpc-js wraps a unary call in two layers (the surface call, then the intercepting call) before
 * the one holding the HTTP/2 stream; interceptors add one each. The walk stops after this many.
 */
export const MAX_CALL_WRAPPERS = 8;

export interface RefusedPeerCertificate {
  /** DER of the leaf the client sent. */
  raw: Buffer;
  /** OpenSSL's verdict, e.g. CERT_HAS_EXPIRED. */
  error: string;
}

interface CallLayer {
  call?: unknown;
  nextCall?: unknown;
  stream?: { session?: { socket?: unknown } };
}

/** The certificate a client sent and TLS refused, or undefined (none sent, accepted, or not found). */
export function refusedPeerCertificate(call: unknown): RefusedPeerCertificate | undefined {
  let layer: unknown = call;
  for (let i = 0; i < MAX_CALL_WRAPPERS && layer !== null && typeof layer === 'object'; i++) {
    const { call: inner, nextCall, stream } = layer as CallLayer;
    const socket = stream?.session?.socket;
    if (socket instanceof tls.TLSSocket) {
      if (socket.authorized) return undefined;
      const peer = socket.getPeerCertificate() as Partial<tls.PeerCertificate>;
      if (!peer.raw) return undefined;
      // Typed as an Error, but Node sets OpenSSL's code string (e.g. CERT_HAS_EXPIRED).
      const error = socket.authorizationError as Error | string | undefined;
      return { raw: peer.raw, error: error instanceof Error ? error.message : (error ?? 'unknown') };
    }
    layer = nextCall ?? inner;
  }
  return undefined;
}
