// The controller's own bounds, with the store in memory and a writer that refuses: how many times
// a failing write is tried, and that it waits for the store to sync before deciding anything.

import {
  IP_ALLOCATE_MAX_ATTEMPTS,
  IpAutoallocateController,
  StaleStatusError,
} from '../../../../src/controllers/ipallocate';
import {
  MAX_AUTOALLOCATED_ADDRESSES_PER_ENTRY,
  MAX_SPEC_ITEMS_READ,
  eligibleHosts,
  statusAddresses,
} from '../../../../src/controllers/ipallocate/entries';
import { logs } from '../../../../src/log/logger';
import { MemoryStore } from '../../../../src/store/memory-store';
import type { KubeObject } from '../../../../src/store/types';

logs.configure('ipallocate:silent');

const PREFIXES = { ipv4: '240.240.0.0/16', ipv6: '2001:2::/48' };

function entry(name: string, hosts: string[], extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: 'networking.istio.io/v1',
    kind: 'ServiceEntry',
    metadata: { name, namespace: 'default', resourceVersion: '1' },
    spec: { hosts, resolution: 'DNS' },
    ...extra,
  };
}

function syncedStore(objects: KubeObject[]): MemoryStore {
  const store = new MemoryStore();
  store.expectSync('test');
  store.upsert('ServiceEntry', objects);
  store.markSynced('test');
  return store;
}

test(`a write that keeps failing is tried IP_ALLOCATE_MAX_ATTEMPTS (${IP_ALLOCATE_MAX_ATTEMPTS}) times, then left until the entry changes`, async () => {
  const store = syncedStore([entry('a', ['a.example.com'])]);
  let calls = 0;
  const c = new IpAutoallocateController({
    store,
    prefixes: PREFIXES,
    backoff: { initialMs: 1, maxMs: 5 },
    writer: {
      write: () => {
        calls++;
        return Promise.reject(new StaleStatusError('test failed at /status/addresses'));
      },
      read: (namespace, name) => Promise.resolve(store.get('ServiceEntry', namespace, name)),
      list: () => Promise.resolve(store.list('ServiceEntry')),
    },
  });
  const stop = c.start();
  await new Promise((resolve) => setTimeout(resolve, 10));
  await c.idle();
  expect(calls).toBe(IP_ALLOCATE_MAX_ATTEMPTS);
  // The last write's outcome is unknown: what it took stays held until the entry is read back.
  expect(c.allocator.inUse()).toEqual({ ipv4: 1, ipv6: 1 });
  // A change of the entry starts a new round.
  store.upsert('ServiceEntry', [
    entry('a', ['a.example.com'], { metadata: { name: 'a', namespace: 'default', resourceVersion: '2' } }),
  ]);
  await c.idle();
  expect(calls).toBe(2 * IP_ALLOCATE_MAX_ATTEMPTS);
  // Each read-back found none of the addresses on the entry: only the last write's are held.
  expect(c.allocator.inUse()).toEqual({ ipv4: 1, ipv6: 1 });
  await stop();
});

test('nothing is decided before the store has synced (addresses already in status must be known first)', async () => {
  const store = new MemoryStore();
  store.expectSync('test');
  store.upsert('ServiceEntry', [entry('a', ['a.example.com'])]);
  let calls = 0;
  const c = new IpAutoallocateController({
    store,
    prefixes: PREFIXES,
    writer: {
      write: (current, addresses) => {
        calls++;
        return Promise.resolve({ ...current, status: { addresses } });
      },
      read: (namespace, name) => Promise.resolve(store.get('ServiceEntry', namespace, name)),
      list: () => Promise.resolve(store.list('ServiceEntry')),
    },
  });
  const stop = c.start();
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(calls).toBe(0);
  store.markSynced('test');
  await new Promise((resolve) => setTimeout(resolve, 0));
  await c.idle();
  expect(calls).toBe(1);
  await stop();
});

test(`spec lists are read up to MAX_SPEC_ITEMS_READ (${MAX_SPEC_ITEMS_READ}) items`, () => {
  const hosts = [...Array<string>(MAX_SPEC_ITEMS_READ).fill('same.example.com'), 'late.example.com'];
  expect(eligibleHosts(entry('a', hosts))).toEqual({ hosts: ['same.example.com'], dropped: 0 });
});

test(`status.addresses is read up to MAX_AUTOALLOCATED_ADDRESSES_PER_ENTRY (${MAX_AUTOALLOCATED_ADDRESSES_PER_ENTRY}) items`, () => {
  const addresses = Array.from({ length: MAX_AUTOALLOCATED_ADDRESSES_PER_ENTRY + 5 }, (_, i) => ({
    value: `240.240.${i >> 8}.${i & 255}`,
    host: `h${i}.example.com`,
  }));
  expect(statusAddresses(entry('a', [], { status: { addresses } })).size).toBe(MAX_AUTOALLOCATED_ADDRESSES_PER_ENTRY);
});
