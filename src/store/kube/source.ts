// The Kubernetes source: one informer per kind, feeding the store through the discovery namespace
// filter. Namespaces are listed first (istiod does the same) so the filter knows every namespace's
// labels before other objects arrive. There is one primary set of watches per process (the config
// cluster's); each remote cluster (remote-clusters.ts) has its own source, over its own client and
// store.

import { scopedLogger } from '../../log/logger';
import { KIND_IDS, type KindId } from '../kinds';
import type { ConfigSource, KubeObject, StoreWriter } from '../types';
import type { KubeClient } from './client';
import { DEFAULT_WATCH_TIMING, KindWatcher, type Change, type KindStatus, type WatchTiming } from './kind-watcher';
import { NamespaceFilter, type DiscoverySelectorSource } from './namespace-filter';

const log = scopedLogger('kube');

export interface KubeSourceOptions {
  client: KubeClient;
  writer: StoreWriter;
  /** istiod's namespace (POD_NAMESPACE): where the mesh ConfigMap is read. */
  systemNamespace: string;
  /** discoverySelectors come from here; without it every namespace is watched. */
  mesh?: DiscoverySelectorSource;
  /** Kinds to watch; default all of KIND_IDS. Namespaces are always watched. */
  kinds?: readonly KindId[];
  timing?: Partial<WatchTiming>;
  /**
   * A remote cluster's source: it feeds that cluster's own store, so it does not count against the
   * one primary source a process may run (two primaries would be two copies of the config cluster).
   */
  remote?: boolean;
  /** Takes credentials out of errors before they are logged or shown (a remote cluster's). */
  redact?: (text: string) => string;
}

/** Store sync part of a kind, as /ready lists it. */
export function syncPart(kind: KindId): string {
  return `kubernetes ${kind}`;
}

/** Primary sources watching in this process: at most one. */
let watchingSources = 0;

export class KubeSource implements ConfigSource {
  private readonly watchers = new Map<KindId, KindWatcher>();
  private readonly filter: NamespaceFilter;
  private unsubscribeMesh: (() => void) | undefined;
  private started = false;

  constructor(private readonly options: KubeSourceOptions) {
    this.filter = new NamespaceFilter(options.mesh?.current().discoverySelectors);
  }

  /** Starts the watches (synchronously); rejects when another source already watches in this process. */
  start(): Promise<void> {
    return new Promise((resolve) => {
      this.startWatches();
      resolve();
    });
  }

  private startWatches(): void {
    if (this.started) return;
    const primary = this.options.remote !== true;
    if (primary && watchingSources > 0) {
      throw new Error('a Kubernetes source is already watching in this process; components must share its store');
    }
    if (primary) watchingSources++;
    this.started = true;
    const { writer, systemNamespace, mesh } = this.options;
    const timing: WatchTiming = { ...DEFAULT_WATCH_TIMING, ...this.options.timing };
    const watch = (kind: KindId): KindWatcher => {
      writer.expectSync(syncPart(kind));
      // Only POD_NAMESPACE's ConfigMaps matter (istio[-<rev>] and the SHARED_MESH_CONFIG layer);
      // a cluster-wide ConfigMap watch would hold every application's config in memory.
      const scoped = kind === 'ConfigMap' ? { namespace: systemNamespace } : {};
      const watcher = new KindWatcher({
        client: this.options.client,
        kind,
        ...scoped,
        timing,
        onChanges: (changes) => this.changed(kind, changes),
        onSynced: () => this.kindSynced(kind),
        ...(this.options.redact ? { redact: this.options.redact } : {}),
      });
      this.watchers.set(kind, watcher);
      return watcher;
    };
    // Namespaces are always watched, and first: the other kinds start once they are in (kindSynced).
    const namespaces = watch('Namespace');
    for (const kind of this.options.kinds ?? KIND_IDS)
      if (kind !== 'Namespace' && !this.watchers.has(kind)) watch(kind);
    if (mesh) {
      let selectors = JSON.stringify(mesh.current().discoverySelectors ?? []);
      this.unsubscribeMesh = mesh.subscribe((next) => {
        const text = JSON.stringify(next.discoverySelectors ?? []);
        if (text === selectors) return;
        selectors = text;
        log.info(
          { discoverySelectors: next.discoverySelectors ?? [] },
          'discoverySelectors changed; re-filtering namespaces',
        );
        this.filter.setSelectors(next.discoverySelectors);
        this.refilterAll();
      });
    }
    namespaces.start();
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    if (this.options.remote !== true) watchingSources--;
    this.unsubscribeMesh?.();
    await Promise.all([...this.watchers.values()].map((w) => w.stop()));
    this.watchers.clear();
  }

  /** Per kind: synced, cached objects, resourceVersion, failures; for a /debug page. */
  status(): Partial<Record<KindId, KindStatus>> {
    return Object.fromEntries([...this.watchers].map(([kind, w]) => [kind, w.status()]));
  }

  private kindSynced(kind: KindId): void {
    log.info({ kind }, 'initial list synced');
    this.options.writer.markSynced(syncPart(kind));
    if (kind === 'Namespace') {
      // The filter now knows every namespace; the other kinds can be filtered as they arrive.
      for (const [k, w] of this.watchers) if (k !== 'Namespace') w.start();
    }
  }

  /** The mesh ConfigMap is read whatever the selectors say; everything else is filtered. */
  private allowed(kind: KindId, object: KubeObject): boolean {
    if (kind === 'ConfigMap') return true;
    if (kind === 'Namespace') return this.filter.allows(object.metadata.name);
    return this.filter.allows(object.metadata.namespace);
  }

  private changed(kind: KindId, changes: Change[]): void {
    const out: { kind: KindId; object: KubeObject; deleted?: boolean }[] = [];
    for (const { object, deleted } of changes) {
      if (kind === 'Namespace') {
        const name = object.metadata.name;
        if (deleted) {
          this.filter.namespaceGone(name);
        } else {
          const { added, removed } = this.filter.namespaceSeen(name, object.metadata.labels);
          if (added.length > 0) out.push(...this.objectsIn(name).map((o) => ({ ...o })));
          if (removed.length > 0) out.push(...this.objectsIn(name).map((o) => ({ ...o, deleted: true })));
        }
      }
      if (deleted) out.push({ kind, object, deleted: true });
      else if (this.allowed(kind, object)) out.push({ kind, object });
      else out.push({ kind, object, deleted: true });
    }
    this.options.writer.apply(out);
  }

  /** Objects of every filtered kind in one namespace, from the informers' caches. */
  private objectsIn(namespace: string): { kind: KindId; object: KubeObject }[] {
    const found: { kind: KindId; object: KubeObject }[] = [];
    for (const [kind, w] of this.watchers) {
      if (kind === 'Namespace' || kind === 'ConfigMap') continue;
      for (const object of w.list()) if (object.metadata.namespace === namespace) found.push({ kind, object });
    }
    return found;
  }

  private refilterAll(): void {
    for (const [kind, w] of this.watchers) {
      if (kind === 'ConfigMap' || !w.hasSynced) continue;
      this.options.writer.replace(
        kind,
        w.list().filter((o) => this.allowed(kind, o)),
      );
    }
  }
}
