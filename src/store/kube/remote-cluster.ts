// One remote cluster joined by a remote secret: its own client (its credentials, a user agent naming
// it), its own store and its own KubeSource over REMOTE_KINDS, with everything the config cluster's
// watches have (paging, re-list on 410, the stall watchdog, backoff, per-call bounds: KindWatcher's).
//
// It is ready once every initial list is in, or once the sync timeout has passed
// (PILOT_REMOTE_CLUSTER_TIMEOUT): a remote that is slow or unreachable must not hold back the
// server's readiness for longer (istiod's rule). A remote that goes away after its lists keeps its
// objects, as an informer keeps its cache; the watches retry with backoff meanwhile.

import { scopedLogger } from '../../log/logger';
import { errorMessage } from '../../log/error-message';
import { REMOTE_KINDS, type MeshCluster } from '../clusters';
import type { KindId } from '../kinds';
import { MemoryStore } from '../memory-store';
import { KubeClient } from './client';
import type { KindStatus, WatchTiming } from './kind-watcher';
import type { DiscoverySelectorSource } from './namespace-filter';
import { redactCredentials, type RemoteKubeconfig } from './remote-secret';
import { KubeSource } from './source';

const log = scopedLogger('multicluster');

/** syncing: lists not all in; synced: they are; timeout: the timeout passed first (it may sync later); closed: stopped. */
export type RemoteClusterState = 'syncing' | 'synced' | 'timeout' | 'closed';

export interface RemoteClusterOptions {
  id: string;
  /** The secret that joined it, "namespace/name". */
  secret: string;
  /** Digest of its kubeconfig: an unchanged kubeconfig is no update. */
  digest: string;
  config: RemoteKubeconfig;
  systemNamespace: string;
  mesh?: DiscoverySelectorSource;
  timing?: Partial<WatchTiming>;
  /** PILOT_REMOTE_CLUSTER_TIMEOUT in ms; 0 waits for the lists however long they take. */
  syncTimeoutMs: number;
  userAgent: string;
  /** Called once: when the lists are in, or when the timeout passed first (the lists may come in later). */
  onReady(cluster: RemoteCluster, how: 'synced' | 'timeout'): void;
}

/** What /debug/clusters shows of a remote: never a credential. */
export interface RemoteClusterStatus {
  id: string;
  secret: string;
  server: string;
  state: RemoteClusterState;
  synced: boolean;
  /** Kinds whose initial list is not in yet. */
  waitingFor: string[];
  kinds: Partial<Record<KindId, KindStatus>>;
  lastError?: string;
}

export class RemoteCluster implements MeshCluster {
  readonly local = false;
  readonly store = new MemoryStore();
  readonly client: KubeClient;
  private readonly source: KubeSource;
  private stateNow: RemoteClusterState = 'syncing';
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;

  constructor(private readonly options: RemoteClusterOptions) {
    this.client = new KubeClient(options.config.kubeConfig, options.userAgent);
    this.source = new KubeSource({
      client: this.client,
      writer: this.store,
      systemNamespace: options.systemNamespace,
      kinds: REMOTE_KINDS,
      remote: true,
      redact: (text) => this.redact(text),
      ...(options.mesh ? { mesh: options.mesh } : {}),
      ...(options.timing ? { timing: options.timing } : {}),
    });
  }

  get id(): string {
    return this.options.id;
  }

  get secret(): string {
    return this.options.secret;
  }

  get digest(): string {
    return this.options.digest;
  }

  get state(): RemoteClusterState {
    return this.stateNow;
  }

  synced(): boolean {
    return this.store.hasSynced();
  }

  start(): void {
    this.startedAt = Date.now();
    const { id, secret, syncTimeoutMs } = this.options;
    log.info({ cluster: id, secret, server: this.options.config.server }, 'joining remote cluster');
    if (syncTimeoutMs > 0) this.timer = setTimeout(() => this.timedOut(), syncTimeoutMs);
    this.source
      .start()
      .catch((err: unknown) => log.error({ cluster: id, err: this.redact(errorMessage(err)) }, 'start failed'));
    void this.store.whenSynced().then(() => this.listsIn());
  }

  async stop(): Promise<void> {
    if (this.stateNow === 'closed') return;
    this.stateNow = 'closed';
    clearTimeout(this.timer);
    await this.source.stop();
  }

  status(): RemoteClusterStatus {
    // The watches' errors are redacted where they are recorded (KubeSource's redact).
    const kinds = this.source.status();
    const lastError = Object.values(kinds).find((s) => s.lastError !== undefined)?.lastError;
    return {
      id: this.id,
      secret: this.secret,
      server: this.options.config.server,
      state: this.stateNow,
      synced: this.synced(),
      waitingFor: this.store.unsyncedParts(),
      kinds,
      ...(lastError !== undefined ? { lastError } : {}),
    };
  }

  /** Takes this cluster's credentials out of a message before it is shown or logged. */
  redact(text: string): string {
    return redactCredentials(text, this.options.config.credentials);
  }

  private timedOut(): void {
    if (this.stateNow !== 'syncing') return;
    this.stateNow = 'timeout';
    const status = this.status();
    log.error(
      {
        cluster: this.id,
        timeoutMs: this.options.syncTimeoutMs,
        waitingFor: status.waitingFor,
        ...(status.lastError !== undefined ? { err: status.lastError } : {}),
      },
      'remote cluster did not sync within PILOT_REMOTE_CLUSTER_TIMEOUT; going on without its objects until it does',
    );
    this.options.onReady(this, 'timeout');
  }

  private listsIn(): void {
    if (this.stateNow === 'closed') return;
    clearTimeout(this.timer);
    const late = this.stateNow === 'timeout';
    this.stateNow = 'synced';
    log.info({ cluster: this.id, ms: Date.now() - this.startedAt, late }, 'remote cluster synced');
    if (!late) this.options.onReady(this, 'synced');
  }
}
