// The root certificate (and CRL) ConfigMaps of remote clusters this control plane manages from
// outside, istiod's EXTERNAL_ISTIOD: a remote cluster installed with the remote profile runs no
// control plane of its own, yet its ztunnel mounts istio-ca-root-cert. istiod writes them into a
// remote cluster whose system namespace names it in topology.istio.io/controlPlaneClusters ('*' or
// a comma-separated list holding its CLUSTER_ID), under a leader election held in that cluster.
//
// istiod reads the annotation once, when the cluster joins. Here it is followed from the remote's
// store (the system Namespace is watched anyway): an annotation added later starts the publishers,
// and one removed, or naming another control plane, stops them, so the cluster's operator can hand
// it over without restarting the primary.

import type { LeaderElector } from '../../contract/leader';
import { scopedLogger } from '../../log/logger';
import type { ClusterDirectory, ClusterEvent, MeshCluster } from '../../store/clusters';
import type { KubeClient } from '../../store/kube/client';
import { KubeWriter } from '../../store/kube/writes';
import { KubeRootConfigMapApi, publishWhileLeader, type DistributedConfigMap } from './root-cert-publisher';

const log = scopedLogger('ca');

/** The system Namespace annotation naming the clusters whose control planes manage this one. */
export const CONTROL_PLANE_CLUSTERS_ANNOTATION = 'topology.istio.io/controlPlaneClusters';

/**
 * istiod's checkShouldLead: whether `annotation` names `localClusterId`, or every control plane
 * with '*'. Entries are split on ',' and compared as they are, without trimming, as istiod does:
 * "a, b" names "a" and " b".
 */
export function namesControlPlane(annotation: string | undefined, localClusterId: string): boolean {
  if (annotation === undefined) return false;
  return annotation.split(',').some((entry) => entry === '*' || entry === localClusterId);
}

/** Starts the publishers for one remote cluster; the returned function stops them and releases its lock. */
export type StartRemoteRoots = (cluster: MeshCluster) => () => Promise<void>;

interface Watched {
  cluster: MeshCluster;
  unsubscribe: () => void;
  /** Present while the publishers run. */
  stop?: () => Promise<void>;
}

/** Runs StartRemoteRoots for every remote cluster that names this control plane, while it does. */
export class RemoteRootDistribution {
  private readonly watched = new Map<string, Watched>();
  /** Stops under way, awaited at shutdown so no write follows it. */
  private readonly stopping = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly clusters: ClusterDirectory,
    private readonly systemNamespace: string,
    private readonly start: StartRemoteRoots,
  ) {}

  /** Begins following the clusters; the returned function stops every publisher. */
  run(): () => Promise<void> {
    const unsubscribe = this.clusters.subscribe((event) => this.onCluster(event));
    for (const cluster of this.clusters.list()) if (!cluster.local) this.watch(cluster);
    return async () => {
      this.closed = true;
      unsubscribe();
      for (const id of [...this.watched.keys()]) this.unwatch(id);
      await Promise.all([...this.stopping]);
    };
  }

  /** The remote clusters whose root ConfigMaps this replica takes part in writing, for /debug. */
  managed(): string[] {
    return [...this.watched.values()].filter((w) => w.stop).map((w) => w.cluster.id);
  }

  private onCluster(event: ClusterEvent): void {
    if (this.closed || event.cluster.local) return;
    // An updated cluster is a replacement with its own client and store: the old one's
    // publishers write with credentials that are being retired.
    this.unwatch(event.cluster.id);
    if (event.type !== 'removed') this.watch(event.cluster);
  }

  private watch(cluster: MeshCluster): void {
    const unsubscribe = cluster.store.subscribe((events) => {
      if (events.some((e) => e.kind === 'Namespace' && e.object.metadata.name === this.systemNamespace))
        this.evaluate(cluster.id);
    });
    this.watched.set(cluster.id, { cluster, unsubscribe });
    this.evaluate(cluster.id);
  }

  private unwatch(id: string): void {
    const w = this.watched.get(id);
    if (!w) return;
    this.watched.delete(id);
    w.unsubscribe();
    if (w.stop) this.stopRunning(id, w.stop, 'the cluster left or was replaced');
  }

  private evaluate(id: string): void {
    const w = this.watched.get(id);
    if (!w || this.closed) return;
    const ns = w.cluster.store.get('Namespace', undefined, this.systemNamespace);
    const annotation = ns?.metadata.annotations?.[CONTROL_PLANE_CLUSTERS_ANNOTATION];
    const wanted = ns !== undefined && namesControlPlane(annotation, this.clusters.localId);
    if (wanted && !w.stop) {
      log.info(
        { cluster: id, namespace: this.systemNamespace, annotation },
        'the remote cluster names this control plane: distributing the root certificate there',
      );
      w.stop = this.start(w.cluster);
    } else if (!wanted && w.stop) {
      const stop = w.stop;
      delete w.stop;
      this.stopRunning(id, stop, `its ${this.systemNamespace} Namespace no longer names this control plane`);
    }
  }

  private stopRunning(id: string, stop: () => Promise<void>, reason: string): void {
    log.info({ cluster: id, reason }, 'no longer distributing the root certificate to the remote cluster');
    const done = stop()
      .catch((err: unknown) =>
        log.warn({ cluster: id, err: (err as Error).message }, 'stopping the remote root publishers failed'),
      )
      .finally(() => this.stopping.delete(done));
    this.stopping.add(done);
  }
}

export interface RemoteRootStarterOptions {
  /** The root certificate ConfigMap, then the CRL's when one is distributed. */
  configMaps: readonly DistributedConfigMap[];
  /** An elector on the cluster's own locks (keys with istiod's '^'), stopped with the publishers. */
  elector: (client: KubeClient) => LeaderElector & { stop(): Promise<void> };
  resyncMs?: number;
}

/**
 * The publishers istiod's namespace controller runs for a remote cluster: each ConfigMap written
 * into every namespace of its store through its own client, under the namespace controller's lock
 * held in that cluster, so two primaries (or two replicas) naming it never write at once.
 */
export function remoteRootStarter(options: RemoteRootStarterOptions): StartRemoteRoots {
  return (cluster) => {
    const client = cluster.client;
    if (!client) {
      log.warn({ cluster: cluster.id }, 'the remote cluster has no client; its root certificate is not distributed');
      return () => Promise.resolve();
    }
    const elector = options.elector(client);
    const api = new KubeRootConfigMapApi(new KubeWriter(client));
    const stops = publishWhileLeader(cluster.store, api, options.configMaps, elector, options.resyncMs);
    return async () => {
      await Promise.all(stops.map((stop) => stop()));
      await elector.stop();
    };
  };
}
