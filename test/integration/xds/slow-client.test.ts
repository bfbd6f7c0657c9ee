// A client that stops reading must not delay the others, and the server keeps for it only a set
// of pending names and one response in flight, however many pushes go by. Full-state responses
// (tens of MB at scale) are in flight for a bounded number of clients at a time, each until its
// bytes have drained (silent-clients.test.ts covers clients that never drain).

import { ADDRESS_TYPE_URL } from '../../../src/contract/xds-resources';
import { GATED_FULL_SYNC_BYTES, MAX_CONCURRENT_FULL_SYNCS } from '../../../src/xds/protocol/push';
import { FakeCache } from '../../support/xds/fake-cache';
import { Harness, startHarness } from './fixtures/harness';
import { RawAdsStream } from './fixtures/raw-stream';
import { AUTHORIZATION_TYPE_URL, TestZtunnel, ofType } from './fixtures/test-client';

const WORKLOADS = 40;
const RESOURCE_BYTES = 20_000;
const PUSHES = 150;
const FAST_CLIENTS = 10;

let harness: Harness;
const clients: TestZtunnel[] = [];
const raws: RawAdsStream[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const r of raws.splice(0)) r.close();
  await harness.close();
});

function uid(i: number): string {
  return `Kubernetes//Pod/load/pod-${i}`;
}

test('a client that stops reading does not stall ten others and holds only a bounded set of pending names', async () => {
  const cache = new FakeCache();
  for (let i = 0; i < WORKLOADS; i++)
    cache.setWorkload({ uid: uid(i), ip: `10.1.0.${i}`, node: 'node-1', size: RESOURCE_BYTES });
  cache.commit();
  harness = await startHarness(cache);

  const stalled = new TestZtunnel(harness, { manualAck: true });
  clients.push(stalled);
  stalled.client.pause();
  const fast = Array.from({ length: FAST_CLIENTS }, () => new TestZtunnel(harness));
  clients.push(...fast);
  await Promise.all(fast.map((c) => c.next(ofType(AUTHORIZATION_TYPE_URL))));

  for (let p = 0; p < PUSHES; p++) {
    const i = p % WORKLOADS;
    cache.setWorkload({ uid: uid(i), ip: `10.1.0.${i}`, node: 'node-1', size: RESOURCE_BYTES, label: `rev-${p}` });
    cache.commit();
    // Let the event loop run between pushes, as real store events arrive over time.
    await new Promise((resolve) => setImmediate(resolve));
  }

  const latest = (i: number) => cache.get(ADDRESS_TYPE_URL, uid(i))!.version;
  const inSync = (c: TestZtunnel) =>
    Array.from({ length: WORKLOADS }, (_, i) => i).every(
      (i) => c.held.versions(ADDRESS_TYPE_URL)[uid(i)] === latest(i),
    );
  await Promise.all(fast.map((c) => c.until(() => inSync(c))));
  for (const c of fast) expect(inSync(c)).toBe(true);

  const entry = harness.xds
    .debugSyncz()
    .clients.find((e) => e.types.some((t) => t.typeUrl === ADDRESS_TYPE_URL && t.lastAck === undefined))!;
  const address = entry.types.find((t) => t.typeUrl === ADDRESS_TYPE_URL)!;
  // One response in flight, blocked by flow control; the rest is a set of names, never a queue.
  expect(entry.writing).toBe(true);
  expect(address.pendingNames).toBeGreaterThan(0);
  expect(address.pendingNames).toBeLessThanOrEqual(WORKLOADS);
});

test('full-state responses beyond MAX_CONCURRENT_FULL_SYNCS wait until an earlier one has drained to its client', async () => {
  const cache = new FakeCache();
  // Big enough that a full response needs a slot: GATED_FULL_SYNC_BYTES.
  const size = Math.ceil((GATED_FULL_SYNC_BYTES * 1.2) / WORKLOADS);
  for (let i = 0; i < WORKLOADS; i++) cache.setWorkload({ uid: uid(i), ip: `10.1.0.${i}`, node: 'node-1', size });
  cache.commit();
  // Stalled responses keep their slots here (no early release), so only a drain can free one.
  harness = await startHarness(cache, { flowControl: { slotStallMs: 60_000 } });
  // Streams that do not read: each full response stays in flight, holding its slot.
  const stalled = Array.from({ length: MAX_CONCURRENT_FULL_SYNCS }, (_, i) =>
    RawAdsStream.ztunnel(harness, i, { read: false }),
  );
  raws.push(...stalled);
  while (harness.xds.debugSyncz().fullSyncs.active < MAX_CONCURRENT_FULL_SYNCS)
    await new Promise((r) => setTimeout(r, 10));
  const late = new TestZtunnel(harness);
  clients.push(late);
  while (harness.xds.debugSyncz().fullSyncs.queued === 0) await new Promise((r) => setTimeout(r, 10));
  expect(late.received).toEqual([]);
  // One starts reading (without ever answering): once its response has drained, the slot is free.
  stalled[0]!.stream.resume();
  const first = await late.next(ofType(ADDRESS_TYPE_URL));
  expect(first.resources).toHaveLength(WORKLOADS);
});
