// The bench's floor servers are references that targets are judged against, so they must do what
// BENCHMARKS.md says: answer only once the whole request has arrived, and speak enough gRPC for
// the CA callers (and any gRPC client) to count a call as a success.

import * as grpc from '@grpc/grpc-js';
import * as http2 from 'node:http2';
import * as tls from 'node:tls';
import { cannedGrpcServer, FloorServer, http2ReceiveFloor, rawTlsCounter } from '../../../bench/floors';
import { SERVER_NAME, TestPki, makeTestPki } from '../../support/tls';

let pki: TestPki;
let server: FloorServer | undefined;

beforeAll(() => {
  pki = makeTestPki();
});

afterEach(() => {
  server?.close();
  server = undefined;
});

test('the TLS counter answers one byte only after the counted bytes have all arrived', async () => {
  server = await rawTlsCounter(pki);
  const body = Buffer.alloc(300_000, 7);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(body.length);
  const socket = tls.connect({
    host: '127.0.0.1',
    port: server.port,
    ca: pki.caPem,
    servername: SERVER_NAME,
    minVersion: 'TLSv1.3',
  });
  await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
  const answers: Buffer[] = [];
  socket.on('data', (d: Buffer) => answers.push(d));
  // All but the last byte: no answer yet.
  socket.write(Buffer.concat([count, body.subarray(0, body.length - 1)]));
  await new Promise((r) => setTimeout(r, 200));
  expect(answers).toHaveLength(0);
  socket.write(body.subarray(body.length - 1));
  await new Promise<void>((resolve) => socket.once('end', () => resolve()));
  expect(Buffer.concat(answers).toString()).toBe('k');
  socket.destroy();
});

/** A gRPC client of the floor server and one unary call on it, answered with the raw message bytes. */
function floorClient(port: number): { call(): Promise<Buffer>; close(): void } {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createSsl(Buffer.from(pki.caPem)), {
    'grpc.ssl_target_name_override': SERVER_NAME,
  });
  return {
    call: () =>
      new Promise<Buffer>((resolve, reject) =>
        client.makeUnaryRequest(
          '/istio.v1.auth.IstioCertificateService/CreateCertificate',
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.from('request'),
          (err, value) => (err ? reject(err) : resolve(value!)),
        ),
      ),
    close: () => client.close(),
  };
}

test('the canned gRPC server answers any unary call with OK and its message', async () => {
  const message = Buffer.from('a canned answer');
  server = await cannedGrpcServer(pki, message);
  const client = floorClient(server.port);
  try {
    const answer = await client.call();
    expect(answer.equals(message)).toBe(true);
  } finally {
    client.close();
  }
});

test('the canned gRPC server with work runs it once per call, before it answers', async () => {
  let worked = 0;
  server = await cannedGrpcServer(pki, Buffer.from('signed'), () => worked++);
  const client = floorClient(server.port);
  const call = () => client.call().then(() => worked);
  try {
    // Each answer arrives with the work of its own call already counted.
    expect(await call()).toBe(1);
    expect(await call()).toBe(2);
    expect(await call()).toBe(3);
  } finally {
    client.close();
  }
});

test('the HTTP/2 receive floor answers only once both messages have arrived, prefixes split across writes', async () => {
  const frame = (body: Buffer) => {
    const out = Buffer.alloc(5 + body.length);
    out.writeUInt32BE(body.length, 1);
    body.copy(out, 5);
    return out;
  };
  const answers = [frame(Buffer.from('first answer')), frame(Buffer.from('second answer'))];
  server = await http2ReceiveFloor(pki, answers);
  const session = http2.connect(`https://127.0.0.1:${server.port}`, {
    ca: pki.caPem,
    servername: SERVER_NAME,
    minVersion: 'TLSv1.3',
  });
  try {
    const stream = session.request({ ':method': 'POST', ':path': '/x', 'content-type': 'application/grpc' });
    const received: Buffer[] = [];
    stream.on('data', (d: Buffer) => received.push(d));
    const big = frame(Buffer.alloc(200_000, 1));
    const small = frame(Buffer.from('the second request'));
    // The first message and the first 3 bytes of the second's prefix: no answer yet.
    stream.write(Buffer.concat([big, small.subarray(0, 3)]));
    await new Promise((r) => setTimeout(r, 200));
    expect(received).toHaveLength(0);
    stream.write(small.subarray(3));
    await new Promise<void>((resolve) => {
      const check = () =>
        Buffer.concat(received).length >= answers[0]!.length + answers[1]!.length ? resolve() : undefined;
      stream.on('data', check);
    });
    expect(Buffer.concat(received).equals(Buffer.concat(answers))).toBe(true);
    stream.close();
  } finally {
    session.destroy();
  }
});
