// At 100k workloads the listings stay bounded: every page holds at most MAX_DEBUG_PAGE_SIZE items,
// and walking the pages by their continue tokens returns each workload (or object) exactly once.
// Fixtures are built cheaply: one small encoded Address per workload, plain pod objects.

import { encodeAddress } from '../../../src/ambient/codec';
import { registerAmbientDebug, type AmbientDebugSource } from '../../../src/ambient/debug';
import { DEBUG_CONTINUE_HEADER, MAX_DEBUG_PAGE_SIZE } from '../../../src/contract/debug-page';
import type { DebugResponse } from '../../../src/contract/host';
import { ADDRESS_TYPE_URL, type ChangeSet, type XdsResource } from '../../../src/contract/xds-resources';
import { DebugRouter } from '../../../src/server/debug';
import { registerBuiltinDebug } from '../../../src/server/debug-builtins';
import { staticMesh } from '../../support/ca/harness';
import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';

const WORKLOADS = 100_000;
const NAMESPACES = 100;

function uidOf(i: number): string {
  return `Kubernetes//Pod/ns-${i % NAMESPACES}/pod-${i}`;
}

/** 100k workloads as the index would hold them, minus everything a debug page does not read. */
function syntheticIndex(): AmbientDebugSource & { change(name: string, r: XdsResource | undefined): void } {
  const addresses = new Map<string, XdsResource>();
  for (let i = 0; i < WORKLOADS; i++) {
    const uid = uidOf(i);
    const bytes = encodeAddress({ workload: { uid, name: `pod-${i}`, namespace: `ns-${i % NAMESPACES}` } });
    addresses.set(uid, { name: uid, version: String(i), bytes });
  }
  const listeners = new Set<(c: readonly ChangeSet[]) => void>();
  return {
    get: (type, name) => (type === ADDRESS_TYPE_URL ? addresses.get(name) : undefined),
    all: (type) => (type === ADDRESS_TYPE_URL ? addresses.values() : []),
    workloadsOnNode: () => [],
    subscribe: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    change(name, r) {
      if (r) addresses.set(name, r);
      else addresses.delete(name);
      for (const l of listeners) l([{ typeUrl: ADDRESS_TYPE_URL, updated: r ? [name] : [], removed: r ? [] : [name] }]);
    },
  };
}

async function walk<T>(debug: DebugRouter, name: string, query: string, items: (body: unknown) => T[]) {
  const seen: T[] = [];
  let pages = 0;
  let largest = 0;
  let token: string | undefined;
  do {
    const params = new URLSearchParams(query);
    if (token) params.set('continue', token);
    const out: DebugResponse = await debug.handle(name, {
      path: `/debug/${name}`,
      query: params,
      method: 'GET',
      body: '',
    });
    expect(out.status ?? 200).toBe(200);
    const page = items(out.body);
    largest = Math.max(largest, page.length);
    seen.push(...page);
    token = out.headers?.[DEBUG_CONTINUE_HEADER];
    pages++;
  } while (token !== undefined && pages <= WORKLOADS);
  return { seen, pages, largest };
}

function expectEachOnce(seen: readonly string[]): void {
  expect(seen).toHaveLength(WORKLOADS);
  expect(new Set(seen).size).toBe(WORKLOADS);
}

// One fixture for the workload tests (encoding 100k workloads is most of their cost); the test that
// changes it runs last.
let index: ReturnType<typeof syntheticIndex>;
let ambientDebug: DebugRouter;
beforeAll(() => {
  index = syntheticIndex();
  ambientDebug = new DebugRouter();
  registerAmbientDebug(ambientDebug, index);
});

test('/debug/ambient/workloads at 100k: pages of at most MAX_DEBUG_PAGE_SIZE, each workload exactly once', async () => {
  const debug = ambientDebug;
  const { seen, pages, largest } = await walk(debug, 'ambient/workloads', '', (b) =>
    (b as { uid: string }[]).map((w) => w.uid),
  );
  expect(largest).toBe(MAX_DEBUG_PAGE_SIZE);
  expect(pages).toBe(WORKLOADS / MAX_DEBUG_PAGE_SIZE);
  expectEachOnce(seen);
  // Stable order: the walk is sorted by resource name.
  expect(seen.slice(0, 3)).toEqual([...seen].sort().slice(0, 3));
});

test('/debug/ambient/workloads: a workload removed mid-walk is not repeated and no other is skipped', async () => {
  const debug = ambientDebug;
  const req = (query: string) =>
    debug.handle('ambient/workloads', { path: '', query: new URLSearchParams(query), method: 'GET', body: '' });
  const first = await req('limit=1000');
  const firstUids = (first.body as { uid: string }[]).map((w) => w.uid);
  const gone = firstUids[10] ?? '';
  index.change(gone, undefined);
  const second = await req(`limit=1000&continue=${first.headers?.[DEBUG_CONTINUE_HEADER] ?? ''}`);
  const secondUids = (second.body as { uid: string }[]).map((w) => w.uid);
  expect(secondUids).toHaveLength(1000);
  expect(secondUids.some((u) => firstUids.includes(u))).toBe(false);
  expect(secondUids[0]! > firstUids[firstUids.length - 1]!).toBe(true);
});

test('/debug/config?kind=Pod at 100k pods: bounded pages, each pod exactly once', async () => {
  const store = new MemoryStore();
  const pods: KubeObject[] = [];
  for (let i = 0; i < WORKLOADS; i++) pods.push({ metadata: { name: `pod-${i}`, namespace: `ns-${i % NAMESPACES}` } });
  store.upsert('Pod', pods);
  const debug = new DebugRouter();
  registerBuiltinDebug(debug, store, staticMesh());
  let total = 0;
  const { seen, largest } = await walk(debug, 'config', 'kind=Pod', (b) => {
    const body = b as { total: number; objects: { metadata: { namespace: string; name: string } }[] };
    total = body.total;
    return body.objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
  });
  expect(total).toBe(WORKLOADS);
  expect(largest).toBe(MAX_DEBUG_PAGE_SIZE);
  expectEachOnce(seen);
});
