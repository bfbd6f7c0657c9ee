// A SotW debug stream holds nothing shared: a caller that does not take its answer keeps only its
// own buffer and place, is cut after the write timeout, and other callers are answered meanwhile.

import { EventEmitter } from 'node:events';
import * as path from 'node:path';
import pino from 'pino';
import * as protobuf from 'protobufjs';
import { protoDir } from '../../../src/proto-files';
import type { CallerIdentity } from '../../../src/security/identity';
import { SOTW_WRITE_TIMEOUT_MS, SotwCall, SotwOutcome } from '../../../src/xds/debug/sotw-stream';
import { SotwServer } from '../../../src/xds/debug/sotw';
import { GrpcHookFallbacks } from '../../../src/xds/grpc/hooks';
import type { SotwRequest } from '../../../src/xds/wire/sotw-wire';

/** A grpc-js server call as far as the stream looks at it (accepted on the TLS port); writes complete only when told. */
class FakeCall extends EventEmitter {
  readonly writes: { body: Buffer; done: () => void }[] = [];
  readonly errors: { code: number; details: string }[] = [];
  cancelled = false;
  ended = false;
  metadata = { get: () => [] };
  call = {
    stream: {
      rstCode: undefined,
      closed: false,
      destroyed: false,
      session: { socket: { bytesWritten: 0 } },
      close: () => {
        this.cancelled = true;
      },
    },
  };

  constructor() {
    super();
    this.on('error', (e: { code: number; details: string }) => this.errors.push(e));
  }
  getPeer(): string {
    return 'ipv4:127.0.0.1:1';
  }
  write(body: Buffer, done: () => void): boolean {
    this.writes.push({ body, done });
    return true;
  }
  end(): void {
    this.ended = true;
  }
}

const identity: CallerIdentity = {
  identities: ['spiffe://cluster.local/ns/istio-system/sa/istioctl'],
  namespace: 'istio-system',
  serviceAccount: 'istioctl',
  via: 'token',
};

const request = (nonce = 'n'): SotwRequest => ({
  nodeId: 'sidecar~1~a.b~b.svc.cluster.local',
  type_url: 'istio.io/debug/syncz',
  resource_names: [],
  response_nonce: nonce,
  nack: undefined,
});

const root = new protobuf.Root();
root.loadSync(path.join(protoDir(), 'xds.proto'), { keepCase: true });
const Response = root.lookupType('envoy.service.discovery.v3.DiscoveryResponse');

const flush = () => new Promise((r) => setImmediate(r));

function server(writeTimeoutMs = SOTW_WRITE_TIMEOUT_MS, maxStreams?: number) {
  const outcomes: SotwOutcome[] = [];
  const s = new SotwServer(
    {
      streams: () => [],
      authenticator: { authenticate: () => Promise.resolve(identity) },
      systemNamespace: 'istio-system',
      controlPlane: '{}',
      log: pino({ level: 'silent' }),
      count: (o) => outcomes.push(o),
      hooks: new GrpcHookFallbacks(pino({ level: 'silent' })),
      closeConnection: () => false,
      writeTimeoutMs,
      ...(maxStreams !== undefined ? { maxStreams } : {}),
    },
    pino({ level: 'silent' }),
  );
  const open = () => {
    const call = new FakeCall();
    s.accept(call as unknown as SotwCall, true);
    return call;
  };
  return { s, outcomes, open };
}

afterEach(() => jest.useRealTimers());

test(`a caller that does not take its answer is cut after SOTW_WRITE_TIMEOUT_MS (${SOTW_WRITE_TIMEOUT_MS} ms) and frees its place`, async () => {
  jest.useFakeTimers({ doNotFake: ['setImmediate'] });
  const { s, outcomes, open } = server();
  const slow = open();
  slow.emit('data', request());
  await flush();
  expect(slow.writes).toHaveLength(1);
  expect(s.streams.size).toBe(1);
  jest.advanceTimersByTime(SOTW_WRITE_TIMEOUT_MS - 1);
  expect(slow.cancelled).toBe(false);
  jest.advanceTimersByTime(1);
  expect(slow.cancelled).toBe(true);
  expect(s.streams.size).toBe(0);
  expect(outcomes).toEqual(['answered', 'write_timeout']);
});

test('while one caller reads slowly, another is answered; requests on the slow stream wait, only the latest kept', async () => {
  const { s, open } = server(60_000);
  const slow = open();
  slow.emit('data', request('a'));
  await flush();
  slow.emit('data', request('b'));
  slow.emit('data', request('c'));
  const quick = open();
  quick.emit('data', request());
  await flush();
  expect(quick.writes).toHaveLength(1);
  expect(slow.writes).toHaveLength(1);
  slow.writes[0]!.done();
  // 'b' was replaced by 'c': one more answer, not two.
  expect(slow.writes).toHaveLength(2);
  slow.writes[1]!.done();
  expect(slow.writes).toHaveLength(2);
  s.close();
  expect(slow.ended && quick.ended).toBe(true);
});

test('an ACK of the last answer asks for nothing; a NACK is logged, not answered', async () => {
  const { open } = server();
  const call = open();
  call.emit('data', request());
  await flush();
  call.writes[0]!.done();
  const nonce = Response.toObject(Response.decode(call.writes[0]!.body)) as { nonce: string };
  expect(nonce.nonce).not.toBe('');
  call.emit('data', request(nonce.nonce));
  call.emit('data', { ...request(nonce.nonce), nack: 'rejected' });
  expect(call.writes).toHaveLength(1);
  expect(call.errors).toEqual([]);
});

test('MAX_SOTW_STREAMS bounds open streams: the next is RESOURCE_EXHAUSTED and nothing else changes', () => {
  const { s, outcomes, open } = server(SOTW_WRITE_TIMEOUT_MS, 2);
  open();
  open();
  const third = open();
  expect(third.errors[0]).toMatchObject({ code: 8 });
  expect(third.errors[0]!.details).toMatch(/MAX_SOTW_STREAMS/);
  expect(s.streams.size).toBe(2);
  expect(outcomes).toEqual(['refused_streams']);
});
