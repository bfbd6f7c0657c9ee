// Picks the object source and the leader elector for the mode: a folder in local mode, the
// Kubernetes API otherwise, and the mesh's clusters: in Kubernetes mode the config cluster and the
// remote clusters its remote secrets join (store/kube/remote-clusters.ts), in local mode one.

import { Counter, Gauge, Registry } from 'prom-client';
import type { ServeOptions } from '../config/options';
import { LocalSource } from '../store/local/local-source';
import { connectKubernetes, KubeClient } from '../store/kube';
import type { MemoryStore } from '../store/memory-store';
import type { IgnoredObjects } from '../store/ignored';
import type { ConfigSource } from '../store/types';
import type { MeshConfigSource } from '../mesh/types';
import type { DebugRegistry, Readiness } from '../contract/host';
import type { LeaderElector } from '../contract/leader';
import { KubeLeaderElector, type LeaderTiming } from '../store/kube/leader';
import { singleCluster, type ClusterDirectory, type MeshCluster } from '../store/clusters';
import { RemoteClusters } from '../store/kube/remote-clusters';
import { SoleLeader } from './leader';
import { scopedLogger } from '../log/logger';

const log = scopedLogger('server');

export interface SourceAndLeader {
  source: ConfigSource;
  leader: LeaderElector & { stop(): Promise<void> };
  /** Kubernetes mode: the client the components' own API calls use. */
  kube?: KubeClient;
  /** Kubernetes mode: resolves once the API server has answered (it is waited for, with backoff). */
  reachable?: Promise<void>;
  /** The mesh's clusters: this one first, then (Kubernetes mode) those joined by remote secrets. */
  clusters: ClusterDirectory;
  /**
   * Kubernetes mode: an elector on a remote cluster's locks with this replica's identity, revision
   * and timing, for what it writes there under EXTERNAL_ISTIOD.
   */
  remoteElector?: (client: KubeClient) => LeaderElector & { stop(): Promise<void> };
}

export interface SourceDeps {
  store: MemoryStore;
  mesh: MeshConfigSource;
  metrics: Registry;
  debug: DebugRegistry;
  /** Objects the server does not act on; local mode reports the kinds it does not use here. */
  ignored?: IgnoredObjects;
  /** Kubernetes mode: leader election timing (ServerSeams); istiod's by default. */
  leaderTiming?: Partial<LeaderTiming>;
  /** Kubernetes mode registers API_SERVER_READINESS here: not ready, with the last error, until the API server answers. */
  readiness?: Readiness;
}

/** The /ready condition of Kubernetes mode's wait for the API server at start-up. */
export const API_SERVER_READINESS = 'kubernetes API server';

function localSource(options: ServeOptions, deps: SourceDeps): SourceAndLeader {
  const errors = new Gauge({
    name: 'istiod_ts_local_config_errors',
    help: 'Files under --configDir that cannot be loaded, plus ignored duplicates',
    registers: [deps.metrics],
  });
  const objects = new Gauge({
    name: 'istiod_ts_local_config_objects',
    help: 'Objects loaded from --configDir',
    registers: [deps.metrics],
  });
  const events = new Counter({
    name: 'istiod_ts_local_config_events_total',
    help: 'Store events produced by --configDir changes',
    labelNames: ['type'],
    registers: [deps.metrics],
  });
  const source = new LocalSource({
    dir: options.flags.configDir,
    writer: deps.store,
    ...(deps.ignored ? { ignored: deps.ignored } : {}),
    onReload: (stats) => {
      errors.set(stats.errors);
      objects.set(stats.objects);
      for (const type of ['add', 'update', 'delete'] as const)
        if (stats.events[type]) events.inc({ type }, stats.events[type]);
    },
  });
  deps.debug.add(
    'localconfig',
    'files under --configDir that cannot be loaded (parse errors, files past a limit, parser time or heap limits) and ignored duplicates, with file, line and reason',
    () => ({
      body: { dir: options.flags.configDir, errors: source.errors() },
    }),
  );
  const local: MeshCluster = {
    id: options.env.CLUSTER_ID,
    local: true,
    store: deps.store,
    synced: () => deps.store.hasSynced(),
  };
  return { source, leader: new SoleLeader(), clusters: singleCluster(local) };
}

async function kubernetesSource(options: ServeOptions, deps: SourceDeps): Promise<SourceAndLeader> {
  // Throws KubeUnreachableError pointing at --configDir when no cluster is configured; an API server
  // that does not answer yet is waited for, not-ready with the reason on /ready, never an exit.
  const kube = await connectKubernetes({
    kubeconfig: options.flags.kubeconfig,
    systemNamespace: options.env.POD_NAMESPACE,
    podName: options.env.POD_NAME,
    revision: options.env.REVISION,
    store: deps.store,
    mesh: deps.mesh,
    ...(deps.leaderTiming ? { leaderTiming: deps.leaderTiming } : {}),
  });
  deps.debug.add('kubernetes', 'watched kinds: synced, objects, resourceVersion, failures, missing CRDs', () => ({
    body: kube.source.status(),
  }));
  const local: MeshCluster = {
    id: options.env.CLUSTER_ID,
    local: true,
    store: deps.store,
    client: kube.client,
    synced: () => deps.store.hasSynced(),
  };
  const clusters = new RemoteClusters({
    client: kube.client,
    local,
    systemNamespace: options.env.POD_NAMESPACE,
    mesh: deps.mesh,
    syncTimeoutMs: options.env.PILOT_REMOTE_CLUSTER_TIMEOUT,
    userAgent: options.env.POD_NAME ? `istiod-ts/${options.env.POD_NAME}` : 'istiod-ts',
    metrics: deps.metrics,
    ...(deps.readiness ? { readiness: deps.readiness } : {}),
  });
  deps.debug.add(
    'clusters',
    "the mesh's clusters: this one and those joined by remote secrets (istio/multiCluster=true), each with its secret, sync state, per-kind watch status and last error; and each remote secret's keys that were not joined, with why",
    () => {
      const remote = clusters.status();
      return {
        body: {
          clusters: [
            { id: local.id, local: true, synced: local.synced(), kinds: kube.source.status() },
            ...remote.remotes.map((r) => ({ ...r, local: false })),
          ],
          secrets: remote.secrets,
          secretsSynced: remote.secretsSynced,
          ...(remote.secretsWatch ? { secretsWatch: remote.secretsWatch } : {}),
        },
      };
    },
  );
  const { reachability } = kube;
  const markReachable = deps.readiness?.register(API_SERVER_READINESS, () => reachability.waitingFor());
  // The watches start once the API server has answered, so none of them sits out a long backoff
  // that an outage at start-up ran up; until then the store is not synced and xDS refuses streams.
  const source: ConfigSource = {
    start: () => {
      reachability.reachable
        .then(async () => {
          markReachable?.(true);
          await kube.source.start();
          clusters.start();
        })
        .catch((err: unknown) => log.error({ err }, 'starting the Kubernetes watches failed'));
      return Promise.resolve();
    },
    stop: async () => {
      reachability.stop();
      await Promise.all([kube.source.stop(), clusters.stop()]);
    },
  };
  const remoteElector = (client: KubeClient) =>
    new KubeLeaderElector({
      client,
      namespace: options.env.POD_NAMESPACE,
      identity: kube.leader.identity,
      revision: options.env.REVISION,
      remote: true,
      ...(deps.leaderTiming ? { timing: deps.leaderTiming } : {}),
    });
  return {
    source,
    leader: kube.leader,
    kube: kube.client,
    reachable: reachability.reachable,
    clusters,
    remoteElector,
  };
}

export async function createSource(options: ServeOptions, deps: SourceDeps): Promise<SourceAndLeader> {
  return options.mode === 'local' ? localSource(options, deps) : kubernetesSource(options, deps);
}
