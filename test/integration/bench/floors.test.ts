// The bench's floor servers are references that targets are judged against, so they must do what
// BENCHMARKS.md says: answer only once the whole request has arrived, and speak enough gRPC for
// the CA callers (and any gRPC client) to count a call as a success.

import * as grpc from '@grpc/grpc-js';
import * as tls from 'node:tls';
import { cannedGrpcServer, FloorServer, rawTlsCounter } from '../../../bench/floors';
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

test('the canned gRPC server answers any unary call with OK and its message', async () => {
  const message = Buffer.from('a canned answer');
  server = await cannedGrpcServer(pki, message);
  const client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createSsl(Buffer.from(pki.caPem)), {
    'grpc.ssl_target_name_override': SERVER_NAME,
  });
  try {
    const answer = await new Promise<Buffer>((resolve, reject) =>
      client.makeUnaryRequest(
        '/istio.v1.auth.IstioCertificateService/CreateCertificate',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from('request'),
        (err, value) => (err ? reject(err) : resolve(value!)),
      ),
    );
    expect(answer.equals(message)).toBe(true);
  } finally {
    client.close();
  }
});
