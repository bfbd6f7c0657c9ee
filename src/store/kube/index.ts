// Kubernetes mode in one call: load the kubeconfig, start waiting for the API server to answer, and
// build the source (informers into the store), the leader elector and the write helpers on one client.

import { hostname } from 'node:os';
import type { StoreWriter } from '../types';
import { KubeClient } from './client';
import { loadKubeConfig } from './config';
import { ApiServerReachability } from './reachability';
import { KubeLeaderElector, type LeaderTiming } from './leader';
import type { DiscoverySelectorSource } from './namespace-filter';
import { KubeSource } from './source';
import { KubeWriter } from './writes';

export { KubeClient, KubeApiError, resourcePath } from './client';
export { loadKubeConfig, assertReachable, KubeUnreachableError } from './config';
export { KubeSource, syncPart } from './source';
export type { KindStatus } from './kind-watcher';
export { KubeWriter } from './writes';
export { ApiServerReachability, REACHABILITY_BACKOFF } from './reachability';
export type { TokenReviewResult, ConfigMapAction } from './writes';
export { KubeLeaderElector, LEASE_NAMES, DEFAULT_LEADER_TIMING } from './leader';

export interface KubernetesBackend {
  client: KubeClient;
  source: KubeSource;
  leader: KubeLeaderElector;
  writer: KubeWriter;
  /** GET /version until it answers; the source is started once it has. */
  reachability: ApiServerReachability;
}

export interface ConnectOptions {
  /** --kubeconfig; '' means in-cluster, then $KUBECONFIG, then ~/.kube/config. */
  kubeconfig: string;
  /** POD_NAMESPACE. */
  systemNamespace: string;
  /** POD_NAME: the leader election identity. */
  podName: string;
  /** REVISION: the leader election key (istiod's revision priority). */
  revision?: string;
  store: StoreWriter;
  mesh?: DiscoverySelectorSource;
  leaderTiming?: Partial<LeaderTiming>;
}

/**
 * Throws KubeUnreachableError (with advice to use --configDir) when no cluster is configured. An
 * API server that does not answer yet is waited for (backend.reachability), never an error.
 */
export async function connectKubernetes(o: ConnectOptions): Promise<KubernetesBackend> {
  const identity = o.podName || `${hostname()}-${process.pid}`;
  const client = new KubeClient(loadKubeConfig(o.kubeconfig), `istiod-ts/${identity}`);
  return Promise.resolve({
    client,
    reachability: new ApiServerReachability(client),
    source: new KubeSource({
      client,
      writer: o.store,
      systemNamespace: o.systemNamespace,
      ...(o.mesh ? { mesh: o.mesh } : {}),
    }),
    leader: new KubeLeaderElector({
      client,
      namespace: o.systemNamespace,
      identity,
      ...(o.revision !== undefined ? { revision: o.revision } : {}),
      ...(o.leaderTiming ? { timing: o.leaderTiming } : {}),
    }),
    writer: new KubeWriter(client),
  });
}
