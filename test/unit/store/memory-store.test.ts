import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject, StoreEvent } from '../../../src/store/types';

function pod(
  name: string,
  rv: string,
  extra: Partial<KubeObject['metadata']> = {},
  spec: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns1', uid: `uid-${name}`, resourceVersion: rv, ...extra },
    spec,
  };
}

function recording(store: MemoryStore): StoreEvent[][] {
  const batches: StoreEvent[][] = [];
  store.subscribe((events) => batches.push([...events]));
  return batches;
}

const summary = (batch: readonly StoreEvent[]) =>
  batch.map((e) => `${e.type} ${e.kind} ${e.object.metadata.namespace ?? ''}/${e.object.metadata.name}`);

describe('MemoryStore events', () => {
  test('upsert of a new object emits add, of a known one with a new resourceVersion emits update with the old object', () => {
    const store = new MemoryStore();
    const batches = recording(store);
    store.upsert('Pod', [pod('a', '1')]);
    store.upsert('Pod', [pod('a', '2', {}, { nodeName: 'n1' })]);
    expect(batches.map(summary)).toEqual([['add Pod ns1/a'], ['update Pod ns1/a']]);
    expect(batches[1]![0]!.old?.metadata.resourceVersion).toBe('1');
    expect(store.get('Pod', 'ns1', 'a')?.spec).toEqual({ nodeName: 'n1' });
  });

  test('an object with an unchanged resourceVersion and uid produces no event', () => {
    const store = new MemoryStore();
    store.upsert('Pod', [pod('a', '1')]);
    const batches = recording(store);
    store.upsert('Pod', [pod('a', '1')]);
    expect(batches).toEqual([]);
  });

  test('the same resourceVersion with a different uid is a new object and emits update', () => {
    const store = new MemoryStore();
    store.upsert('Pod', [pod('a', '1')]);
    const batches = recording(store);
    store.upsert('Pod', [pod('a', '1', { uid: 'recreated' })]);
    expect(batches.map(summary)).toEqual([['update Pod ns1/a']]);
  });

  test('delete emits the last stored state, and deleting an unknown object emits nothing', () => {
    const store = new MemoryStore();
    store.upsert('Pod', [pod('a', '1', { labels: { app: 'x' } })]);
    const batches = recording(store);
    store.remove('Pod', [{ metadata: { name: 'a', namespace: 'ns1' } }]);
    store.remove('Pod', [{ metadata: { name: 'ghost', namespace: 'ns1' } }]);
    expect(batches.map(summary)).toEqual([['delete Pod ns1/a']]);
    expect(batches[0]![0]!.object.metadata.labels).toEqual({ app: 'x' });
    expect(store.get('Pod', 'ns1', 'a')).toBeUndefined();
  });

  test('apply delivers a mixed batch of several kinds as one batch', () => {
    const store = new MemoryStore();
    store.upsert('Pod', [pod('old', '1')]);
    const batches = recording(store);
    store.apply([
      { kind: 'Pod', object: pod('new', '2') },
      { kind: 'Pod', object: pod('old', '1'), deleted: true },
      { kind: 'Namespace', object: { metadata: { name: 'ns1', resourceVersion: '3' } } },
    ]);
    expect(batches.map(summary)).toEqual([['add Pod ns1/new', 'delete Pod ns1/old', 'add Namespace /ns1']]);
  });

  test('replace emits exactly the difference: deletes for missing, adds for new, updates for changed, nothing for unchanged', () => {
    const store = new MemoryStore();
    store.upsert('Pod', [pod('keep', '1'), pod('change', '1'), pod('drop', '1')]);
    store.upsert('Service', [{ metadata: { name: 'svc', namespace: 'ns1', resourceVersion: '1' } }]);
    const batches = recording(store);
    store.replace('Pod', [pod('keep', '1'), pod('change', '2'), pod('fresh', '1')]);
    expect(batches.map(summary)).toEqual([['delete Pod ns1/drop', 'update Pod ns1/change', 'add Pod ns1/fresh']]);
    expect(store.list('Service')).toHaveLength(1);
  });

  test('replace with identical contents emits no batch at all', () => {
    const store = new MemoryStore();
    store.upsert('Pod', [pod('a', '1')]);
    const batches = recording(store);
    store.replace('Pod', [pod('a', '1')]);
    expect(batches).toEqual([]);
  });

  test('a throwing listener does not stop the listeners after it', () => {
    const store = new MemoryStore();
    const seen: string[] = [];
    store.subscribe(() => {
      throw new Error('broken consumer');
    });
    store.subscribe((events) => seen.push(...events.map((e) => e.object.metadata.name)));
    store.upsert('Pod', [pod('a', '1')]);
    expect(seen).toEqual(['a']);
  });

  test('a listener subscribed while a batch is delivered hears only later batches', () => {
    const store = new MemoryStore();
    const late: string[] = [];
    let subscribed = false;
    store.subscribe(() => {
      if (subscribed) return;
      subscribed = true;
      store.subscribe((events) => late.push(...events.map((e) => e.object.metadata.name)));
    });
    store.upsert('Pod', [pod('before', '1')]);
    store.upsert('Pod', [pod('after', '1')]);
    expect(late).toEqual(['after']);
  });

  test('an unsubscribed listener hears nothing more', () => {
    const store = new MemoryStore();
    const seen: string[] = [];
    const off = store.subscribe((events) => seen.push(...events.map((e) => e.object.metadata.name)));
    store.upsert('Pod', [pod('a', '1')]);
    off();
    store.upsert('Pod', [pod('b', '1')]);
    expect(seen).toEqual(['a']);
  });
});

describe('MemoryStore reads', () => {
  test('list by namespace returns only that namespace; without one, every object of the kind', () => {
    const store = new MemoryStore();
    store.upsert('Pod', [pod('a', '1'), pod('b', '1', { namespace: 'ns2' }), pod('c', '1', { namespace: 'ns2' })]);
    expect(
      store
        .list('Pod', 'ns2')
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(['b', 'c']);
    expect(store.list('Pod', 'ns1').map((p) => p.metadata.name)).toEqual(['a']);
    expect(store.list('Pod', 'empty')).toEqual([]);
    expect(store.list('Pod')).toHaveLength(3);
    expect(store.list('Service')).toEqual([]);
  });

  test('a namespace emptied by deletes lists nothing', () => {
    const store = new MemoryStore();
    store.upsert('Pod', [pod('a', '1')]);
    store.remove('Pod', [pod('a', '1')]);
    expect(store.list('Pod', 'ns1')).toEqual([]);
    expect(store.count('Pod')).toBe(0);
  });

  test('cluster-scoped objects are keyed by name alone', () => {
    const store = new MemoryStore();
    store.upsert('Node', [{ metadata: { name: 'node-a', resourceVersion: '1' } }]);
    expect(store.get('Node', undefined, 'node-a')?.metadata.name).toBe('node-a');
    expect(store.list('Node', '')).toHaveLength(1);
  });
});

describe('MemoryStore indexes', () => {
  const byNode = (o: KubeObject): string[] => {
    const node = (o.spec as { nodeName?: string } | undefined)?.nodeName;
    return node ? [node] : [];
  };

  test('an index registered before objects exist files them as they arrive', () => {
    const store = new MemoryStore();
    store.addIndex('Pod', 'node', byNode);
    store.upsert('Pod', [pod('a', '1', {}, { nodeName: 'n1' }), pod('b', '1', {}, { nodeName: 'n2' })]);
    expect(store.byIndex('Pod', 'node', 'n1').map((p) => p.metadata.name)).toEqual(['a']);
  });

  test('an index registered after objects exist indexes them at once', () => {
    const store = new MemoryStore();
    store.upsert('Pod', [pod('a', '1', {}, { nodeName: 'n1' }), pod('b', '1', {}, { nodeName: 'n1' })]);
    store.addIndex('Pod', 'node', byNode);
    expect(
      store
        .byIndex('Pod', 'node', 'n1')
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(['a', 'b']);
  });

  test('an object with several keys is found under each of them', () => {
    const store = new MemoryStore();
    store.addIndex('Pod', 'ip', (o) =>
      ((o.status as { podIPs?: { ip: string }[] } | undefined)?.podIPs ?? []).map((x) => x.ip),
    );
    store.upsert('Pod', [{ ...pod('dual', '1'), status: { podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }] } }]);
    expect(store.byIndex('Pod', 'ip', '10.0.0.1').map((p) => p.metadata.name)).toEqual(['dual']);
    expect(store.byIndex('Pod', 'ip', 'fd00::1').map((p) => p.metadata.name)).toEqual(['dual']);
  });

  test('an update moves the object from its old keys to its new ones', () => {
    const store = new MemoryStore();
    store.addIndex('Pod', 'node', byNode);
    store.upsert('Pod', [pod('a', '1', {}, { nodeName: 'n1' })]);
    store.upsert('Pod', [pod('a', '2', {}, { nodeName: 'n2' })]);
    expect(store.byIndex('Pod', 'node', 'n1')).toEqual([]);
    expect(store.byIndex('Pod', 'node', 'n2')[0]?.metadata.resourceVersion).toBe('2');
  });

  test('an index key that is not a string (a hostile nodeName: 123) is refiled and unfiled without a crash', () => {
    // Found by the manifest fuzz slice: a lone key was kept as it is, and a number is not iterable.
    const store = new MemoryStore();
    store.addIndex('Pod', 'node', byNode);
    const numeric = (rv: string) => ({ ...pod('a', rv), spec: { nodeName: 123 } }) as unknown as KubeObject;
    store.upsert('Pod', [numeric('1')]);
    expect(() => store.upsert('Pod', [numeric('2')])).not.toThrow();
    store.upsert('Pod', [pod('a', '3', {}, { nodeName: 'n1' })]);
    expect(store.byIndex('Pod', 'node', 'n1')[0]?.metadata.resourceVersion).toBe('3');
    expect(() => store.remove('Pod', [pod('a', '3')])).not.toThrow();
    expect(store.byIndex('Pod', 'node', 'n1')).toEqual([]);
  });

  test('a deleted object leaves every index', () => {
    const store = new MemoryStore();
    store.addIndex('Pod', 'node', byNode);
    store.upsert('Pod', [pod('a', '1', {}, { nodeName: 'n1' })]);
    store.remove('Pod', [pod('a', '1')]);
    expect(store.byIndex('Pod', 'node', 'n1')).toEqual([]);
  });

  test('an object is unfiled from the keys of the object the store held, not of the one a remove names', () => {
    // Indexes keep no record of where they filed an object: the held object is filed again through
    // the index function to find its keys.
    const store = new MemoryStore();
    store.addIndex('Pod', 'node', byNode);
    store.addLabelIndex('Pod', 'labels', (o) => ({ scope: o.metadata.namespace ?? '', labels: o.metadata.labels }));
    store.upsert('Pod', [pod('a', '1', { labels: { app: 'web' } }, { nodeName: 'n1' })]);
    store.upsert('Pod', [pod('a', '2', { labels: { app: 'db' } }, { nodeName: 'n2' })]);
    store.remove('Pod', [pod('a', '9', { labels: { app: 'other' } }, { nodeName: 'n9' })]);
    for (const n of ['n1', 'n2', 'n9']) expect(store.byIndex('Pod', 'node', n)).toEqual([]);
    const labels = store.labelIndex('Pod', 'labels');
    for (const app of ['web', 'db', 'other']) expect([...labels.withLabel('ns1', 'app', app)]).toEqual([]);
    expect([...labels.scopes()]).toEqual([]);
  });

  test('registering the same index name twice on a kind is an error; the same name on another kind is not', () => {
    const store = new MemoryStore();
    store.addIndex('Pod', 'node', byNode);
    expect(() => store.addIndex('Pod', 'node', byNode)).toThrow('index "node" on Pod is already registered');
    expect(() => store.addIndex('Service', 'node', byNode)).not.toThrow();
  });

  test('asking an index that was never registered is an error naming it', () => {
    expect(() => new MemoryStore().byIndex('Pod', 'nope', 'x')).toThrow('no index "nope" on Pod');
    expect(() => new MemoryStore().indexed('Pod', 'nope', 'x')).toThrow('no index "nope" on Pod');
  });

  test('indexed yields what byIndex lists, without a copy, and nothing for an empty key', () => {
    const store = new MemoryStore();
    store.addIndex('Pod', 'node', byNode);
    store.upsert('Pod', [pod('a', '1', {}, { nodeName: 'n1' }), pod('b', '1', {}, { nodeName: 'n1' })]);
    expect([...store.indexed('Pod', 'node', 'n1')]).toEqual(store.byIndex('Pod', 'node', 'n1'));
    expect([...store.indexed('Pod', 'node', 'n9')]).toEqual([]);
  });
});

describe('MemoryStore sync', () => {
  test('a store with no expected parts is not synced', () => {
    expect(new MemoryStore().hasSynced()).toBe(false);
  });

  test('the store is synced only when every expected part is marked, and whenSynced resolves then', async () => {
    const store = new MemoryStore();
    store.expectSync('pods');
    store.expectSync('services');
    let resolved = false;
    const waiting = store.whenSynced().then(() => (resolved = true));
    store.markSynced('pods');
    await Promise.resolve();
    expect(resolved).toBe(false);
    expect(store.unsyncedParts()).toEqual(['services']);
    store.markSynced('services');
    await waiting;
    expect(resolved).toBe(true);
    expect(store.hasSynced()).toBe(true);
    await expect(store.whenSynced()).resolves.toBeUndefined();
  });
});
