// PerCluster: one value per MeshCluster object, built as a cluster joins, rebuilt when its secret
// changes (a new object under the same id), disposed of when it leaves or the owner closes.

import { PerCluster } from '../../../src/security/per-cluster';
import { MemoryStore } from '../../../src/store/memory-store';
import { meshCluster, TestClusterDirectory } from '../../support/cluster-directory';

function setup() {
  const east = meshCluster('east', new MemoryStore(), { local: true });
  const west = meshCluster('west', new MemoryStore());
  const dir = new TestClusterDirectory('east', [east, west]);
  const built: string[] = [];
  const disposed: string[] = [];
  let n = 0;
  const values = new PerCluster(
    dir,
    (c) => {
      const v = `${c.id}#${++n}`;
      built.push(v);
      return v;
    },
    (v) => disposed.push(v),
  );
  return { dir, east, west, values, built, disposed };
}

describe('PerCluster', () => {
  it('builds a value for every cluster at once, and answers each id with its own', () => {
    const { values, built } = setup();
    expect(built).toEqual(['east#1', 'west#2']);
    expect(values.get('east')).toBe('east#1');
    expect(values.get('west')).toBe('west#2');
    expect(values.get('north')).toBeUndefined();
    expect(built).toHaveLength(2);
  });

  it('builds for an added cluster when it is added', () => {
    const { dir, values, built } = setup();
    dir.add(meshCluster('north', new MemoryStore()));
    expect(built).toContain('north#3');
    expect(values.get('north')).toBe('north#3');
  });

  it('swaps an updated cluster: the replacement gets a new value, the old one is disposed of', () => {
    const { dir, values, disposed } = setup();
    dir.update(meshCluster('west', new MemoryStore()));
    expect(disposed).toEqual(['west#2']);
    expect(values.get('west')).toBe('west#3');
  });

  it('disposes of a removed cluster and answers nothing for it', () => {
    const { dir, values, disposed } = setup();
    dir.remove('west');
    expect(disposed).toEqual(['west#2']);
    expect(values.get('west')).toBeUndefined();
    expect(values.ids()).toEqual(['east']);
  });

  it('asks the directory on every call, so a change it has not been told of yet is not missed', () => {
    const east = meshCluster('east', new MemoryStore(), { local: true });
    const west = meshCluster('west', new MemoryStore());
    const clusters = new Map([
      ['east', east],
      ['west', west],
    ]);
    // A directory whose events have not arrived: get() already says what holds now.
    const quiet = {
      localId: 'east',
      get: (id: string) => clusters.get(id),
      list: () => [...clusters.values()],
      subscribe: () => () => undefined,
    };
    const disposed: string[] = [];
    const values = new PerCluster(
      quiet,
      (c) => c,
      (c) => disposed.push(c.id),
    );
    const replacement = meshCluster('west', new MemoryStore());
    clusters.set('west', replacement);
    expect(values.get('west')).toBe(replacement);
    expect(disposed).toEqual(['west']);
    clusters.delete('west');
    expect(values.get('west')).toBeUndefined();
    expect(disposed).toEqual(['west', 'west']);
  });

  it('ignores the removal of an object it already replaced', () => {
    const { dir, west, values, disposed } = setup();
    const replacement = meshCluster('west', new MemoryStore());
    dir.update(replacement);
    // A late removal event of the replaced object must not take the replacement's value.
    dir.emit({ type: 'removed', cluster: west });
    expect(values.get('west')).toBe('west#3');
    expect(disposed).toEqual(['west#2']);
  });

  it('close() stops following the directory and disposes of everything', () => {
    const { dir, values, disposed } = setup();
    values.close();
    expect(disposed.sort()).toEqual(['east#1', 'west#2']);
    expect(dir.subscribers).toBe(0);
  });
});
