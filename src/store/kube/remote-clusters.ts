// The remote-secret controller: the mesh's clusters as a ClusterDirectory (store/clusters.ts). It
// watches the Secrets labelled istio/multiCluster=true in the system namespace (its own narrow
// watch: the main source never watches Secrets) and joins one RemoteCluster per data key, as
// istiod's multicluster secret controller does:
//
// - a cluster is announced (`added`) once its lists are in or PILOT_REMOTE_CLUSTER_TIMEOUT passed;
// - a changed kubeconfig starts a replacement beside the running cluster, announced (`updated`)
//   under the same rule, after which the old one stops: consumers swap without a gap;
// - a key or secret that goes removes its cluster (`removed`);
// - a cluster id is held by the first secret that joined it; the same id in another secret is
//   ignored (and reported) while that secret holds it. When it lets go, the next secret in name
//   order that lists the id joins it (istiod waits for that secret's next change).
//
// Consumers see only announced clusters: get() and list() return what the events delivered.

import type { Registry } from 'prom-client';
import type { Readiness } from '../../contract/host';
import { errorMessage } from '../../log/error-message';
import { scopedLogger } from '../../log/logger';
import type { ClusterDirectory, ClusterEvent, MeshCluster } from '../clusters';
import { keyOf, type KubeObject } from '../types';
import type { KubeClient } from './client';
import { DEFAULT_WATCH_TIMING, KindWatcher, type Change, type KindStatus, type WatchTiming } from './kind-watcher';
import type { DiscoverySelectorSource } from './namespace-filter';
import { RemoteCluster, type RemoteClusterState, type RemoteClusterStatus } from './remote-cluster';
import { remoteClusterMetrics, type RemoteClusterMetrics } from './remote-cluster-metrics';
import {
  buildRemoteKubeConfig,
  kubeconfigDigest,
  MAX_REMOTE_CLUSTERS,
  MULTICLUSTER_SECRET_SELECTOR,
  parseRemoteSecret,
  redactCredentials,
  RemoteKubeconfigError,
  type RemoteSecretProblem,
} from './remote-secret';

const log = scopedLogger('multicluster');

/** PILOT_REMOTE_CLUSTER_TIMEOUT's default, istiod's. */
export const DEFAULT_REMOTE_CLUSTER_TIMEOUT_MS = 30_000;

/** The /ready row of the remote secrets' initial list. */
export const REMOTE_SECRETS_READINESS = 'remote secrets';

/** The /ready row of one remote cluster. */
export function remoteClusterReadiness(id: string): string {
  return `remote cluster ${id}`;
}

export interface RemoteClustersOptions {
  /** The config cluster's client: remote secrets are read there. */
  client: KubeClient;
  /** The cluster this server runs in. */
  local: MeshCluster;
  /** POD_NAMESPACE: where remote secrets are read. */
  systemNamespace: string;
  /** discoverySelectors apply to every cluster's namespaces, as in istiod. */
  mesh?: DiscoverySelectorSource;
  /** PILOT_REMOTE_CLUSTER_TIMEOUT in ms; 0 waits for a remote's lists however long they take. */
  syncTimeoutMs?: number;
  timing?: Partial<WatchTiming>;
  /** Base of each remote client's user agent; the cluster id is appended. */
  userAgent?: string;
  metrics?: Registry;
  readiness?: Readiness;
}

interface Entry {
  /** "namespace/name" of the secret holding the id. */
  secret: string;
  /** The cluster consumers have (delivered by `added` or `updated`). */
  announced?: RemoteCluster;
  /** Not yet announced: the first one, or a replacement for a changed kubeconfig. */
  pending?: RemoteCluster;
}

/** /debug/clusters' view of the remotes and of the secrets' problems. */
export interface RemoteClustersStatus {
  secretsSynced: boolean;
  secretsWatch?: KindStatus;
  /** serving: announced; joining: not announced yet; replacement: joining beside a serving one (a new kubeconfig). */
  remotes: (RemoteClusterStatus & { role: 'serving' | 'joining' | 'replacement' })[];
  secrets: { secret: string; clusters: string[]; problems: RemoteSecretProblem[] }[];
}

export class RemoteClusters implements ClusterDirectory {
  readonly localId: string;
  private readonly entries = new Map<string, Entry>();
  /** Problems of each secret's last reading, by secret key. */
  private readonly problems = new Map<string, RemoteSecretProblem[]>();
  private readonly listeners = new Set<(event: ClusterEvent) => void>();
  private readonly readyMarks = new Map<string, (ready: boolean) => void>();
  private readonly metrics: RemoteClusterMetrics;
  private readonly timing: WatchTiming;
  private readonly markSecretsReady: ((ready: boolean) => void) | undefined;
  private watcher: KindWatcher | undefined;
  private stopped = false;

  constructor(private readonly options: RemoteClustersOptions) {
    this.localId = options.local.id;
    this.timing = { ...DEFAULT_WATCH_TIMING, ...options.timing };
    this.metrics = remoteClusterMetrics(options.metrics, () => this.states());
    this.markSecretsReady = options.readiness?.register(REMOTE_SECRETS_READINESS, () => {
      const err = this.watcher?.status().lastError;
      return [`listing Secrets ${MULTICLUSTER_SECRET_SELECTOR} in ${options.systemNamespace}`, ...(err ? [err] : [])];
    });
  }

  /** Starts the secrets' watch; remote clusters join as their secrets arrive. */
  start(): void {
    if (this.watcher || this.stopped) return;
    this.watcher = new KindWatcher({
      client: this.options.client,
      kind: 'Secret',
      namespace: this.options.systemNamespace,
      labelSelector: MULTICLUSTER_SECRET_SELECTOR,
      timing: this.timing,
      onChanges: (changes) => this.secretsChanged(changes),
      onSynced: () => {
        log.info({ clusters: this.entries.size }, 'remote secrets listed');
        this.markSecretsReady?.(true);
      },
    });
    this.watcher.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const clusters = [...this.entries.values()].flatMap((e) => [e.announced, e.pending]);
    this.entries.clear();
    await Promise.all([this.watcher?.stop(), ...clusters.map((c) => c?.stop())]);
  }

  get(id: string): MeshCluster | undefined {
    return id === this.localId ? this.options.local : this.entries.get(id)?.announced;
  }

  list(): readonly MeshCluster[] {
    const remotes = [...this.entries]
      .filter(([, e]) => e.announced !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, e]) => e.announced as RemoteCluster);
    return [this.options.local, ...remotes];
  }

  subscribe(listener: (event: ClusterEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  status(): RemoteClustersStatus {
    const remotes: RemoteClustersStatus['remotes'] = [];
    for (const e of this.entries.values()) {
      if (e.announced) remotes.push({ ...e.announced.status(), role: 'serving' });
      if (e.pending) remotes.push({ ...e.pending.status(), role: e.announced ? 'replacement' : 'joining' });
    }
    const secrets = new Set([...this.problems.keys(), ...[...this.entries.values()].map((e) => e.secret)]);
    return {
      secretsSynced: this.watcher?.hasSynced ?? false,
      ...(this.watcher ? { secretsWatch: this.watcher.status() } : {}),
      remotes: remotes.sort((a, b) => a.id.localeCompare(b.id)),
      secrets: [...secrets].sort().map((secret) => ({
        secret,
        clusters: [...this.entries]
          .filter(([, e]) => e.secret === secret)
          .map(([id]) => id)
          .sort(),
        problems: this.problems.get(secret) ?? [],
      })),
    };
  }

  // ---- secrets ----

  private secretsChanged(changes: Change[]): void {
    if (this.stopped) return;
    for (const { object, deleted } of changes) {
      const key = keyOf(object);
      if (deleted) this.secretGone(key);
      else this.readSecret(key, object);
    }
  }

  private readSecret(key: string, secret: KubeObject): void {
    const { clusters, problems } = parseRemoteSecret(secret.data, this.localId);
    for (const [id, e] of [...this.entries]) if (e.secret === key && !clusters.has(id)) this.removeCluster(id);
    for (const [id, text] of clusters) {
      const problem = this.join(key, id, text);
      if (problem) problems.push(problem);
    }
    this.report(key, problems);
    this.setProblems(key, problems);
  }

  private secretGone(key: string): void {
    log.info({ secret: key }, 'remote secret removed');
    this.problems.delete(key);
    for (const [id, e] of [...this.entries]) if (e.secret === key) this.removeCluster(id);
  }

  /** Counts and logs problems found in a secret (naming the key, never the value). */
  private report(key: string, problems: readonly RemoteSecretProblem[]): void {
    for (const p of problems) {
      this.metrics.secretError(p.reason);
      // istiod logs the local cluster's key at info: it is expected in a secret shared by every cluster.
      const level = p.reason === 'local-cluster-id' ? 'info' : 'warn';
      log[level]({ secret: key, key: p.key, reason: p.reason }, `remote secret key not joined: ${p.message}`);
    }
  }

  /** What /debug/clusters shows for a secret: the problems of its last reading. */
  private setProblems(key: string, problems: RemoteSecretProblem[]): void {
    if (problems.length > 0) this.problems.set(key, problems);
    else this.problems.delete(key);
  }

  /** Joins (or re-joins with a changed kubeconfig) cluster `id` from secret `key`; returns why not. */
  private join(key: string, id: string, text: string): RemoteSecretProblem | undefined {
    const entry = this.entries.get(id);
    if (entry && entry.secret !== key)
      return {
        key: id,
        reason: 'duplicate-cluster-id',
        message: `key "${id}": cluster ${id} is already joined by secret ${entry.secret}; ignored while that secret holds it`,
      };
    const digest = kubeconfigDigest(text);
    if ((entry?.pending ?? entry?.announced)?.digest === digest) return undefined;
    if (entry?.pending && entry.announced?.digest === digest) {
      // Changed back before the replacement was announced: the running cluster is the one wanted.
      void entry.pending.stop();
      entry.pending = undefined;
      return undefined;
    }
    if (!entry && this.entries.size >= MAX_REMOTE_CLUSTERS)
      return {
        key: id,
        reason: 'too-many-clusters',
        message: `key "${id}": ${MAX_REMOTE_CLUSTERS} remote clusters are joined already (MAX_REMOTE_CLUSTERS)`,
      };
    let config;
    try {
      config = buildRemoteKubeConfig(text);
    } catch (err) {
      // A bad kubeconfig for a joined cluster leaves the running one in place, as istiod does.
      return {
        key: id,
        reason: err instanceof RemoteKubeconfigError ? err.reason : 'invalid-kubeconfig',
        message: `key "${id}": ${err instanceof RemoteKubeconfigError ? err.message : 'the kubeconfig cannot be used'}`,
      };
    }
    let cluster: RemoteCluster;
    try {
      cluster = new RemoteCluster({
        id,
        secret: key,
        digest,
        config,
        systemNamespace: this.options.systemNamespace,
        ...(this.options.mesh ? { mesh: this.options.mesh } : {}),
        timing: this.timing,
        syncTimeoutMs: this.options.syncTimeoutMs ?? DEFAULT_REMOTE_CLUSTER_TIMEOUT_MS,
        userAgent: `${this.options.userAgent ?? 'istiod-ts'} remote-cluster/${id}`,
        onReady: (c, how) => this.clusterReady(c, how),
      });
    } catch (err) {
      return {
        key: id,
        reason: 'invalid-kubeconfig',
        message: `key "${id}": ${redactCredentials(errorMessage(err), config.credentials)}`,
      };
    }
    if (entry) {
      log.info(
        { cluster: id, secret: key },
        'remote kubeconfig changed; joining with the new one beside the running one',
      );
      void entry.pending?.stop();
      entry.pending = cluster;
    } else {
      this.entries.set(id, { secret: key, pending: cluster });
      this.readyMark(id)?.(false);
    }
    cluster.start();
    return undefined;
  }

  private clusterReady(cluster: RemoteCluster, how: 'synced' | 'timeout'): void {
    const entry = this.entries.get(cluster.id);
    if (entry?.pending !== cluster) return;
    if (how === 'timeout') this.metrics.syncTimeout();
    entry.pending = undefined;
    const previous = entry.announced;
    entry.announced = cluster;
    this.readyMark(cluster.id)?.(true);
    this.emit({ type: previous ? 'updated' : 'added', cluster });
    if (previous) void previous.stop();
  }

  private removeCluster(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    log.info({ cluster: id, secret: entry.secret }, 'leaving remote cluster');
    this.entries.delete(id);
    void entry.pending?.stop();
    if (entry.announced) {
      this.emit({ type: 'removed', cluster: entry.announced });
      void entry.announced.stop();
    }
    // A cluster that is gone holds back nothing.
    this.readyMarks.get(id)?.(true);
    this.handOver(id, entry.secret);
  }

  /** The id is free: the first other secret (by name) that lists it joins it. */
  private handOver(id: string, from: string): void {
    const waiting = [...this.problems]
      .filter(([key, ps]) => key !== from && ps.some((p) => p.reason === 'duplicate-cluster-id' && p.key === id))
      .map(([key]) => key)
      .sort();
    for (const key of waiting) {
      const secret = this.watcher?.list().find((s) => keyOf(s) === key);
      const text = secret ? parseRemoteSecret(secret.data, this.localId).clusters.get(id) : undefined;
      if (text === undefined) continue;
      const others = (this.problems.get(key) ?? []).filter((p) => p.key !== id);
      const problem = this.join(key, id, text);
      if (problem) this.report(key, [problem]);
      this.setProblems(key, problem ? [...others, problem] : others);
      if (!problem) return;
    }
  }

  private emit(event: ClusterEvent): void {
    log.info({ cluster: event.cluster.id, event: event.type }, 'cluster event');
    for (const listener of this.listeners)
      try {
        listener(event);
      } catch (err) {
        log.error({ cluster: event.cluster.id, event: event.type, err: errorMessage(err) }, 'cluster listener failed');
      }
  }

  /** The /ready row of a cluster, registered the first time the id is joined. */
  private readyMark(id: string): ((ready: boolean) => void) | undefined {
    const readiness = this.options.readiness;
    if (!readiness) return undefined;
    let mark = this.readyMarks.get(id);
    if (!mark) {
      mark = readiness.register(remoteClusterReadiness(id), () => {
        const s = this.entries.get(id)?.pending?.status();
        if (!s) return [];
        return [`lists not in: ${s.waitingFor.join(', ') || 'none'}`, ...(s.lastError ? [s.lastError] : [])];
      });
      this.readyMarks.set(id, mark);
    }
    return mark;
  }

  private *states(): Iterable<RemoteClusterState> {
    for (const e of this.entries.values()) {
      const c = e.announced ?? e.pending;
      if (c) yield c.state;
    }
  }
}
