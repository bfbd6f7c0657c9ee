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
});
