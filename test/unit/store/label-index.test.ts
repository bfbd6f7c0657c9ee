import { LABEL_INDEX_ARRAY_LIMIT } from '../../../src/store/label-index';
import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';

function pod(name: string, ns: string, labels: Record<string, string>, rv = '1'): KubeObject {
  return { metadata: { name, namespace: ns, labels, resourceVersion: rv } };
}
const names = (found: Iterable<KubeObject>) => [...found].map((o) => o.metadata.name).sort();

function store(): MemoryStore {
  const s = new MemoryStore();
  s.addLabelIndex('Pod', 'labels', (o) => ({ scope: o.metadata.namespace ?? '', labels: o.metadata.labels }));
  return s;
}

describe('MemoryStore label indexes', () => {
  test('an object is found under each of its pairs, in its own scope only', () => {
    const s = store();
    s.upsert('Pod', [pod('a', 'ns1', { app: 'web', tier: 'x' }), pod('b', 'ns2', { app: 'web' })]);
    const index = s.labelIndex('Pod', 'labels');
    expect(names(index.withLabel('ns1', 'app', 'web'))).toEqual(['a']);
    expect(names(index.withLabel('ns1', 'tier', 'x'))).toEqual(['a']);
    expect(names(index.withLabel('ns2', 'app', 'web'))).toEqual(['b']);
    expect(names(index.withLabel('ns2', 'tier', 'x'))).toEqual([]);
    expect(names(index.withLabel('ns3', 'app', 'web'))).toEqual([]);
    expect([...index.scopes()].sort()).toEqual(['ns1', 'ns2']);
  });

  test('an update moves the object from its old pairs to its new ones, and an emptied scope is forgotten', () => {
    const s = store();
    s.upsert('Pod', [pod('a', 'ns1', { app: 'web' })]);
    s.upsert('Pod', [pod('a', 'ns1', { app: 'db' }, '2')]);
    const index = s.labelIndex('Pod', 'labels');
    expect(names(index.withLabel('ns1', 'app', 'web'))).toEqual([]);
    expect([...index.withLabel('ns1', 'app', 'db')][0]?.metadata.resourceVersion).toBe('2');
    s.remove('Pod', [pod('a', 'ns1', {})]);
    expect(names(index.withLabel('ns1', 'app', 'db'))).toEqual([]);
    expect(index.hasScope('ns1')).toBe(false);
  });

  test('a filing with `all` is found by selectingAll; no filing means not indexed', () => {
    const s = new MemoryStore();
    s.addLabelIndex('AuthorizationPolicy', 'selector', (o) =>
      o.metadata.name === 'none' ? undefined : { scope: o.metadata.namespace ?? '', all: true },
    );
    s.upsert('AuthorizationPolicy', [pod('every', 'ns1', {}), pod('none', 'ns1', {})]);
    const index = s.labelIndex('AuthorizationPolicy', 'selector');
    expect(names(index.selectingAll('ns1'))).toEqual(['every']);
    expect(index.hasScope('ns2')).toBe(false);
  });

  test('an index registered after objects exist files them at once; registering twice or asking an unknown one is an error', () => {
    const s = new MemoryStore();
    s.upsert('Pod', [pod('a', 'ns1', { app: 'web' })]);
    const fn = (o: KubeObject) => ({ scope: o.metadata.namespace ?? '', labels: o.metadata.labels });
    s.addLabelIndex('Pod', 'labels', fn);
    expect(names(s.labelIndex('Pod', 'labels').withLabel('ns1', 'app', 'web'))).toEqual(['a']);
    expect(() => s.addLabelIndex('Pod', 'labels', fn)).toThrow('label index "labels" on Pod is already registered');
    expect(() => s.labelIndex('Pod', 'nope')).toThrow('no label index "nope" on Pod');
  });

  test('a pair holding one, a few or many objects (string, array, Set inside) finds exactly the filed ones as they come and go', () => {
    const s = store();
    const index = s.labelIndex('Pod', 'labels');
    const count = LABEL_INDEX_ARRAY_LIMIT * 2 + 1;
    const all = Array.from({ length: count }, (_, i) => `p${String(i).padStart(3, '0')}`);
    const expected: string[] = [];
    for (const name of all) {
      s.upsert('Pod', [pod(name, 'ns1', { app: 'web' })]);
      expected.push(name);
      expect(names(index.withLabel('ns1', 'app', 'web'))).toEqual(expected);
    }
    // Re-filing an object already filed (an update with the same labels) does not list it twice.
    s.upsert('Pod', [pod('p000', 'ns1', { app: 'web' }, '2')]);
    expect(names(index.withLabel('ns1', 'app', 'web'))).toEqual(expected);
    for (const name of all) {
      s.remove('Pod', [pod(name, 'ns1', { app: 'web' })]);
      expected.splice(expected.indexOf(name), 1);
      expect(names(index.withLabel('ns1', 'app', 'web'))).toEqual(expected);
    }
    expect([...index.scopes()]).toEqual([]);
    // Back down to one and up again.
    s.upsert('Pod', [pod('x', 'ns1', { app: 'web' }), pod('y', 'ns1', { app: 'web' })]);
    s.remove('Pod', [pod('x', 'ns1', { app: 'web' })]);
    expect(names(index.withLabel('ns1', 'app', 'web'))).toEqual(['y']);
    expect(index.hasScope('ns1')).toBe(true);
    s.remove('Pod', [pod('y', 'ns1', { app: 'web' })]);
    expect(index.hasScope('ns1')).toBe(false);
    s.upsert('Pod', [pod('z', 'ns1', { app: 'web' })]);
    expect(index.hasScope('ns1')).toBe(true);
    expect(names(index.withLabel('ns1', 'app', 'web'))).toEqual(['z']);
  });
});
