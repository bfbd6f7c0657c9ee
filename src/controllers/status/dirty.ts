// Which objects' conditions a store event can change. The table, and why it is complete:
//
//   AuthorizationPolicy, Service, ServiceEntry, WorkloadEntry -> itself (its spec, labels,
//     annotations, generation).
//   Namespace -> every Service, ServiceEntry and WorkloadEntry in it (its use-waypoint and
//     ingress-use-waypoint labels are inherited, its labels decide Selector attachment and
//     ServiceEntry visibility).
//   Gateway <ns>/<name> -> the Services, ServiceEntries and WorkloadEntries naming it in
//     use-waypoint(-canary), and every one of them in a namespace whose labels name it (whether it
//     is ready, where it admits from and which traffic it carries all come from the Gateway), and
//     the WorkloadEntries that are its instances (gateway-name).
//   GatewayClass -> as each Gateway of that class (the class gives the default traffic type).
//   meshConfig (not a store event) -> every ServiceEntry (serviceEntryVisibility) and every
//     AuthorizationPolicy (the root namespace; visibility decides what a ServiceEntry binds).
// WaypointAccepted follows the targets of a policy's targetRefs: whenever a Service or ServiceEntry
// is marked above, so are the policies targeting it; a Gateway or GatewayClass marks the policies
// targeting it, and through its Services the policies targeting those.
// Both the old and the new object of an update mark, so what an object stopped naming is rechecked.

import { INDEX, registerIndexes } from '../../ambient/store-view';
import { targetRefsOf } from '../../ambient/waypoint-policy-status';
import type { KubeObject, ObjectStore, StoreEvent } from '../../store/types';

export const STATUS_KINDS = ['AuthorizationPolicy', 'Service', 'ServiceEntry', 'WorkloadEntry'] as const;
export type StatusKind = (typeof STATUS_KINDS)[number];

/** `<kind>/<namespace>/<name>`: the controller's work-queue key. */
export const statusKey = (kind: StatusKind, o: KubeObject) =>
  `${kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

export function parseStatusKey(key: string): { kind: StatusKind; namespace: string; name: string } | undefined {
  const [kind, namespace, ...rest] = key.split('/');
  if (!STATUS_KINDS.includes(kind as StatusKind) || namespace === undefined || rest.length !== 1) return undefined;
  return { kind: kind as StatusKind, namespace, name: rest[0] ?? '' };
}

export const isStatusKind = (k: string): k is StatusKind => (STATUS_KINDS as readonly string[]).includes(k);

/** AuthorizationPolicies by target: `<kind>/<namespace>/<name>`, or `GatewayClass/<name>`. */
export const TARGET_INDEX = 'status.targetRef';
const TARGET_KINDS = ['Gateway', 'Service', 'ServiceEntry'];

export function targetKeys(ap: KubeObject): string[] {
  const keys: string[] = [];
  for (const ref of targetRefsOf((ap.spec ?? {}) as Record<string, unknown>)) {
    const kind = typeof ref['kind'] === 'string' ? ref['kind'] : '';
    const name = typeof ref['name'] === 'string' ? ref['name'] : '';
    const ns = (typeof ref['namespace'] === 'string' && ref['namespace']) || (ap.metadata.namespace ?? '');
    if (kind === 'GatewayClass') keys.push(`GatewayClass/${name}`);
    else if (TARGET_KINDS.includes(kind)) keys.push(`${kind}/${ns}/${name}`);
  }
  return keys;
}

/** Stores the target index is registered in (it may be once per store; trackers may be several). */
const indexed = new WeakSet<ObjectStore>();

export class StatusDirtyTracker {
  constructor(private readonly store: ObjectStore) {
    // The ambient index registers them first in the server; a test may build the tracker alone.
    registerIndexes(store);
    if (!indexed.has(store)) {
      store.addIndex('AuthorizationPolicy', TARGET_INDEX, targetKeys);
      indexed.add(store);
    }
  }

  /** The policies targeting `key` (a TARGET_INDEX key). */
  private targeting(key: string, out: Set<string>): void {
    for (const ap of this.store.indexed('AuthorizationPolicy', TARGET_INDEX, key))
      out.add(statusKey('AuthorizationPolicy', ap));
  }

  /** A Service or ServiceEntry, and the policies targeting it. */
  private service(kind: 'Service' | 'ServiceEntry', o: KubeObject, out: Set<string>): void {
    out.add(statusKey(kind, o));
    this.targeting(`${kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, out);
  }

  private inNamespace(namespace: string, out: Set<string>): void {
    for (const kind of ['Service', 'ServiceEntry'] as const)
      for (const o of this.store.list(kind, namespace)) this.service(kind, o, out);
    for (const o of this.store.list('WorkloadEntry', namespace)) out.add(statusKey('WorkloadEntry', o));
  }

  private namingWaypoint(ref: string, out: Set<string>): void {
    this.targeting(`Gateway/${ref}`, out);
    for (const kind of ['Service', 'ServiceEntry'] as const)
      for (const o of this.store.byIndex(kind, INDEX.waypointRef, ref)) this.service(kind, o, out);
    // Entries naming it, and its own entries (an instance of a waypoint reports no binding).
    for (const index of [INDEX.waypointRef, INDEX.gatewayName])
      for (const o of this.store.byIndex('WorkloadEntry', index, ref)) out.add(statusKey('WorkloadEntry', o));
    for (const ns of this.store.byIndex('Namespace', INDEX.waypointRef, ref)) this.inNamespace(ns.metadata.name, out);
  }

  /** Adds to `out` the keys whose conditions `e` may change. */
  mark(e: StoreEvent, out: Set<string>): void {
    const objects = e.old ? [e.object, e.old] : [e.object];
    if (e.kind === 'Service' || e.kind === 'ServiceEntry') {
      this.service(e.kind, e.object, out);
      return;
    }
    if (isStatusKind(e.kind)) {
      out.add(statusKey(e.kind, e.object));
      return;
    }
    for (const o of objects) {
      switch (e.kind) {
        case 'Namespace':
          this.inNamespace(o.metadata.name, out);
          break;
        case 'Gateway':
          this.namingWaypoint(`${o.metadata.namespace ?? ''}/${o.metadata.name}`, out);
          break;
        case 'GatewayClass':
          this.targeting(`GatewayClass/${o.metadata.name}`, out);
          for (const gw of this.store.byIndex('Gateway', INDEX.gatewayClass, o.metadata.name))
            this.namingWaypoint(`${gw.metadata.namespace ?? ''}/${gw.metadata.name}`, out);
          break;
        default:
          break;
      }
    }
  }

  /** Every object that can carry our conditions (leadership gained). */
  all(out: Set<string>): void {
    for (const kind of STATUS_KINDS) for (const o of this.store.list(kind)) out.add(statusKey(kind, o));
  }

  /** Every ServiceEntry and AuthorizationPolicy (meshConfig changed). */
  meshChanged(out: Set<string>): void {
    for (const kind of ['ServiceEntry', 'AuthorizationPolicy'] as const)
      for (const o of this.store.list(kind)) out.add(statusKey(kind, o));
  }
}
