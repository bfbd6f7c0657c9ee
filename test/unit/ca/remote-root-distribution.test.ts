// Which remote clusters get the root ConfigMaps under EXTERNAL_ISTIOD: those whose system
// Namespace names this control plane's cluster in topology.istio.io/controlPlaneClusters, for as
// long as it does and as long as they are joined.

import {
  CONTROL_PLANE_CLUSTERS_ANNOTATION,
  namesControlPlane,
  RemoteRootDistribution,
} from '../../../src/ca/roots/remote-root-distribution';
import type { ClusterDirectory, ClusterEvent, MeshCluster } from '../../../src/store/clusters';
import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';

const NS = 'istio-system';

describe('namesControlPlane (istiod checkShouldLead)', () => {
  test.each([
    [undefined, false],
    ['', false],
    ['cluster-1', true],
    ['cluster-0,cluster-1', true],
    ['*', true],
    ['cluster-0,*', true],
    ['cluster-0', false],
    ['cluster-0, cluster-1', false], // entries are not trimmed, as in istiod
    ['Cluster-1', false],
  ])('%j names cluster-1: %j', (annotation, names) => {
    expect(namesControlPlane(annotation, 'cluster-1')).toBe(names);
  });
});

function systemNamespace(annotation?: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: NS,
      ...(annotation !== undefined ? { annotations: { [CONTROL_PLANE_CLUSTERS_ANNOTATION]: annotation } } : {}),
    },
  };
}

function remote(id: string, annotation?: string): MeshCluster & { store: MemoryStore } {
  const store = new MemoryStore();
  store.upsert('Namespace', [systemNamespace(annotation)]);
  return { id, local: false, store, synced: () => true };
}

class Directory implements ClusterDirectory {
  readonly localId = 'cluster-1';
  readonly clusters = new Map<string, MeshCluster>();
  private readonly listeners = new Set<(e: ClusterEvent) => void>();
  constructor(local: MeshCluster) {
    this.clusters.set(local.id, local);
  }
  get(id: string) {
    return this.clusters.get(id);
  }
  list() {
    return [...this.clusters.values()];
  }
  subscribe(l: (e: ClusterEvent) => void) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  emit(type: ClusterEvent['type'], cluster: MeshCluster) {
    if (type === 'removed') this.clusters.delete(cluster.id);
    else this.clusters.set(cluster.id, cluster);
    for (const l of this.listeners) l({ type, cluster });
  }
}

function setup(initial: MeshCluster[] = []) {
  const local = remote('cluster-1', '*');
  const directory = new Directory({ ...local, local: true });
  for (const c of initial) directory.clusters.set(c.id, c);
  const log: string[] = [];
  const distribution = new RemoteRootDistribution(directory, NS, (cluster) => {
    log.push(`start ${cluster.id}`);
    return () => {
      log.push(`stop ${cluster.id}`);
      return Promise.resolve();
    };
  });
  const stop = distribution.run();
  return { directory, distribution, log, stop };
}

test('a joined remote naming this cluster is started, one that does not is not, and the local cluster never is', async () => {
  const { distribution, log, stop } = setup([
    remote('cluster-2', 'cluster-1'),
    remote('cluster-3', 'cluster-9'),
    remote('cluster-4'),
  ]);
  expect(log).toEqual(['start cluster-2']);
  expect(distribution.managed()).toEqual(['cluster-2']);
  await stop();
  expect(log).toEqual(['start cluster-2', 'stop cluster-2']);
});

test('the annotation is followed: added later starts, changed to another control plane stops, and one Namespace event never starts twice', async () => {
  const c2 = remote('cluster-2');
  const { distribution, log, stop } = setup([c2]);
  expect(log).toEqual([]);
  c2.store.upsert('Namespace', [systemNamespace('cluster-1')]);
  c2.store.upsert('Namespace', [systemNamespace('*,cluster-1')]);
  expect(log).toEqual(['start cluster-2']);
  // Another Namespace's events are not this one's.
  c2.store.upsert('Namespace', [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } }]);
  c2.store.upsert('Namespace', [systemNamespace('cluster-9')]);
  expect(log).toEqual(['start cluster-2', 'stop cluster-2']);
  expect(distribution.managed()).toEqual([]);
  // The system Namespace deleted: nothing to run under.
  c2.store.upsert('Namespace', [systemNamespace('cluster-1')]);
  c2.store.remove('Namespace', [systemNamespace('cluster-1')]);
  expect(log).toEqual(['start cluster-2', 'stop cluster-2', 'start cluster-2', 'stop cluster-2']);
  await stop();
});

test('clusters joining, replaced and leaving: a replacement restarts on its own store, a removed one stops and is no longer followed', async () => {
  const { directory, log, stop } = setup();
  const first = remote('cluster-2', 'cluster-1');
  directory.emit('added', first);
  const replacement = remote('cluster-2', 'cluster-1');
  directory.emit('updated', replacement);
  expect(log).toEqual(['start cluster-2', 'stop cluster-2', 'start cluster-2']);
  // The retired store's events no longer count.
  first.store.upsert('Namespace', [systemNamespace('cluster-9')]);
  expect(log).toHaveLength(3);
  directory.emit('removed', replacement);
  expect(log).toEqual(['start cluster-2', 'stop cluster-2', 'start cluster-2', 'stop cluster-2']);
  replacement.store.upsert('Namespace', [systemNamespace('*')]);
  expect(log).toHaveLength(4);
  await stop();
  expect(log).toHaveLength(4);
});

test('shutdown waits for every stop under way, and nothing starts after it', async () => {
  const directory = new Directory(remote('cluster-1'));
  const c2 = remote('cluster-2', 'cluster-1');
  directory.clusters.set(c2.id, c2);
  let finish: () => void = () => undefined;
  const distribution = new RemoteRootDistribution(directory, NS, () => () => new Promise<void>((r) => (finish = r)));
  const stop = distribution.run();
  let stopped = false;
  const stopping = stop().then(() => (stopped = true));
  await new Promise((r) => setImmediate(r));
  expect(stopped).toBe(false);
  finish();
  await stopping;
  expect(stopped).toBe(true);
  directory.emit('added', remote('cluster-3', '*'));
  expect(distribution.managed()).toEqual([]);
});

test('a failing stop is logged, not thrown, and shutdown still completes', async () => {
  const directory = new Directory(remote('cluster-1'));
  directory.clusters.set('cluster-2', remote('cluster-2', '*'));
  const distribution = new RemoteRootDistribution(directory, NS, () => () => Promise.reject(new Error('API down')));
  await expect(distribution.run()()).resolves.toBeUndefined();
});
