// What a remote cluster's index reads: the remote's own Kubernetes objects, except its LOCAL
// Services (istiod never exposes those beyond their cluster, so they neither become Services nor
// appear in a remote workload's services), and the config cluster's Istio objects that apply to
// every cluster's workloads (policies, and the GatewayClasses that make a Gateway a waypoint),
// and its WorkloadEntries: istiod derives each of them again in every remote cluster, with that
// cluster's id, network and GLOBAL services (its multicluster goldens show it). ServiceEntries stay
// with the config cluster's index.
//
// The feed copies object references into a store of its own, so the index and its dependency
// rules work on it unchanged; scope changes (a namespace's labels, serviceScopeConfigs) re-file
// the Services they touch.

import type { MeshConfigSource } from '../mesh/types';
import type { KindId } from '../store/kinds';
import { MemoryStore } from '../store/memory-store';
import type { KubeObject, ObjectStore, StoreEvent } from '../store/types';
import { REMOTE_KINDS } from '../store/clusters';
import { scopeConfigsOf, serviceScope } from './service-scope';

/** The config cluster's kinds a remote cluster's workloads are derived with. */
export const SHARED_CONFIG_KINDS: readonly KindId[] = [
  'AuthorizationPolicy',
  'PeerAuthentication',
  'GatewayClass',
  'WorkloadEntry',
];

const REMOTE: ReadonlySet<KindId> = new Set<KindId>(REMOTE_KINDS);
const SHARED: ReadonlySet<KindId> = new Set<KindId>(SHARED_CONFIG_KINDS);

type Change = { kind: KindId; object: KubeObject; deleted?: boolean };

export class RemoteFeed {
  readonly store = new MemoryStore();
  private readonly unsubscribe: (() => void)[] = [];

  constructor(
    private readonly remote: ObjectStore,
    config: ObjectStore,
    private readonly mesh: MeshConfigSource,
  ) {
    const initial: Change[] = [];
    for (const kind of REMOTE_KINDS)
      for (const object of remote.list(kind)) if (this.wanted(kind, object)) initial.push({ kind, object });
    for (const kind of SHARED_CONFIG_KINDS) for (const object of config.list(kind)) initial.push({ kind, object });
    this.store.apply(initial);
    this.unsubscribe.push(remote.subscribe((events) => this.fromRemote(events)));
    this.unsubscribe.push(config.subscribe((events) => this.fromConfig(events)));
    let scopes = JSON.stringify(scopeConfigsOf(mesh.current()));
    this.unsubscribe.push(
      mesh.subscribe((next) => {
        const text = JSON.stringify(scopeConfigsOf(next));
        if (text === scopes) return;
        scopes = text;
        this.store.replace(
          'Service',
          remote.list('Service').filter((s) => this.wanted('Service', s)),
        );
      }),
    );
  }

  close(): void {
    for (const u of this.unsubscribe.splice(0)) u();
  }

  private wanted(kind: KindId, object: KubeObject): boolean {
    if (kind !== 'Service') return true;
    const ns = this.remote.get('Namespace', undefined, object.metadata.namespace ?? '');
    return serviceScope(scopeConfigsOf(this.mesh.current()), object, ns) === 'GLOBAL';
  }

  private fromRemote(events: readonly StoreEvent[]): void {
    const out: Change[] = [];
    for (const e of events) {
      if (!REMOTE.has(e.kind)) continue;
      if (e.type === 'delete') out.push({ kind: e.kind, object: e.object, deleted: true });
      else out.push({ kind: e.kind, object: e.object, deleted: !this.wanted(e.kind, e.object) });
      // A namespace's labels decide its Services' scope.
      if (e.kind === 'Namespace' && e.type !== 'delete')
        for (const s of this.remote.list('Service', e.object.metadata.name))
          out.push({ kind: 'Service', object: s, deleted: !this.wanted('Service', s) });
    }
    // Deleting what the feed never held is a no-op in the store.
    if (out.length) this.store.apply(out);
  }

  private fromConfig(events: readonly StoreEvent[]): void {
    const out: Change[] = [];
    for (const e of events)
      if (SHARED.has(e.kind)) out.push({ kind: e.kind, object: e.object, deleted: e.type === 'delete' });
    if (out.length) this.store.apply(out);
  }
}
