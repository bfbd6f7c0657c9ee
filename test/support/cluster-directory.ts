// A ClusterDirectory a test drives by hand: what the remote-secret controller will do (add a cluster
// once synced, replace it when its secret changes, remove it), one call per event.

import type { ClusterDirectory, ClusterEvent, MeshCluster } from '../../src/store/clusters';
import type { KubeClient } from '../../src/store/kube/client';
import type { ObjectStore } from '../../src/store/types';

export function meshCluster(
  id: string,
  store: ObjectStore,
  opts: { local?: boolean; client?: KubeClient } = {},
): MeshCluster {
  return {
    id,
    local: opts.local ?? false,
    store,
    ...(opts.client ? { client: opts.client } : {}),
    synced: () => store.hasSynced(),
  };
}

export class TestClusterDirectory implements ClusterDirectory {
  private readonly clusters = new Map<string, MeshCluster>();
  private readonly listeners = new Set<(event: ClusterEvent) => void>();

  constructor(
    readonly localId: string,
    clusters: readonly MeshCluster[],
  ) {
    for (const c of clusters) this.clusters.set(c.id, c);
  }

  get(id: string): MeshCluster | undefined {
    return this.clusters.get(id);
  }

  list(): readonly MeshCluster[] {
    const remotes = [...this.clusters.values()].filter((c) => c.id !== this.localId);
    const local = this.clusters.get(this.localId);
    return [...(local ? [local] : []), ...remotes.sort((a, b) => a.id.localeCompare(b.id))];
  }

  subscribe(listener: (event: ClusterEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get subscribers(): number {
    return this.listeners.size;
  }

  add(cluster: MeshCluster): void {
    this.clusters.set(cluster.id, cluster);
    this.emit({ type: 'added', cluster });
  }

  /** The replacement is in place before the event, as the contract says (consumers swap without a gap). */
  update(cluster: MeshCluster): void {
    this.clusters.set(cluster.id, cluster);
    this.emit({ type: 'updated', cluster });
  }

  remove(id: string): void {
    const cluster = this.clusters.get(id);
    if (!cluster) return;
    this.clusters.delete(id);
    this.emit({ type: 'removed', cluster });
  }

  /** Delivers an event as given: the late or out-of-order event a consumer must survive. */
  emit(event: ClusterEvent): void {
    for (const l of [...this.listeners]) l(event);
  }
}
