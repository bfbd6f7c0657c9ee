// Distributes one ConfigMap (a name, one data key) to every namespace, leader only: the mesh root
// as istio-ca-root-cert (key root-cert.pem), and the plugged-in CA's CRL as istio-ca-crl (key
// ca-crl.pem), each by its own publisher. Kubernetes mode repairs drift from three triggers: a
// Namespace appearing in the store, a content change, and a periodic resync that LISTs every
// ConfigMap of that name in one request (the store does not hold them, and one LIST per period is
// cheaper than a second informer's memory in big clusters). An edited or deleted ConfigMap is
// therefore repaired within ROOT_CERT_RESYNC_MS. Local mode writes <stateDir>/root-cert.pem.

import * as path from 'node:path';
import { scopedLogger } from '../../log/logger';
import { statusPhase } from '../../store/fields';
import type { ObjectStore } from '../../store/types';
import { PUBLIC_FILE_MODE, writeFileAtomicSync } from '../../config/atomic-file';
import type { KubeWriter } from '../../store/kube/writes';
import { LEASE_NAMES, type LeaderElector } from '../../contract/leader';

const log = scopedLogger('ca');

export const ROOT_CERT_KEY = 'root-cert.pem';
export const ROOT_CERT_LABEL = { 'istio.io/config': 'true' } as const;
export const EXCLUDED_NAMESPACES: ReadonlySet<string> = new Set([
  'kube-public',
  'kube-node-lease',
  'local-path-storage',
]);
export const ROOT_CERT_RESYNC_MS = 30_000;

/** Writes <stateDir>/root-cert.pem atomically (readers never see half a file). */
export function writeRootCertFile(stateDir: string, pem: string): string {
  const file = path.join(stateDir, ROOT_CERT_KEY);
  writeFileAtomicSync(file, pem, { mode: PUBLIC_FILE_MODE });
  return file;
}

export interface RootConfigMap {
  namespace: string;
  data: Record<string, string>;
  labels: Record<string, string>;
}

export interface RootConfigMapApi {
  /** Every ConfigMap named `name`, across namespaces; `signal` cancels the read and its retries. */
  list(name: string, signal?: AbortSignal): Promise<RootConfigMap[]>;
  /** Creates or overwrites the ConfigMap `name` in `namespace`; `signal` cancels it and its retries. */
  put(
    namespace: string,
    name: string,
    data: Record<string, string>,
    labels: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<void>;
}

const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps' };

/** The root ConfigMaps through the one write path: one LIST, then create or replace (no GET: the chart grants none). */
export class KubeRootConfigMapApi implements RootConfigMapApi {
  constructor(private readonly writer: Pick<KubeWriter, 'list' | 'createOrReplace'>) {}

  async list(name: string, signal?: AbortSignal): Promise<RootConfigMap[]> {
    const { items } = await this.writer.list(
      CONFIGMAPS,
      { fieldSelector: `metadata.name=${name}` },
      signal ? { signal } : {},
    );
    return items.map((cm) => ({
      namespace: cm.metadata.namespace ?? '',
      data: cm.data ?? {},
      labels: cm.metadata.labels ?? {},
    }));
  }

  async put(
    namespace: string,
    name: string,
    data: Record<string, string>,
    labels: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<void> {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels }, data };
    await this.writer.createOrReplace({ ...CONFIGMAPS, namespace, name }, body, signal ? { signal } : {});
  }
}

/**
 * Keeps the ConfigMap `name` holding `content()` under `key` in every namespace while running.
 * While `content()` is undefined (nothing to distribute) a sync writes nothing.
 */
export class NamespaceConfigMapPublisher {
  private syncing: Promise<void> | undefined;
  /** Sync requests so far; a request that arrives during a run makes the run go round once more. */
  private requests = 0;
  /**
   * The running term's, aborted by its stop: a sync under way writes no further namespace and its
   * write in flight is cancelled, so nothing is written after the lock may have passed on.
   */
  private cancel: AbortController | undefined;

  constructor(
    private readonly store: ObjectStore,
    private readonly api: RootConfigMapApi,
    private readonly name: string,
    private readonly key: string,
    private readonly content: () => string | undefined,
    private readonly resyncMs = ROOT_CERT_RESYNC_MS,
  ) {}

  /** Starts the triggers; returns the stop function (for LeaderElector.runWhileLeader). */
  start(onContentChange: (listener: () => void) => () => void): () => Promise<void> {
    const cancel = new AbortController();
    this.cancel = cancel;
    // requestSync never rejects (a failed run is logged and retried), so its promise can be dropped here.
    const unsubStore = this.store.subscribe((events) => {
      if (events.some((e) => e.kind === 'Namespace' && e.type === 'add')) void this.requestSync();
    });
    const unsubContent = onContentChange(() => void this.requestSync());
    const timer = setInterval(() => void this.requestSync(), this.resyncMs);
    timer.unref();
    void this.requestSync();
    return async () => {
      cancel.abort();
      unsubStore();
      unsubContent();
      clearInterval(timer);
      await this.syncing;
    };
  }

  /**
   * Runs the publisher only while this replica leads `lease`. The returned function stops it at
   * shutdown, when leadership may never be handed back, and resolves once no write is under way.
   */
  runWhileLeader(
    leader: LeaderElector,
    lease: string,
    onContentChange: (listener: () => void) => () => void,
  ): () => Promise<void> {
    let stop: (() => Promise<void>) | undefined;
    leader.runWhileLeader(lease, () => {
      stop = this.start(onContentChange);
      return () => {
        const running = stop;
        stop = undefined;
        return running?.();
      };
    });
    return async () => {
      const running = stop;
      stop = undefined;
      await running?.();
    };
  }

  /** Runs a sync now, or once more after the running one; never rejects. */
  requestSync(): Promise<void> {
    this.requests++;
    if (this.syncing) return this.syncing;
    this.syncing = (async () => {
      let served: number;
      do {
        served = this.requests;
        try {
          await this.syncOnce();
        } catch (err) {
          log.warn({ err: (err as Error).message }, `distributing ${this.name} failed; will retry`);
        }
      } while (this.requests !== served);
      this.syncing = undefined;
    })();
    return this.syncing;
  }

  async syncOnce(): Promise<number> {
    const signal = this.cancel?.signal;
    if (signal?.aborted) return 0;
    const pem = this.content();
    if (pem === undefined) return 0;
    const existing = new Map((await this.api.list(this.name, signal)).map((cm) => [cm.namespace, cm]));
    let written = 0;
    for (const ns of this.store.list('Namespace')) {
      const name = ns.metadata.name;
      if (EXCLUDED_NAMESPACES.has(name) || ns.metadata.deletionTimestamp || statusPhase(ns) === 'Terminating') continue;
      const cm = existing.get(name);
      if (cm && cm.data[this.key] === pem && cm.labels['istio.io/config'] === 'true') continue;
      if (signal?.aborted) break;
      try {
        const labels = { ...(cm?.labels ?? {}), ...ROOT_CERT_LABEL };
        await this.api.put(name, this.name, { [this.key]: pem }, labels, signal);
        written++;
        log.info({ namespace: name, repaired: cm !== undefined }, `${this.name} written`);
      } catch (err) {
        if (signal?.aborted) break;
        log.warn({ namespace: name, err: (err as Error).message }, `writing ${this.name} failed`);
      }
    }
    return written;
  }
}

/** One ConfigMap kept in every namespace: its name, its one key, the text and when that changes. */
export interface DistributedConfigMap {
  name: string;
  key: string;
  content: () => string | undefined;
  onContentChange: (listener: () => void) => () => void;
}

/**
 * One publisher per ConfigMap over `store`'s namespaces, all under istiod's namespace controller
 * lock of `leader` (istiod's controller writes them all); returns their stops.
 */
export function publishWhileLeader(
  store: ObjectStore,
  api: RootConfigMapApi,
  configMaps: readonly DistributedConfigMap[],
  leader: LeaderElector,
  resyncMs?: number,
): (() => Promise<void>)[] {
  return configMaps.map((cm) =>
    new NamespaceConfigMapPublisher(store, api, cm.name, cm.key, cm.content, resyncMs).runWhileLeader(
      leader,
      LEASE_NAMES.namespaceController,
      cm.onContentChange,
    ),
  );
}

/** Keeps istio-ca-root-cert (or PILOT_CA_CERT_CONFIGMAP) current in every namespace while running. */
export class RootCertPublisher extends NamespaceConfigMapPublisher {
  constructor(store: ObjectStore, api: RootConfigMapApi, name: string, rootPem: () => string, resyncMs?: number) {
    super(store, api, name, ROOT_CERT_KEY, rootPem, resyncMs);
  }
}
