import { ADDRESS_TYPE_URL } from '../../../src/contract/xds-resources';
import { heldVersions } from '../../../src/xds/grpc/proto';
import {
  FULL_SYNC_SLOT_TIMEOUT_MS,
  FullSyncGate,
  GATED_FULL_SYNC_BYTES,
  MAX_CONCURRENT_FULL_SYNCS,
  MAX_STALLED_FULL_SYNCS,
  PushBatch,
  SnapshotCache,
} from '../../../src/xds/protocol/push';
import { FakeCache } from '../../support/xds/fake-cache';
import { TypeSubscription } from '../../../src/xds/protocol/subscription';
import { demoCache } from '../../support/xds/fake-cache';

const A = 'Kubernetes//Pod/default/a';

function freshWildcard(): TypeSubscription {
  const s = new TypeSubscription(ADDRESS_TYPE_URL, true);
  s.initialize(
    {
      node: null,
      type_url: ADDRESS_TYPE_URL,
      resource_names_subscribe: [],
      resource_names_unsubscribe: [],
      initial_resource_versions: heldVersions(),
      response_nonce: '',
      error_detail: null,
    },
    demoCache(),
  );
  return s;
}

test('fresh wildcard streams share one encoding of the full state until the cache changes', () => {
  const cache = demoCache();
  const snapshots = new SnapshotCache(cache);
  const a = freshWildcard().take({ cache, nodeName: '', snapshots })!;
  const b = freshWildcard().take({ cache, nodeName: '', snapshots })!;
  expect(a.shared).toBeDefined();
  expect(a.shared).toBe(b.shared);
  expect(a.resources).toHaveLength(4);
  snapshots.invalidate();
  const c = freshWildcard().take({ cache, nodeName: '', snapshots })!;
  expect(c.shared).not.toBe(a.shared);
  expect(Buffer.from(c.shared!.withNonce('n'))).toEqual(Buffer.from(a.shared!.withNonce('n')));
});

test(`only full responses of at least GATED_FULL_SYNC_BYTES (${GATED_FULL_SYNC_BYTES}) need a slot`, () => {
  const cache = new FakeCache();
  cache.setWorkload({ uid: 'w1', ip: '10.0.0.1', node: 'n', size: GATED_FULL_SYNC_BYTES / 2 });
  const snapshots = new SnapshotCache(cache);
  expect(snapshots.isLarge(ADDRESS_TYPE_URL)).toBe(false);
  cache.setWorkload({ uid: 'w2', ip: '10.0.0.2', node: 'n', size: GATED_FULL_SYNC_BYTES / 2 });
  snapshots.invalidate();
  expect(snapshots.isLarge(ADDRESS_TYPE_URL)).toBe(true);
  expect(snapshots.isLarge('type.googleapis.com/istio.security.Authorization')).toBe(false);
});

test('a push body is shared only while the push is being fanned out', () => {
  const cache = demoCache();
  const batch = new PushBatch({ changes: new Map([[ADDRESS_TYPE_URL, new Set([A])]]), full: false, eventAt: 0 }, cache);
  const first = batch.sharedDelta(ADDRESS_TYPE_URL);
  expect(batch.sharedDelta(ADDRESS_TYPE_URL)).toBe(first);
  batch.finish();
  expect(batch.sharedDelta(ADDRESS_TYPE_URL)).toBeUndefined();
});

describe('FullSyncGate', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test(`at most MAX_CONCURRENT_FULL_SYNCS (${MAX_CONCURRENT_FULL_SYNCS}) full responses are written at once; the next waits for a release`, () => {
    const gate = new FullSyncGate();
    const releases = Array.from({ length: MAX_CONCURRENT_FULL_SYNCS }, () => gate.tryAcquire(() => undefined)!);
    expect(releases.every((r) => typeof r === 'function')).toBe(true);
    const woken: string[] = [];
    expect(gate.tryAcquire(() => woken.push('late'))).toBeUndefined();
    expect(gate.queued).toBe(1);
    releases[0]!();
    expect(woken).toEqual(['late']);
    expect(gate.active).toBe(MAX_CONCURRENT_FULL_SYNCS - 1);
  });

  test('releasing a slot twice frees it once', () => {
    const gate = new FullSyncGate(1);
    const release = gate.tryAcquire(() => undefined)!;
    release();
    release();
    expect(gate.active).toBe(0);
  });

  test(`a slot whose write never completes is freed after FULL_SYNC_SLOT_TIMEOUT_MS (${FULL_SYNC_SLOT_TIMEOUT_MS} ms)`, () => {
    const gate = new FullSyncGate(1);
    gate.tryAcquire(() => undefined);
    const woken: number[] = [];
    gate.tryAcquire(() => woken.push(1));
    jest.advanceTimersByTime(FULL_SYNC_SLOT_TIMEOUT_MS);
    expect(woken).toEqual([1]);
    expect(gate.active).toBe(0);
  });

  test(`at most MAX_STALLED_FULL_SYNCS (${MAX_STALLED_FULL_SYNCS}) stalled responses are kept without a slot; leaving twice frees one place`, () => {
    const gate = new FullSyncGate();
    const places = Array.from({ length: MAX_STALLED_FULL_SYNCS }, () => gate.keepStalled());
    expect(places.every((p) => typeof p === 'function')).toBe(true);
    expect(gate.keepStalled()).toBeUndefined();
    expect(gate.stalled).toBe(MAX_STALLED_FULL_SYNCS);
    places[0]!();
    places[0]!();
    expect(gate.stalled).toBe(MAX_STALLED_FULL_SYNCS - 1);
    expect(typeof gate.keepStalled()).toBe('function');
    expect(gate.keepStalled()).toBeUndefined();
  });

  test('a closed stream stops waiting for a slot', () => {
    const gate = new FullSyncGate(1);
    const release = gate.tryAcquire(() => undefined)!;
    const wake = jest.fn();
    gate.tryAcquire(wake);
    gate.forget(wake);
    release();
    expect(wake).not.toHaveBeenCalled();
  });
});
