// The clusters of a mesh as the rest of the server sees them: the cluster istiod-ts runs in (the
// config cluster) and the remote clusters joined by remote secrets (store/kube/remote-clusters.ts).
// Each has its own object store, fed by its own watches; consumers (the CA, the ambient index)
// look a cluster up by the id ztunnel names in its `clusterid` header or in a workload's uid.

import type { KubeClient } from './kube/client';
import type { ObjectStore } from './types';

/** The kinds a remote cluster contributes; Istio config (ServiceEntry, policies, ...) is read from the config cluster only, as in istiod. */
export const REMOTE_KINDS = ['Namespace', 'Node', 'Pod', 'Service', 'EndpointSlice', 'Gateway'] as const;

export interface MeshCluster {
  readonly id: string;
  /** True for the cluster istiod-ts runs in, whose Istio config applies to every cluster. */
  readonly local: boolean;
  /** The cluster's own objects: every watched kind for the local cluster, REMOTE_KINDS for a remote. */
  readonly store: ObjectStore;
  /** Its API server (TokenReview against this cluster); absent in local mode. */
  readonly client?: KubeClient;
  /** True once every initial list of this cluster is in. */
  synced(): boolean;
}

/**
 * added: a new cluster, once synced or once PILOT_REMOTE_CLUSTER_TIMEOUT passed.
 * updated: its secret changed; `cluster` is the replacement (a new store), delivered once it has synced
 *   or timed out, and the previous one is stopped after the event (consumers swap without a gap).
 * removed: its secret or its key is gone.
 */
export interface ClusterEvent {
  type: 'added' | 'updated' | 'removed';
  cluster: MeshCluster;
}

export interface ClusterDirectory {
  readonly localId: string;
  get(id: string): MeshCluster | undefined;
  /** The local cluster first, then the remotes in id order. */
  list(): readonly MeshCluster[];
  /** Returns an unsubscribe function. */
  subscribe(listener: (event: ClusterEvent) => void): () => void;
}

/** The directory of a server with no remote clusters (local mode, or no remote secrets yet). */
export function singleCluster(cluster: MeshCluster): ClusterDirectory {
  return {
    localId: cluster.id,
    get: (id) => (id === cluster.id ? cluster : undefined),
    list: () => [cluster],
    subscribe: () => () => undefined,
  };
}
