// Which waypoint a Service or ServiceEntry is bound to, and why not when istio.io/use-waypoint
// names one that cannot be used: plain facts for the istio.io/WaypointBound condition. The
// resolution is serviceWaypoint's and boundCanary's (waypoints.ts) with the reason kept where
// those return nothing (istiod's fetchWaypointForService and buildWeightedWaypoints).

import { parseGoBool } from '../config/bool';
import type { KubeObject } from '../store/types';
import {
  ANNOTATION,
  LABEL,
  MANAGED_EASTWEST_CONTROLLER,
  MANAGED_MESH_CONTROLLER,
  MAX_CANARY_WEIGHT,
} from './constants';
import { kubeService } from './services';
import type { MeshView } from './view';
import { visibilityFor } from './visibility';
import { Waypoint, attachmentAllowed, canaryRefFromLabels, waypointRefFromLabels } from './waypoints';

/** Why a named waypoint (or canary) is not used; `waypoint` is `<namespace>/<name>` as named. */
export type WaypointProblem =
  /** No Gateway of that name with a status address yet. */
  | { kind: 'notReady'; waypoint: string }
  /** The waypoint's allowedRoutes do not admit the object's namespace. */
  | { kind: 'attachmentDenied'; waypoint: string }
  /** The waypoint is not for this traffic (istio.io/waypoint-for): service, or workload for a WorkloadEntry. */
  | { kind: 'unsupportedTrafficType'; waypoint: string; trafficType: 'service' | 'workload' }
  /** A namespace-private ServiceEntry named a waypoint of another namespace. */
  | { kind: 'crossNamespaceForbidden'; waypoint: string }
  /** The canary weight annotation is not an integer in 0..100. */
  | { kind: 'canaryInvalidWeight'; waypoint: string }
  /** The canary names the primary waypoint. */
  | { kind: 'canarySameAsPrimary'; waypoint: string };

export interface WaypointStatusFacts {
  kind: 'Service' | 'ServiceEntry';
  namespace: string;
  name: string;
  /** The waypoint traffic goes through, with the ingress-use-waypoint label as read. */
  bound?: { waypoint: string; ingressLabelPresent: boolean; ingressUseWaypoint: boolean };
  /** Without `bound`: why nothing is bound. With it: why the canary is not used. */
  problem?: WaypointProblem;
  /** ServiceEntries only: what istio.io/WaypointMissing and istio.io/VisibilityApplied are written from. */
  entry?: ServiceEntryFacts;
}

export interface ServiceEntryFacts {
  /** Some host starts with `*` (istiod's IsWildCarded): ztunnel needs a waypoint to resolve it. */
  wildcardHost: boolean;
  /** istio.io/connect-strategy is RACE_FIRST_TCP_CONNECT (any case): only a waypoint races connections. */
  racingConnectStrategy: boolean;
  /** What meshConfig.serviceEntryVisibility resolved to; absent when meshConfig does not set it. */
  visibility?: 'PUBLIC' | 'NAMESPACE';
}

/** istiod's GetDNSConnectStrategy: the annotation and the one strategy that is not the default. */
export const CONNECT_STRATEGY_ANNOTATION = 'istio.io/connect-strategy';
const RACE_FIRST_TCP_CONNECT = 'RACE_FIRST_TCP_CONNECT';

function serviceEntryFacts(
  o: KubeObject,
  hosts: unknown[],
  visibility: 'PUBLIC' | 'NAMESPACE',
  view: MeshView,
): ServiceEntryFacts {
  const strategy = o.metadata.annotations?.[CONNECT_STRATEGY_ANNOTATION] ?? '';
  const entry: ServiceEntryFacts = {
    wildcardHost: hosts.some((h) => typeof h === 'string' && h.startsWith('*')),
    // Go's strings.EqualFold; for this all-ASCII value, upper-casing finds the same matches.
    racingConnectStrategy: strategy.toUpperCase() === RACE_FIRST_TCP_CONNECT,
  };
  if (view.settings.serviceEntryVisibility !== undefined) entry.visibility = visibility;
  return entry;
}

const key = (ns: string, name: string) => `${ns}/${name}`;
const has = (m: Record<string, string> | undefined, k: string): m is Record<string, string> =>
  m !== undefined && Object.prototype.hasOwnProperty.call(m, k);

/** fetchWaypointForTarget with its reasons: the object's own label, else its namespace's. */
export function resolveTarget(
  namespace: string,
  labels: Record<string, string> | undefined,
  view: MeshView,
): { waypoint?: Waypoint; problem?: WaypointProblem } {
  const own = waypointRefFromLabels(labels, namespace);
  if (own === null) return {};
  let ref = own;
  if (ref === undefined) {
    const ns = view.get('Namespace', undefined, namespace);
    ref = ns ? (waypointRefFromLabels(ns.metadata.labels, namespace) ?? undefined) : undefined;
  }
  if (!ref) return {};
  const named = key(ref.namespace, ref.name);
  const wp = view.waypoint(ref.namespace, ref.name);
  if (!wp) return { problem: { kind: 'notReady', waypoint: named } };
  if (!attachmentAllowed(wp, namespace, view)) return { problem: { kind: 'attachmentDenied', waypoint: named } };
  return { waypoint: wp };
}

const carriesServiceTraffic = (wp: Waypoint) => wp.trafficType === 'service' || wp.trafficType === 'all';

/** Go's strconv.Atoi then a 0..100 check; absent is 0. */
function canaryWeightValid(text: string | undefined): boolean {
  if (text === undefined) return true;
  if (!/^[+-]?\d+$/.test(text)) return false;
  const n = Number(text);
  return n >= 0 && n <= MAX_CANARY_WEIGHT;
}

/** The problem with the canary of a bound object, if it declares one that cannot be used. */
function canaryProblem(o: KubeObject, primary: Waypoint, view: MeshView): WaypointProblem | undefined {
  const namespace = o.metadata.namespace ?? '';
  const labels = o.metadata.labels;
  const nsMeta = waypointRefFromLabels(labels, namespace)
    ? undefined
    : view.get('Namespace', undefined, namespace)?.metadata;
  const canaryLabels =
    !has(labels, LABEL.useWaypointCanary) && has(nsMeta?.labels, LABEL.useWaypointCanary) ? nsMeta.labels : labels;
  const ref = canaryRefFromLabels(canaryLabels, namespace);
  if (!ref) return undefined;
  const named = key(ref.namespace, ref.name);
  if (named === key(primary.namespace, primary.name)) return { kind: 'canarySameAsPrimary', waypoint: named };
  let weight = o.metadata.annotations?.[ANNOTATION.useWaypointCanaryWeight];
  if (weight === undefined && nsMeta) weight = nsMeta.annotations?.[ANNOTATION.useWaypointCanaryWeight];
  if (!canaryWeightValid(weight)) return { kind: 'canaryInvalidWeight', waypoint: named };
  const wp = view.waypoint(ref.namespace, ref.name);
  if (!wp) return { kind: 'notReady', waypoint: named };
  if (!attachmentAllowed(wp, namespace, view)) return { kind: 'attachmentDenied', waypoint: named };
  if (!carriesServiceTraffic(wp)) return { kind: 'unsupportedTrafficType', waypoint: named, trafficType: 'service' };
  return undefined;
}

/** istio.io/ingress-use-waypoint on the object, else on its namespace: present, and parsed as a Go bool. */
function ingressLabel(o: KubeObject, view: MeshView): { ingressLabelPresent: boolean; ingressUseWaypoint: boolean } {
  const own = o.metadata.labels;
  const nsLabels = view.get('Namespace', undefined, o.metadata.namespace ?? '')?.metadata.labels;
  const labels = has(own, LABEL.ingressUseWaypoint)
    ? own
    : has(nsLabels, LABEL.ingressUseWaypoint)
      ? nsLabels
      : undefined;
  if (!labels) return { ingressLabelPresent: false, ingressUseWaypoint: false };
  return {
    ingressLabelPresent: true,
    ingressUseWaypoint: parseGoBool(labels[LABEL.ingressUseWaypoint] ?? '') === true,
  };
}

/**
 * The facts for a Service or ServiceEntry, or undefined when ztunnel gets no Service from it (an
 * ExternalName or unparsable Service, a ServiceEntry without hosts or hidden by
 * meshConfig.serviceEntryVisibility): istiod writes no condition on those.
 */
export function waypointStatusFacts(
  kind: 'Service' | 'ServiceEntry',
  o: KubeObject,
  view: MeshView,
): WaypointStatusFacts | undefined {
  const namespace = o.metadata.namespace ?? '';
  let visibility: string | undefined;
  let entry: ServiceEntryFacts | undefined;
  if (kind === 'Service') {
    if (!kubeService(o, view)) return undefined;
  } else {
    const hosts: unknown = (o.spec as Record<string, unknown> | undefined)?.['hosts'];
    if (!Array.isArray(hosts) || hosts.length === 0) return undefined;
    const nsLabels = view.get('Namespace', undefined, namespace)?.metadata.labels;
    const resolved = visibilityFor(view.settings.serviceEntryVisibility, nsLabels);
    if (resolved === 'NONE') return undefined;
    visibility = resolved;
    entry = serviceEntryFacts(o, hosts as unknown[], resolved, view);
  }
  const facts: WaypointStatusFacts = { kind, namespace, name: o.metadata.name, ...(entry ? { entry } : {}) };
  const managed = o.metadata.labels?.[LABEL.managedGateway];
  if (managed === MANAGED_MESH_CONTROLLER || managed === MANAGED_EASTWEST_CONTROLLER) return facts;
  const { waypoint, problem } = resolveTarget(namespace, o.metadata.labels, view);
  if (problem) return { ...facts, problem };
  if (!waypoint) return facts;
  const named = key(waypoint.namespace, waypoint.name);
  if (!carriesServiceTraffic(waypoint))
    return { ...facts, problem: { kind: 'unsupportedTrafficType', waypoint: named, trafficType: 'service' } };
  if (visibility === 'NAMESPACE' && waypoint.namespace !== namespace)
    return { ...facts, problem: { kind: 'crossNamespaceForbidden', waypoint: named } };
  const bound = { waypoint: named, ...ingressLabel(o, view) };
  const canary = canaryProblem(o, waypoint, view);
  return canary ? { ...facts, bound, problem: canary } : { ...facts, bound };
}
