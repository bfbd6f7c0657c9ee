// PILOT_AUTO_ALLOW_WAYPOINT_POLICY (istiod's DefaultAllowFromWaypoint, off by default): for each
// waypoint run by pods, an ALLOW policy from the service accounts of those pods, named
// istio_allow_waypoint_<ns>_<name> ('_' cannot appear in a Kubernetes name, so it never meets a
// user's policy) in the waypoint's namespace. Every workload behind the waypoint lists it, so once
// it has any other ALLOW policy, traffic that skips the waypoint is denied while the waypoint's
// own traffic still passes.

import type { KubeObject } from '../store/types';
import { AuthzScope, type Authorization } from './messages';
import { podSpec } from './specs';
import type { MeshView } from './view';
import type { Waypoint } from './waypoints';

export const IMPLICIT_WAYPOINT_POLICY_PREFIX = 'istio_allow_waypoint_';

/** The policy's name (without its namespace) for the waypoint Gateway `<namespace>/<name>`. */
export function implicitWaypointPolicyName(namespace: string, name: string): string {
  return `${IMPLICIT_WAYPOINT_POLICY_PREFIX}${namespace}_${name}`;
}

/**
 * The service accounts of the waypoint's pods, sorted, one per pod as istiod lists them (two pods
 * of one account give it twice). spec.serviceAccountName as written: the API server fills it in.
 */
export function waypointServiceAccounts(instances: Iterable<KubeObject>): string[] {
  const out: string[] = [];
  for (const p of instances) out.push(podSpec(p).serviceAccountName ?? '');
  return out.sort();
}

/** The waypoint's policy, or undefined when no pod runs it yet (there is no identity to allow). */
export function implicitWaypointPolicy(wp: Waypoint, view: MeshView): Authorization | undefined {
  const accounts = waypointServiceAccounts(view.waypointInstances(wp.namespace, wp.name));
  if (accounts.length === 0) return undefined;
  const td = view.settings.trustDomain;
  return {
    name: implicitWaypointPolicyName(wp.namespace, wp.name),
    namespace: wp.namespace,
    // Not bound by labels: each workload behind the waypoint names it (implicitWaypointPolicies).
    scope: AuthzScope.WORKLOAD_SELECTOR,
    // ALLOW is the proto default: left unset, so it is not encoded (as istiod's marshalling).
    rules: [
      {
        clauses: [
          { matches: [{ principals: accounts.map((sa) => ({ exact: `${td}/ns/${wp.namespace}/sa/${sa}` })) }] },
        ],
      },
    ],
  };
}

/** `<namespace>/<policy name>` of a waypoint that has pods; undefined otherwise. */
function policyRef(wp: Waypoint, view: MeshView): string | undefined {
  for (const _ of view.waypointInstances(wp.namespace, wp.name))
    return `${wp.namespace}/${implicitWaypointPolicyName(wp.namespace, wp.name)}`;
  return undefined;
}

/**
 * The implicit policies a workload lists, after its other policies: those of its services'
 * waypoints other than its own, once each in `<namespace>/<name>` order (istiod fetches them as a
 * sorted set of keys), then its own waypoint's. A waypoint without pods gives none.
 */
export function implicitWaypointPolicies(
  own: Waypoint | undefined,
  serviceWaypoints: readonly Waypoint[],
  view: MeshView,
): string[] {
  const key = (w: Waypoint) => `${w.namespace}/${w.name}`;
  const ownKey = own ? key(own) : undefined;
  const others = new Map<string, Waypoint>();
  for (const w of serviceWaypoints) if (key(w) !== ownKey) others.set(key(w), w);
  const ordered = [...others].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, w]) => w);
  if (own) ordered.push(own);
  const out: string[] = [];
  for (const w of ordered) {
    const ref = policyRef(w, view);
    if (ref !== undefined) out.push(ref);
  }
  return out;
}
