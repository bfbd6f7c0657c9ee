// Wiring of the ambient status controller (AMBIENT_ENABLE_STATUS): in Kubernetes mode it writes
// through the status subresource on the replica that leads istio-status-leader (istiod's status
// election), in local mode it keeps the conditions in memory; either way /debug/status shows them.

import type { DebugRegistry, DebugResponse, OnShutdown } from '../../contract/host';
import { LEASE_NAMES, type LeaderElector } from '../../contract/leader';
import type { MeshConfigSource } from '../../mesh/types';
import type { KubeWriter } from '../../store/kube/writes';
import type { ObjectStore } from '../../store/types';
import { AmbientStatusController, OWNED_TYPES, type StatusFacts } from './controller';
import { STATUS_KINDS } from './dirty';
import { ownedConditions } from './merge';
import { KubeStatusSink, MemoryStatusSink, type StatusSink } from './sinks';

export { AmbientStatusController, OWNED_TYPES } from './controller';
export type { StatusFacts } from './controller';

/** istiod's lease for status writers: a coordination.k8s.io Lease, not per revision. */
export const STATUS_LEASE = LEASE_NAMES.status;
/** The debug page: /debug/status. */
export const STATUS_DEBUG_PAGE = 'status';

export interface StatusHost {
  options: { env: { AMBIENT_ENABLE_STATUS: boolean } };
  store: ObjectStore;
  mesh: MeshConfigSource;
  leader: LeaderElector;
  debug: DebugRegistry;
  onShutdown: OnShutdown;
}

/** Every object carrying one of our conditions, with only those conditions (query: kind=, namespace=). */
export function registerStatusDebug(debug: DebugRegistry, store: ObjectStore, sink: StatusSink): void {
  debug.add(
    STATUS_DEBUG_PAGE,
    'Ambient status conditions (ZtunnelAccepted, WaypointAccepted, istio.io/WaypointBound, istio.io/WaypointMissing, ' +
      'istio.io/VisibilityApplied) as written (query: kind=, namespace=)',
    (req): DebugResponse => {
      const kindFilter = req.query.get('kind');
      const namespace = req.query.get('namespace');
      const out: { kind: string; namespace: string; name: string; conditions: unknown[] }[] = [];
      for (const kind of STATUS_KINDS) {
        if (kindFilter !== null && kindFilter !== kind) continue;
        for (const o of store.list(kind, namespace ?? undefined)) {
          const conditions = ownedConditions(sink.current(kind, o), OWNED_TYPES[kind]);
          if (conditions.length === 0) continue;
          out.push({ kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name, conditions });
        }
      }
      out.sort((a, b) => `${a.kind}/${a.namespace}/${a.name}`.localeCompare(`${b.kind}/${b.namespace}/${b.name}`));
      return { body: out };
    },
  );
}

/**
 * Starts the controller under the status lease (local mode always leads). `writer` is the
 * Kubernetes writer, absent in local mode. Does nothing when AMBIENT_ENABLE_STATUS is false.
 */
export function startAmbientStatus(
  host: StatusHost,
  facts: StatusFacts,
  writer: KubeWriter | undefined,
): AmbientStatusController | undefined {
  if (!host.options.env.AMBIENT_ENABLE_STATUS) return undefined;
  const sink: StatusSink = writer ? new KubeStatusSink(writer) : new MemoryStatusSink();
  const controller = new AmbientStatusController({
    store: host.store,
    facts,
    sink,
    onMeshChange: (listener) => host.mesh.subscribe(() => listener()),
  });
  registerStatusDebug(host.debug, host.store, sink);
  host.leader.runWhileLeader(STATUS_LEASE, () => {
    controller.start();
    return () => controller.stop();
  });
  // Shutdown stops the controller even when leadership is never handed back.
  host.onShutdown(() => controller.stop());
  return controller;
}
