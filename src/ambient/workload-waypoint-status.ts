// Which waypoint a WorkloadEntry is bound to, and why not when istio.io/use-waypoint names one that
// cannot be used: plain facts for its istio.io/WaypointBound condition. The resolution is
// computeWorkloadWaypoint's (waypoints.ts) with the reason kept where that returns nothing
// (istiod's computeWaypoint and fetchWaypointForWorkload).

import type { KubeObject } from '../store/types';
import { LABEL } from './constants';
import type { MeshView } from './view';
import { resolveTarget, type WaypointProblem } from './waypoint-status';
import { waypointOfInstance } from './waypoints';
import { workloadEntryLabels } from './workloads';

export interface WorkloadWaypointFacts {
  namespace: string;
  name: string;
  /** `<namespace>/<name>` of the waypoint the workload's traffic goes through. */
  bound?: string;
  /** Why the waypoint the entry names is not used (never with `bound`). */
  problem?: WaypointProblem;
}

const carriesWorkloadTraffic = (trafficType: string) => trafficType === 'workload' || trafficType === 'all';

/**
 * The facts for a WorkloadEntry. Its labels are spec.labels overlaid by metadata.labels, as for the
 * workload ztunnel is sent. A waypoint's own entry binds nothing and reports nothing.
 */
export function workloadWaypointFacts(we: KubeObject, view: MeshView): WorkloadWaypointFacts {
  const namespace = we.metadata.namespace ?? '';
  const facts: WorkloadWaypointFacts = { namespace, name: we.metadata.name };
  const labels = workloadEntryLabels(we);
  if (waypointOfInstance(namespace, labels, view)) return facts;
  const { waypoint, problem } = resolveTarget(namespace, labels, view);
  if (problem) return { ...facts, problem };
  if (!waypoint) return facts;
  const named = `${waypoint.namespace}/${waypoint.name}`;
  if (carriesWorkloadTraffic(waypoint.trafficType)) return { ...facts, bound: named };
  // A service waypoint inherited from the namespace is simply not the workload's; named on the
  // entry itself, it is a mistake worth reporting.
  if (!Object.prototype.hasOwnProperty.call(labels, LABEL.useWaypoint)) return facts;
  return { ...facts, problem: { kind: 'unsupportedTrafficType', waypoint: named, trafficType: 'workload' } };
}
