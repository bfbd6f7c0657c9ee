// When grpc-js's internals are not where transport.ts looks (a grpc-js of another shape), a Delta
// stream works on grpc-js's public path, each lost reach is logged once and counted, and a client
// that stops reading is still cut: its connection is closed, since its stream cannot be reset.
// Here the shape is taken away by hiding the call's internals from the server's handler.

import type * as grpc from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { logs } from '../../../src/log/logger';
import { DELTA_METHOD } from '../../../src/xds/grpc/proto';
import { GRPC_HOOKS, METRIC_GRPC_HOOK_FALLBACKS } from '../../../src/xds/grpc/hooks';
import { GATED_FULL_SYNC_BYTES } from '../../../src/xds/protocol/push';
import { eventually } from '../../support/apiserver';
import { captureLogs } from '../../support/logs';
import { FakeCache } from '../../support/xds/fake-cache';
import { Harness, startHarness } from './fixtures/harness';
import { RawAdsStream } from './fixtures/raw-stream';
import { AUTHORIZATION_TYPE_URL, TestZtunnel, ofType } from './fixtures/test-client';

const WORKLOADS = 40;

/** The call as grpc-js's public API shows it: its chain down to the HTTP/2 stream is hidden. */
function publicOnly<T extends object>(call: T): T {
  return new Proxy(call, {
    get: (target, prop) => {
      if (prop === 'call') return undefined;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function hideInternals(impl: grpc.UntypedServiceImplementation): grpc.UntypedServiceImplementation {
  const delta = impl[DELTA_METHOD] as (call: object) => void;
  return { ...impl, [DELTA_METHOD]: (call: object) => delta(publicOnly(call)) };
}

let harness: Harness | undefined;
const clients: TestZtunnel[] = [];
const raws: RawAdsStream[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const r of raws.splice(0)) r.close();
  await harness?.close();
  logs.setLevel('xds', 'silent');
});

test('every lost reach is counted per call and logged once; a client that stops reading has its connection closed', async () => {
  const cache = new FakeCache();
  const size = Math.ceil((GATED_FULL_SYNC_BYTES * 1.2) / WORKLOADS);
  for (let i = 0; i < WORKLOADS; i++)
    cache.setWorkload({ uid: `Kubernetes//Pod/load/pod-${i}`, ip: `10.1.0.${i}`, node: 'node-1', size });
  cache.commit();
  const registry = new Registry();
  const closed: string[] = [];
  const captured = captureLogs();
  logs.setLevel('xds', 'warn');
  try {
    harness = await startHarness(
      cache,
      {
        registry,
        flowControl: { stallTimeoutMs: 300, drainDeadlineMs: 1_500, slotStallMs: 300 },
        closeConnection: (peer) => {
          closed.push(peer);
          return true;
        },
      },
      undefined,
      hideInternals,
    );
    // Two streams that read: both are served on grpc-js's own path.
    const readers = [new TestZtunnel(harness), new TestZtunnel(harness)];
    clients.push(...readers);
    for (const r of readers) await r.next(ofType(AUTHORIZATION_TYPE_URL));
    // One that never reads (node:http2 then sends no WINDOW_UPDATE): cut, by its connection.
    raws.push(RawAdsStream.ztunnel(harness, 1, { read: false }));
    await eventually('the stalled client is cut', () => closed.length > 0);
    expect(closed[0]).toMatch(/^(\d+\.\d+\.\d+\.\d+|[0-9a-f:.]+):\d+$/);

    const metric = await registry.getSingleMetric(METRIC_GRPC_HOOK_FALLBACKS)?.get();
    const counts: Record<string, number> = {};
    for (const v of metric?.values ?? []) counts[String(v.labels['hook'])] = v.value;
    expect(counts).toEqual({ transport: 3, 'direct-write': 3, decoder: 3, 'receive-windows': 3 });
    const warned = captured
      .lines()
      .filter((l) => typeof l['msg'] === 'string' && l['msg'].startsWith('grpc-js internals differ'))
      .map((l) => l['hook']);
    expect(warned.sort()).toEqual(Object.keys(GRPC_HOOKS).sort());
  } finally {
    captured.restore();
  }
});
