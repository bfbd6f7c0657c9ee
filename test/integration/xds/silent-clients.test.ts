// A client that never answers, or never reads, must not delay anyone else's full sync. A
// full-state response holds a FullSyncGate slot only until its bytes have drained into the
// connection (HTTP/2 flow control lets them through as the client reads), never until an ACK;
// a response the client stops reading gives its slot up after the slot-stall release and is cut
// after the stall timeout, freeing its buffered bytes, so clients that stop reading together
// cannot hold every slot for the stall timeout.

import { ADDRESS_TYPE_URL } from '../../../src/contract/xds-resources';
import {
  FULL_SYNC_SLOT_TIMEOUT_MS,
  GATED_FULL_SYNC_BYTES,
  MAX_CONCURRENT_FULL_SYNCS,
  MAX_STALLED_FULL_SYNCS,
} from '../../../src/xds/protocol/push';
import { FakeCache } from '../../support/xds/fake-cache';
import { Harness, startHarness } from './fixtures/harness';
import { RawAdsStream } from './fixtures/raw-stream';
import { AUTHORIZATION_TYPE_URL, TestZtunnel, ofType } from './fixtures/test-client';

const WORKLOADS = 40;
/** Well under FULL_SYNC_SLOT_TIMEOUT_MS: a slot freed only by that timeout fails these tests. */
const PROMPT_MS = 15_000;
/** A short stall timeout so the non-reading cases run in well under a second of waiting. */
const STALL_MS = 300;
/** A stall cut far beyond the test's life: nothing here may wait for it. */
const LONG_STALL_MS = 20_000;
/** A short slot release, so the test waits fractions of a second, not SLOT_STALL_RELEASE_MS. */
const SLOT_STALL_MS = 300;

let harness: Harness;
const clients: TestZtunnel[] = [];
const raws: RawAdsStream[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const r of raws.splice(0)) r.close();
  await harness.close();
});

/** A mesh whose full Address response needs a FullSyncGate slot. */
function bigMesh(): FakeCache {
  const cache = new FakeCache();
  const size = Math.ceil((GATED_FULL_SYNC_BYTES * 1.2) / WORKLOADS);
  for (let i = 0; i < WORKLOADS; i++)
    cache.setWorkload({ uid: `Kubernetes//Pod/load/pod-${i}`, ip: `10.1.0.${i}`, node: 'node-1', size });
  cache.commit();
  return cache;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function fullSyncInOrder(zt: TestZtunnel): Promise<void> {
  const first = await zt.next();
  const second = await zt.next();
  expect([first.type_url, second.type_url]).toEqual([ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL]);
  expect(first.resources).toHaveLength(WORKLOADS);
}

test(
  'clients that read but never ACK do not hold full-sync slots: a new ztunnel gets its full sync, Address first',
  async () => {
    expect(PROMPT_MS).toBeLessThan(FULL_SYNC_SLOT_TIMEOUT_MS);
    harness = await startHarness(bigMesh());
    const silent = Array.from(
      { length: 2 * MAX_CONCURRENT_FULL_SYNCS },
      () => new TestZtunnel(harness, { manualAck: true }),
    );
    clients.push(...silent);
    await Promise.all(silent.map((c) => c.next(ofType(AUTHORIZATION_TYPE_URL))));
    expect(
      silent.every((c) => c.received[0]?.type_url === ADDRESS_TYPE_URL && c.received[0].resources.length === WORKLOADS),
    ).toBe(true);

    const late = new TestZtunnel(harness);
    clients.push(late);
    await fullSyncInOrder(late);
    expect(harness.xds.debugSyncz().fullSyncs.active).toBe(0);
  },
  PROMPT_MS,
);

test(
  'clients that do not read at all are cut after the stall timeout and do not block a new ztunnel',
  async () => {
    harness = await startHarness(bigMesh(), { flowControl: { stallTimeoutMs: STALL_MS } });
    const stuck = Array.from({ length: MAX_CONCURRENT_FULL_SYNCS }, (_, i) =>
      RawAdsStream.ztunnel(harness, i, { read: false }),
    );
    raws.push(...stuck);
    while (harness.xds.debugSyncz().fullSyncs.active < MAX_CONCURRENT_FULL_SYNCS)
      await new Promise((r) => setTimeout(r, 10));

    const late = new TestZtunnel(harness);
    clients.push(late);
    await fullSyncInOrder(late);
    // Each stuck stream was reset, which drops the response bytes it held.
    const closed = await Promise.all(stuck.map((s) => s.closed));
    expect(closed.every((c) => c.code === undefined && c.rstCode !== 0)).toBe(true);
    expect(harness.xds.debugSyncz().clients).toHaveLength(1);
  },
  PROMPT_MS,
);

test(
  'clients on other nodes that stop reading all at once do not hold back a new ztunnel: a stalled response gives its slot up long before it is cut',
  async () => {
    harness = await startHarness(bigMesh(), {
      flowControl: { stallTimeoutMs: LONG_STALL_MS, slotStallMs: SLOT_STALL_MS },
    });
    // Twice as many as there are slots: a FIFO queue of them stands before the new ztunnel.
    const stuck = Array.from({ length: 2 * MAX_CONCURRENT_FULL_SYNCS }, (_, i) =>
      RawAdsStream.ztunnel(harness, 100 + i, { read: false }),
    );
    raws.push(...stuck);
    const cut = new Set<RawAdsStream>();
    for (const s of stuck) void s.closed.then(() => cut.add(s));
    const syncz = () => harness.xds.debugSyncz();
    while (syncz().clients.length < stuck.length) await sleep(10);

    const late = new TestZtunnel(harness, { nodeName: 'node-2' });
    clients.push(late);
    await fullSyncInOrder(late);
    // The new ztunnel synced long before any stall cut (LONG_STALL_MS): the first MAX_STALLED_FULL_SYNCS
    // non-readers gave their slots up and are still connected, their responses kept.
    expect(syncz().fullSyncs.stalled).toBe(MAX_STALLED_FULL_SYNCS);
    // The ones that stalled beyond that cap are reset at once (the new ztunnel may have taken the
    // first slot one of them freed), dropping their bytes.
    const beyondCap = stuck.length - MAX_STALLED_FULL_SYNCS;
    while (cut.size < beyondCap) await sleep(10);
    const statuses = await Promise.all([...cut].map((s) => s.closed));
    expect(statuses.every((c) => c.code === undefined && c.rstCode !== 0)).toBe(true);
    const kept = stuck.filter((s) => !cut.has(s));
    expect(kept).toHaveLength(MAX_STALLED_FULL_SYNCS);
    expect(kept.every((s) => !s.stream.closed)).toBe(true);
    const state = syncz();
    expect(state.fullSyncs).toMatchObject({ active: 0, stalled: MAX_STALLED_FULL_SYNCS });
    expect(state.clients).toHaveLength(MAX_STALLED_FULL_SYNCS + 1);

    // A kept client that reads again drains its response and gives its place among the stalled back.
    kept[0]!.stream.resume();
    while (syncz().fullSyncs.stalled > MAX_STALLED_FULL_SYNCS - 1) await sleep(10);
    expect(syncz().clients).toHaveLength(MAX_STALLED_FULL_SYNCS + 1);
  },
  PROMPT_MS,
);
