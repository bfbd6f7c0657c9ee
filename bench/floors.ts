// What the runtime costs before any of our code runs, measured in the same run as the scenario it
// is the floor of: a bare TLS socket that only counts the bytes it receives, and a bare HTTP/2
// server that answers every gRPC call with canned bytes. A target below one of these cannot be
// met by anything the server does. Both serve the xDS tests' throwaway openssl identity.

import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as tls from 'node:tls';
import type { TestPki } from '../test/support/tls';

export interface FloorServer {
  port: number;
  close(): void;
}

/**
 * A TLS server that reads a 4-byte count and that many bytes, then answers one byte and closes:
 * the least a Node server can spend to receive a request of that size.
 */
export async function rawTlsCounter(pki: TestPki): Promise<FloorServer> {
  const server = tls.createServer({ cert: pki.certPem, key: pki.keyPem, minVersion: 'TLSv1.3' }, (socket) => {
    let expected = -1;
    let received = 0;
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      // The client writes count and bytes at once, so the first chunk (a whole TLS record) has the count.
      if (expected < 0) expected = chunk.readUInt32BE(0) + 4;
      received += chunk.length;
      if (received >= expected) socket.end('k');
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

/**
 * An HTTP/2 TLS server that answers every call, once its request has arrived, with `message` as
 * one gRPC frame and grpc-status 0, doing nothing else: the transport under a unary gRPC service.
 */
export async function cannedGrpcServer(pki: TestPki, message: Buffer): Promise<FloorServer> {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  const server = http2.createSecureServer({ cert: pki.certPem, key: pki.keyPem, minVersion: 'TLSv1.3' });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  server.on('stream', (stream) => {
    stream.on('error', () => {});
    stream.on('data', () => {});
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(frame);
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      for (const s of sessions) s.destroy();
      server.close();
    },
  };
}
