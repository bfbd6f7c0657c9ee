// One value per cluster of a ClusterDirectory (store/clusters.ts): a token verifier, a node
// authorizer. Each is built over exactly one MeshCluster object, so a cluster whose secret changed
// (`updated`: a new store, a new client) never keeps answering from the state of the one it
// replaced, and a removed cluster's value is disposed of (its pod subscription ended) at once.

import type { ClusterDirectory, ClusterEvent, MeshCluster } from '../store/clusters';

interface Entry<T> {
  cluster: MeshCluster;
  value: T;
}

export class PerCluster<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly unsubscribe: () => void;

  /**
   * Builds a value for every cluster at once (a node authorizer registers its index before the
   * first CSR, not during it), then follows the directory's events.
   */
  constructor(
    private readonly directory: ClusterDirectory,
    private readonly build: (cluster: MeshCluster) => T,
    private readonly dispose: (value: T) => void = () => undefined,
  ) {
    for (const cluster of directory.list()) this.entry(cluster);
    this.unsubscribe = directory.subscribe((event) => this.onEvent(event));
  }

  /**
   * The value of the cluster the directory holds under `id` now; undefined when it holds none. The
   * directory is asked on every call, so an event this object has not seen yet cannot leave a
   * removed or replaced cluster answering.
   */
  get(id: string): T | undefined {
    const cluster = this.directory.get(id);
    if (!cluster) {
      this.drop(id);
      return undefined;
    }
    return this.entry(cluster).value;
  }

  /** The clusters a value is held for (debugging and tests). */
  ids(): string[] {
    return [...this.entries.keys()].sort();
  }

  /** Stops following the directory and disposes of every value. */
  close(): void {
    this.unsubscribe();
    for (const id of [...this.entries.keys()]) this.drop(id);
  }

  private entry(cluster: MeshCluster): Entry<T> {
    const held = this.entries.get(cluster.id);
    if (held?.cluster === cluster) return held;
    if (held) this.dispose(held.value);
    const next = { cluster, value: this.build(cluster) };
    this.entries.set(cluster.id, next);
    return next;
  }

  private drop(id: string): void {
    const held = this.entries.get(id);
    if (!held) return;
    this.entries.delete(id);
    this.dispose(held.value);
  }

  private onEvent(event: ClusterEvent): void {
    if (event.type !== 'removed') {
      this.entry(event.cluster);
      return;
    }
    // Only the object removed: a replacement already built under the same id stays.
    if (this.entries.get(event.cluster.id)?.cluster === event.cluster) this.drop(event.cluster.id);
  }
}
