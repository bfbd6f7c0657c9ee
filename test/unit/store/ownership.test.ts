import { canonicalJson } from '../../../src/store/local/canonical';
import type { ParsedObject } from '../../../src/store/local/manifest';
import { diffStates, resolveOwnership, type Stored } from '../../../src/store/local/ownership';

const cm = (name: string, data: Record<string, string>, line = 1): ParsedObject => ({
  kind: 'ConfigMap',
  line,
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'a', uid: `u-${name}` }, data },
});

describe('resolveOwnership', () => {
  test('the same object in two files: the file loaded first keeps it and the other copy is reported on its own file and line', () => {
    const { desired, duplicates } = resolveOwnership([
      { file: 'z-later.yaml', order: 1, objects: [cm('shared', { v: 'later' }, 7)] },
      { file: 'a-first.yaml', order: 0, objects: [cm('shared', { v: 'first' })] },
    ]);
    expect(desired.get('ConfigMap|a/shared')?.object.data).toEqual({ v: 'first' });
    expect(duplicates).toEqual([
      {
        file: 'z-later.yaml',
        line: 7,
        message: 'ConfigMap a/shared is already defined in a-first.yaml; this copy is ignored',
      },
    ]);
  });

  test('when the owning file no longer defines the object, the next file in load order takes it over', () => {
    const { desired, duplicates } = resolveOwnership([
      { file: 'a-first.yaml', order: 0, objects: [] },
      { file: 'z-later.yaml', order: 1, objects: [cm('shared', { v: 'later' })] },
    ]);
    expect(desired.get('ConfigMap|a/shared')?.file).toBe('z-later.yaml');
    expect(duplicates).toEqual([]);
  });
});

describe('diffStates', () => {
  const counter = () => {
    let n = 0;
    return () => String(++n);
  };
  const now = () => '2026-01-01T00:00:00.000Z';

  test('new objects are added with a fresh resourceVersion and a creationTimestamp', () => {
    const { desired } = resolveOwnership([{ file: 'f', order: 0, objects: [cm('x', { a: '1' })] }]);
    const { changes, counts } = diffStates(new Map(), desired, counter(), now);
    expect(counts).toEqual({ add: 1, update: 0, delete: 0 });
    expect(changes[0]?.object.metadata).toMatchObject({ resourceVersion: '1', creationTimestamp: now() });
  });

  test('an unchanged object gets no change and keeps its stored resourceVersion', () => {
    const { desired } = resolveOwnership([{ file: 'f', order: 0, objects: [cm('x', { a: '1' })] }]);
    const first = diffStates(new Map(), desired, counter(), now);
    const again = resolveOwnership([{ file: 'f', order: 0, objects: [cm('x', { a: '1' })] }]).desired;
    const { changes, next } = diffStates(first.next, again, () => '999', now);
    expect(changes).toEqual([]);
    expect(next.get('ConfigMap|a/x')?.stored.metadata.resourceVersion).toBe('1');
  });

  test('a changed object is an update with the next resourceVersion and the original creationTimestamp', () => {
    const current = new Map<string, Stored>();
    const { desired } = resolveOwnership([{ file: 'f', order: 0, objects: [cm('x', { a: '1' })] }]);
    const first = diffStates(
      current,
      desired,
      () => '1',
      () => 'created',
    );
    const changed = resolveOwnership([{ file: 'f', order: 0, objects: [cm('x', { a: '2' })] }]).desired;
    const { changes, counts } = diffStates(
      first.next,
      changed,
      () => '2',
      () => 'later',
    );
    expect(counts).toEqual({ add: 0, update: 1, delete: 0 });
    expect(changes[0]?.object.metadata).toMatchObject({ resourceVersion: '2', creationTimestamp: 'created' });
  });

  test('an object no longer desired is deleted with its last stored state', () => {
    const { desired } = resolveOwnership([{ file: 'f', order: 0, objects: [cm('x', { a: '1' })] }]);
    const first = diffStates(new Map(), desired, () => '1', now);
    const { changes, counts } = diffStates(first.next, new Map(), () => '2', now);
    expect(counts).toEqual({ add: 0, update: 0, delete: 1 });
    expect(changes[0]).toMatchObject({ deleted: true, object: { metadata: { resourceVersion: '1' } } });
  });
});

describe('canonicalJson', () => {
  test('key order does not matter, array order does', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, 2], c: null } })).toBe(canonicalJson({ a: { c: null, d: [1, 2] }, b: 1 }));
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });
});
