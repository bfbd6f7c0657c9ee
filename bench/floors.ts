// What the runtime costs before any of our code runs, measured in the same run as the scenario it
// is the floor of: a bare TLS socket that only counts the bytes it receives, and a bare HTTP/2
// server that answers every gRPC call with canned bytes. A target below one of these cannot be
// met by anything the server does. Both serve the xDS tests' throwaway openssl identity.

import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as tls from 'node:tls';
import { CONNECTION_RECEIVE_WINDOW_BYTES, STREAM_RECEIVE_WINDOW_BYTES } from '../src/xds/grpc/transport';
import type { TestPki } from '../test/support/tls';

const DELTA_WINDOWS: ReceiveWindows = {
  stream: STREAM_RECEIVE_WINDOW_BYTES,
  connection: CONNECTION_RECEIVE_WINDOW_BYTES,
};

export interface FloorServer {
  port: number;
  close(): void;
}

/** Listens on a loopback port; close() destroys the tracked connections, then closes the server. */
async function listening(
  server: tls.Server | http2.Http2SecureServer,
  open: Iterable<{ destroy(): void }>,
): Promise<FloorServer> {
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      for (const c of open) c.destroy();
      server.close();
    },
  };
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
 * With `work`, it runs that first, on its event loop, for each call (a service's own work with
 * nothing around it).
 */
export async function cannedGrpcServer(pki: TestPki, message: Buffer, work?: () => void): Promise<FloorServer> {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return http2Floor(pki, (stream) => {
    stream.on('data', () => {});
    stream.on('end', () => {
      work?.();
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(frame);
    });
  });
}

/** Receive windows a floor server advertises, as the server it is the floor of does. */
interface ReceiveWindows {
  stream: number;
  connection: number;
}

/**
 * A bare HTTP/2 TLS server handing each stream to `onStream`; close() also ends its sessions.
 * With `windows`, each connection opens those receive windows from its first SETTINGS frame on.
 */
async function http2Floor(
  pki: TestPki,
  onStream: (stream: http2.ServerHttp2Stream) => void,
  windows?: ReceiveWindows,
): Promise<FloorServer> {
  const server = http2.createSecureServer({
    cert: pki.certPem,
    key: pki.keyPem,
    minVersion: 'TLSv1.3',
    ...(windows ? { settings: { initialWindowSize: windows.stream } } : {}),
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
    if (windows) s.setLocalWindowSize(windows.connection);
  });
  server.on('stream', (stream) => {
    stream.on('error', () => {});
    onStream(stream);
  });
  return listening(server, sessions);
}

/**
 * An HTTP/2 TLS server that reads each stream's gRPC messages by their 5-byte length prefixes and,
 * once `answers.length` of them have arrived, writes `answers` (framed gRPC messages) on the
 * stream, in order, and keeps it open, as an xDS server answers a client's first requests. Nothing
 * is decoded or copied: what Node's HTTP/2 layer costs to receive a request of that size on one
 * stream, under any gRPC library. `onChunk`, if given, also sees every DATA chunk first (a floor
 * that must read the bytes too). Its receive windows are those the xDS server gives a Delta
 * stream's connection (src/xds/grpc/transport.ts), so the client sends it the request as it sends ours.
 */
export async function http2ReceiveFloor(
  pki: TestPki,
  answers: readonly Buffer[],
  onChunk?: (chunk: Buffer) => void,
): Promise<FloorServer> {
  return http2Floor(
    pki,
    (stream) => {
      let messages = 0;
      // Bytes still owed to the current message's body, then to the next prefix (header bytes are
      // gathered one at a time: a prefix may straddle two DATA chunks).
      let bodyLeft = 0;
      let header = 0;
      let length = 0;
      stream.on('data', (chunk: Buffer) => {
        onChunk?.(chunk);
        let at = 0;
        while (at < chunk.length && messages < answers.length) {
          if (bodyLeft > 0) {
            const take = Math.min(bodyLeft, chunk.length - at);
            bodyLeft -= take;
            at += take;
            if (bodyLeft === 0) messages++;
            continue;
          }
          const byte = chunk[at++] ?? 0;
          if (header > 0) length = length * 256 + byte; // header 0 is the compressed flag
          if (++header === 5) {
            header = 0;
            bodyLeft = length;
            length = 0;
            if (bodyLeft === 0) messages++;
          }
        }
        if (messages === answers.length && !stream.headersSent) {
          stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
          for (const a of answers) stream.write(a);
        }
      });
    },
    DELTA_WINDOWS,
  );
}

/**
 * Bytes the TLS write floor hands node:tls at a time. Slices of the shared message, so nothing is
 * copied; one slice in flight per socket keeps the encrypted backlog (TLSWrap encrypts a whole
 * write at once) to about this much per client.
 */
export const FLOOR_WRITE_CHUNK_BYTES = 1024 * 1024;

export interface TlsWriteFloor extends FloorServer {
  /** Clients that have been sent every byte so far. */
  readonly served: number;
}

/**
 * A TLS server that, once a client's first bytes (its request) have arrived, writes it
 * `perClient` (the same bytes for every client) and nothing else: no HTTP/2 framing, no flow
 * control, no gRPC, no per-client encoding, never reading what the client sends after. At most
 * `concurrency` clients are written to at once, in the order their requests arrived; each write
 * waits for the socket to drain. The least a Node server spends to send those bytes to each.
 */
export async function tlsWriteFloor(
  pki: TestPki,
  perClient: readonly Buffer[],
  concurrency: number,
): Promise<TlsWriteFloor> {
  const waiting: tls.TLSSocket[] = [];
  const sockets = new Set<tls.TLSSocket>();
  let active = 0;
  let served = 0;
  const next = (): void => {
    while (active < concurrency) {
      const socket = waiting.shift();
      if (!socket) return;
      active++;
      void send(socket)
        .then(
          () => served++,
          () => {},
        )
        .finally(() => {
          active--;
          next();
        });
    }
  };
  const send = async (socket: tls.TLSSocket): Promise<void> => {
    for (const buf of perClient)
      for (let pos = 0; pos < buf.length; pos += FLOOR_WRITE_CHUNK_BYTES) {
        if (socket.destroyed) throw new Error('closed');
        if (!socket.write(buf.subarray(pos, pos + FLOOR_WRITE_CHUNK_BYTES)))
          await new Promise<void>((res) => {
            const done = () => {
              socket.off('drain', done).off('close', done);
              res();
            };
            socket.on('drain', done).on('close', done);
          });
      }
  };
  const server = tls.createServer({ cert: pki.certPem, key: pki.keyPem, minVersion: 'TLSv1.3' }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.once('data', () => {
      socket.on('data', () => {}); // ACKs, ignored: keep the socket flowing
      waiting.push(socket);
      next();
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  return {
    port: (server.address() as AddressInfo).port,
    get served() {
      return served;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

const HEAD_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;

/**
 * A TLS server that answers each HTTP/1.1 request on a keep-alive connection, once its head and
 * its Content-Length body have arrived, with `response` (the whole HTTP response, canned), doing
 * nothing else: no header checks, no JSON, no validation, no deadlines. The transport under the
 * validating webhook. `tls` adds what the served side needs beyond the identity (the webhook's
 * own TLS settings), so the two servers differ only above TLS.
 */
export async function cannedHttp1Server(
  pki: Pick<TestPki, 'certPem' | 'keyPem'>,
  response: Buffer,
  options: tls.TlsOptions = {},
): Promise<FloorServer> {
  const sockets = new Set<tls.TLSSocket>();
  const server = tls.createServer({ ...options, cert: pki.certPem, key: pki.keyPem }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.setNoDelay(true);
    let buf: Buffer | undefined;
    socket.on('data', (chunk: Buffer) => {
      buf = buf ? Buffer.concat([buf, chunk]) : chunk;
      for (;;) {
        const head = buf.indexOf(HEAD_END);
        if (head < 0) return;
        const m = CONTENT_LENGTH.exec(buf.toString('latin1', 0, head));
        const end = head + 4 + Number(m?.[1] ?? 0);
        if (buf.length < end) return;
        socket.write(response);
        if (buf.length === end) {
          buf = undefined;
          return;
        }
        buf = buf.subarray(end);
      }
    });
  });
  return listening(server, sockets);
}
