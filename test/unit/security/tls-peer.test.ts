import * as tls from 'node:tls';
import { MAX_CALL_WRAPPERS, refusedPeerCertificate } from '../../../src/security/tls-peer';

/** A TLS socket as grpc-js holds it after a handshake that refused the client certificate. */
function refusingSocket(raw: Buffer | undefined): tls.TLSSocket {
  const socket = Object.create(tls.TLSSocket.prototype) as tls.TLSSocket;
  Object.defineProperty(socket, 'authorized', { value: false });
  Object.defineProperty(socket, 'authorizationError', { value: new Error('CERT_HAS_EXPIRED') });
  Object.defineProperty(socket, 'getPeerCertificate', { value: () => (raw ? { raw } : {}) });
  return socket;
}

function wrapped(socket: tls.TLSSocket, layers: number): unknown {
  let call: unknown = { stream: { session: { socket } } };
  for (let i = 0; i < layers; i++) call = i % 2 === 0 ? { nextCall: call } : { call };
  return call;
}

describe('the client certificate TLS refused', () => {
  test('is found through the call wrappers grpc-js puts around the stream, with the TLS verdict', () => {
    expect(refusedPeerCertificate(wrapped(refusingSocket(Buffer.from('der')), 2))).toEqual({
      raw: Buffer.from('der'),
      error: 'CERT_HAS_EXPIRED',
    });
  });

  test('is absent when the client sent no certificate', () => {
    expect(refusedPeerCertificate(wrapped(refusingSocket(undefined), 2))).toBeUndefined();
  });

  test(`the walk stops after ${MAX_CALL_WRAPPERS} wrappers`, () => {
    const socket = refusingSocket(Buffer.from('der'));
    expect(refusedPeerCertificate(wrapped(socket, MAX_CALL_WRAPPERS - 1))).toBeDefined();
    expect(refusedPeerCertificate(wrapped(socket, MAX_CALL_WRAPPERS))).toBeUndefined();
  });
});
