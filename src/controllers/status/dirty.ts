// Which objects' conditions a store event can change. The table, and why it is complete:
//
//   AuthorizationPolicy, Service, ServiceEntry -> itself (its spec, labels, annotations, generation).
//   Namespace -> every Service and ServiceEntry in it (its use-waypoint and ingress-use-waypoint
//     labels are inherited, its labels decide Selector attachment and ServiceEntry visibility).
//   Gateway <ns>/<name> -> the Services and ServiceEntries naming it in use-waypoint(-canary), and
//     every one of them in a namespace whose labels name it (whether it is ready, where it admits
//     from and which traffic it carries all come from the Gateway).
//   GatewayClass -> as each Gateway of that class (the class gives the default traffic type).
//   meshConfig (not a store event) -> every ServiceEntry (serviceEntryVisibility).
// Both the old and the new object of an update mark, so what an object stopped naming is rechecked.

import { INDEX, registerIndexes } from '../../ambient/store-view';
import type { KubeObject, ObjectStore, StoreEvent } from '../../store/types';

export const STATUS_KINDS = ['AuthorizationPolicy', 'Service', 'ServiceEntry'] as const;
export type StatusKind = (typeof STATUS_KINDS)[number];

/** `<kind>/<namespace>/<name>`: the controller's work-queue key. */
export const statusKey = (kind: StatusKind, o: KubeObject) =>
  `${kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

export function parseStatusKey(key: string): { kind: StatusKind; namespace: string; name: string } | undefined {
  const [kind, namespace, ...rest] = key.split('/');
  if (!STATUS_KINDS.includes(kind as StatusKind) || namespace === undefined || rest.length !== 1) return undefined;
  return { kind: kind as StatusKind, namespace, name: rest[0] ?? '' };
}

const isStatusKind = (k: string): k is StatusKind => (STATUS_KINDS as readonly string[]).includes(k);

export class StatusDirtyTracker {
  constructor(private readonly store: ObjectStore) {
    // The ambient index registers them first in the server; a test may build the tracker alone.
    registerIndexes(store);
  }

  private inNamespace(namespace: string, out: Set<string>): void {
    for (const kind of ['Service', 'ServiceEntry'] as const)
      for (const o of this.store.list(kind, namespace)) out.add(statusKey(kind, o));
  }

  private namingWaypoint(ref: string, out: Set<string>): void {
    for (const kind of ['Service', 'ServiceEntry'] as const)
      for (const o of this.store.byIndex(kind, INDEX.waypointRef, ref)) out.add(statusKey(kind, o));
    for (const ns of this.store.byIndex('Namespace', INDEX.waypointRef, ref)) this.inNamespace(ns.metadata.name, out);
  }

  /** Adds to `out` the keys whose conditions `e` may change. */
  mark(e: StoreEvent, out: Set<string>): void {
    const objects = e.old ? [e.object, e.old] : [e.object];
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

  /** Every ServiceEntry (meshConfig changed). */
  serviceEntries(out: Set<string>): void {
    for (const o of this.store.list('ServiceEntry')) out.add(statusKey('ServiceEntry', o));
  }
}
