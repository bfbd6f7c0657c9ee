// Which derived resources a store event touches. Each rule follows a dependency of the derivations:
// e.g. a Service's selector decides which pods list it, so a Service event marks the pods its old
// and new selectors pick, found through the label index.
//
// The invalidation contract. Outputs are recomputed per key: a pod or WorkloadEntry gives one
// Workload; a ServiceEntry its inline-endpoint Workloads; an EndpointSlice the selector-less
// endpoints it lists; a hostname one Service; an AuthorizationPolicy one Authorization; the
// PeerAuthentications together give the synthesized policies. Both the old and the new object of
// an update are marked, so whatever an object stopped matching is recomputed as well as what it
// now matches.
//
// | input kind          | marks dirty                                                    | why that is complete                                                    |
// |---------------------|----------------------------------------------------------------|-------------------------------------------------------------------------|
// | Pod                 | that pod                                                       | a Workload reads its own pod; what selects it is looked up at recompute |
// | WorkloadEntry       | that entry                                                     | as Pod                                                                  |
// | Service             | its hostname; pods/entries its selector picks; its slices and  | a Service resource is its hostname; a workload lists the services that  |
// |                     | the pods those slices target                                   | select it or whose slices name it                                       |
// | ServiceEntry        | that entry; each of its hosts; pods/entries its                | its own Workloads; one Service per host; selected workloads list it;    |
// |                     | workloadSelector picks; then every entry claiming those hosts  | one claimant per namespace wins a host, so every claimant is re-decided |
// | EndpointSlice       | that slice; the pods it targets                                | selector-less endpoints come from slices; a targeted pod lists the      |
// |                     |                                                                | slice's service                                                         |
// | Namespace           | everything in it (auto-allow: its Services' slice pods too);   | namespace labels give waypoints and use-waypoint; the system namespace's |
// |                     | everything if it is the network namespace                      | network label is every workload's network                               |
// | Node                | the pods on it                                                 | node labels give a pod's locality; nothing else reads nodes             |
// | Gateway             | workloads, services, entries and namespaces using it as a      | waypoint addresses are resolved from the Gateway; a gateway's own pods  |
// |                     | waypoint; pods that are its instances; its implicit policy and | carry its name; with PILOT_AUTO_ALLOW_WAYPOINT_POLICY a workload lists  |
// |                     | (auto-allow) the workloads of services bound to it             | its services' waypoints' policies                                       |
// | Pod of a waypoint   | (auto-allow, when added, deleted, or its gateway-name or       | the waypoint's pods give its policy's principals, and whether it exists |
// |                     | service account changes) as its Gateway                        |                                                                         |
// | GatewayClass        | every Gateway of that class (as Gateway)                       | the class decides whether a Gateway is a waypoint                       |
// | AuthorizationPolicy | that policy; with a selector, the workloads it picks (every    | a workload lists the selector policies that bind it; the root namespace |
// |                     | namespace for the root namespace) and the entries of its ns    | is mesh-wide                                                            |
// | PeerAuthentication  | the synthesized policies; the workloads it picks; all for a    | a selector PA binds to workloads; a mesh-wide PA changes every          |
// |                     | mesh-wide PA in the root namespace                             | workload's policy list                                                  |
// | any other kind      | nothing                                                        | no derivation reads it                                                  |
//
// Namespace, Node, Gateway and GatewayClass fan out widely, so an update that leaves the fields the
// derivations read unchanged (FAN_OUT_PROJECTIONS) marks nothing. The property test
// (test/unit/ambient/property.test.ts: incremental equals rebuild after random events) is the proof
// of completeness; this table is the explanation, and a new derivation input needs a row here.

import type { KubeObject, ObjectStore, StoreEvent } from '../store/types';
import { keyOf } from '../store/types';
import { matchLabels } from '../store/selector';
import { INDEX } from './store-view';
import { kubeServiceHostname } from './services';
import { LABEL } from './constants';
import {
  authorizationPolicySpec,
  gatewaySpec,
  podSpec,
  gatewayStatus,
  peerAuthenticationSpec,
  serviceEntrySpec,
  serviceSpec,
  sliceEndpoints,
} from './specs';
import { workloadEntryLabels } from './workloads';

export class DirtySet {
  readonly pods = new Set<string>();
  readonly workloadEntries = new Set<string>();
  readonly serviceEntries = new Set<string>();
  readonly slices = new Set<string>();
  readonly hostnames = new Set<string>();
  readonly policies = new Set<string>();
  /** Gateways whose implicit waypoint policy (PILOT_AUTO_ALLOW_WAYPOINT_POLICY) is recomputed. */
  readonly waypoints = new Set<string>();
  peerAuthentications = false;
  all = false;
}

export interface DirtyContext {
  store: ObjectStore;
  domain: string;
  rootNamespace: string;
  /** The namespace whose network label gives the local network, if the network is not fixed. */
  networkNamespace?: string;
  /** PILOT_AUTO_ALLOW_WAYPOINT_POLICY: workloads list the policies of their services' waypoints too. */
  autoAllowWaypointPolicy?: boolean;
}

const ns = (o: KubeObject) => o.metadata.namespace ?? '';

/** Pods and WorkloadEntries in `namespace` (any namespace for '*') whose labels include `selector`. */
function markSelected(
  ctx: DirtyContext,
  d: DirtySet,
  namespace: string,
  selector: Record<string, string> | undefined,
  emptySelectsAll: boolean,
): void {
  if (!selector) return;
  // Any one pair finds every candidate through the label index; matchLabels then checks them all.
  const [first] = Object.entries(selector);
  if (!first) {
    if (!emptySelectsAll) return;
    const list = (kind: 'Pod' | 'WorkloadEntry') =>
      namespace === '*' ? ctx.store.list(kind) : ctx.store.list(kind, namespace);
    for (const p of list('Pod')) d.pods.add(keyOf(p));
    for (const w of list('WorkloadEntry')) d.workloadEntries.add(keyOf(w));
    return;
  }
  const [k, v] = first;
  // The label index is per namespace: filing every pair under '*' as well doubled the index's
  // cost for every pod, for the rare root-namespace policy change that reads it this way.
  const pods = ctx.store.labelIndex('Pod', INDEX.labels);
  for (const n of namespace === '*' ? pods.scopes() : [namespace])
    for (const p of pods.withLabel(n, k, v)) if (matchLabels(p.metadata.labels, selector)) d.pods.add(keyOf(p));
  const entries = ctx.store.labelIndex('WorkloadEntry', INDEX.labels);
  for (const n of namespace === '*' ? entries.scopes() : [namespace])
    for (const w of entries.withLabel(n, k, v))
      if (matchLabels(workloadEntryLabels(w), selector)) d.workloadEntries.add(keyOf(w));
}

function markServiceEntries(ctx: DirtyContext, d: DirtySet, namespace: string): void {
  const list =
    namespace === ctx.rootNamespace ? ctx.store.list('ServiceEntry') : ctx.store.list('ServiceEntry', namespace);
  for (const se of list) d.serviceEntries.add(keyOf(se));
}

function markNamespace(ctx: DirtyContext, d: DirtySet, namespace: string): void {
  if (namespace === ctx.networkNamespace) d.all = true;
  for (const p of ctx.store.list('Pod', namespace)) d.pods.add(keyOf(p));
  for (const w of ctx.store.list('WorkloadEntry', namespace)) d.workloadEntries.add(keyOf(w));
  for (const s of ctx.store.list('Service', namespace)) {
    d.hostnames.add(kubeServiceHostname(s.metadata.name, namespace, ctx.domain));
    // The namespace's use-waypoint binds its Services, whose slices may name pods of other namespaces.
    if (ctx.autoAllowWaypointPolicy)
      for (const slice of ctx.store.byIndex('EndpointSlice', INDEX.sliceService, keyOf(s))) markSlicePods(d, slice);
  }
  for (const se of ctx.store.list('ServiceEntry', namespace)) {
    d.serviceEntries.add(keyOf(se));
    for (const h of serviceEntrySpec(se).hosts ?? []) d.hostnames.add(h);
  }
}

/** The workloads that list Service `s`: those its selector picks and those its slices name. */
function markServiceUsers(ctx: DirtyContext, d: DirtySet, s: KubeObject): void {
  markSelected(ctx, d, ns(s), serviceSpec(s).selector, false);
  for (const slice of ctx.store.byIndex('EndpointSlice', INDEX.sliceService, keyOf(s))) markSlicePods(d, slice);
}

function markWaypoint(ctx: DirtyContext, d: DirtySet, key: string): void {
  for (const p of ctx.store.byIndex('Pod', INDEX.waypointRef, key)) d.pods.add(keyOf(p));
  for (const p of ctx.store.byIndex('Pod', INDEX.gatewayName, key)) d.pods.add(keyOf(p));
  for (const w of ctx.store.byIndex('WorkloadEntry', INDEX.waypointRef, key)) d.workloadEntries.add(keyOf(w));
  for (const w of ctx.store.byIndex('WorkloadEntry', INDEX.gatewayName, key)) d.workloadEntries.add(keyOf(w));
  for (const s of ctx.store.byIndex('Service', INDEX.waypointRef, key))
    d.hostnames.add(kubeServiceHostname(s.metadata.name, ns(s), ctx.domain));
  for (const se of ctx.store.byIndex('ServiceEntry', INDEX.waypointRef, key)) {
    d.serviceEntries.add(keyOf(se));
    for (const h of serviceEntrySpec(se).hosts ?? []) d.hostnames.add(h);
  }
  for (const n of ctx.store.byIndex('Namespace', INDEX.waypointRef, key)) markNamespace(ctx, d, n.metadata.name);
  if (!ctx.autoAllowWaypointPolicy) return;
  // A workload also lists the implicit policy of each waypoint its services bind (namespaces
  // bound to it were marked whole above, their Services' slice pods with them).
  for (const s of ctx.store.byIndex('Service', INDEX.waypointRef, key)) markServiceUsers(ctx, d, s);
  for (const se of ctx.store.byIndex('ServiceEntry', INDEX.waypointRef, key))
    markSelected(ctx, d, ns(se), serviceEntrySpec(se).workloadSelector?.labels, false);
}

/**
 * PILOT_AUTO_ALLOW_WAYPOINT_POLICY: a waypoint's pods give its policy's principals, and whether it
 * has one at all, which every workload behind the waypoint lists. A pod change that leaves its
 * gateway-name label and service account alone (status, readiness) changes neither.
 */
function markWaypointInstance(ctx: DirtyContext, d: DirtySet, event: StoreEvent): void {
  const gw = (o: KubeObject | undefined) => o?.metadata.labels?.[LABEL.gatewayName];
  const sa = (o: KubeObject | undefined) => (o ? podSpec(o).serviceAccountName : undefined);
  const { old, object } = event;
  // A delete's object is the pod's last state, so it names the waypoint the pod leaves.
  const instanceOf = new Set([gw(old), gw(object)]);
  if (event.type === 'update' && old && gw(old) === gw(object) && sa(old) === sa(object)) return;
  for (const name of instanceOf) {
    if (name === undefined) continue;
    const key = `${ns(object)}/${name}`;
    d.waypoints.add(key);
    markWaypoint(ctx, d, key);
  }
}

function markSlicePods(d: DirtySet, slice: KubeObject): void {
  for (const { targetRef: ref } of sliceEndpoints(slice)) {
    if (ref?.kind === 'Pod' && ref.name) d.pods.add(`${ref.namespace ?? ns(slice)}/${ref.name}`);
  }
}

function markPeerAuthentication(ctx: DirtyContext, d: DirtySet, pa: KubeObject): void {
  d.peerAuthentications = true;
  const namespace = ns(pa);
  const selector = peerAuthenticationSpec(pa).selector;
  const matchLabelsOf = selector?.matchLabels ?? {};
  if (namespace === ctx.rootNamespace && !selector) {
    d.all = true;
    return;
  }
  markSelected(ctx, d, namespace, matchLabelsOf, true);
  markServiceEntries(ctx, d, namespace);
}

/**
 * What the derivations read of the kinds whose changes fan out widely; an update that leaves this
 * unchanged (a status heartbeat, a new resourceVersion) touches nothing.
 */
const FAN_OUT_PROJECTIONS: Partial<Record<StoreEvent['kind'], (o: KubeObject) => unknown>> = {
  Namespace: (o) => [o.metadata.labels, o.metadata.annotations],
  Node: (o) => o.metadata.labels,
  Gateway: (o) => [
    o.metadata.labels,
    o.metadata.annotations,
    gatewaySpec(o).gatewayClassName,
    gatewaySpec(o).listeners,
    gatewayStatus(o).addresses,
  ],
  GatewayClass: (o) => [o.metadata.labels, o.metadata.annotations],
};

function unchangedForDerivations(event: StoreEvent): boolean {
  const project = FAN_OUT_PROJECTIONS[event.kind];
  if (!project || event.type !== 'update' || !event.old) return false;
  return JSON.stringify(project(event.old)) === JSON.stringify(project(event.object));
}

export function markEvent(ctx: DirtyContext, d: DirtySet, event: StoreEvent): void {
  if (unchangedForDerivations(event)) return;
  if (event.kind === 'Pod' && ctx.autoAllowWaypointPolicy) markWaypointInstance(ctx, d, event);
  const objects = event.old ? [event.old, event.object] : [event.object];
  for (const o of objects) {
    const key = keyOf(o);
    switch (event.kind) {
      case 'Pod':
        d.pods.add(key);
        break;
      case 'WorkloadEntry':
        d.workloadEntries.add(key);
        break;
      case 'Service': {
        d.hostnames.add(kubeServiceHostname(o.metadata.name, ns(o), ctx.domain));
        markSelected(ctx, d, ns(o), serviceSpec(o).selector, false);
        for (const slice of ctx.store.byIndex('EndpointSlice', INDEX.sliceService, key)) {
          d.slices.add(keyOf(slice));
          markSlicePods(d, slice);
        }
        break;
      }
      case 'ServiceEntry':
        d.serviceEntries.add(key);
        for (const h of serviceEntrySpec(o).hosts ?? []) d.hostnames.add(h);
        markSelected(ctx, d, ns(o), serviceEntrySpec(o).workloadSelector?.labels, false);
        break;
      case 'EndpointSlice':
        d.slices.add(key);
        markSlicePods(d, o);
        break;
      case 'Namespace':
        markNamespace(ctx, d, o.metadata.name);
        break;
      case 'Node':
        for (const p of ctx.store.byIndex('Pod', INDEX.node, o.metadata.name)) d.pods.add(keyOf(p));
        break;
      case 'Gateway':
        d.waypoints.add(key);
        markWaypoint(ctx, d, key);
        break;
      case 'GatewayClass':
        for (const gw of ctx.store.byIndex('Gateway', INDEX.gatewayClass, o.metadata.name))
          markWaypoint(ctx, d, keyOf(gw));
        break;
      case 'AuthorizationPolicy': {
        d.policies.add(key);
        const ml = authorizationPolicySpec(o).selector?.matchLabels;
        if (ml !== undefined && ml !== null) {
          markSelected(ctx, d, ns(o) === ctx.rootNamespace ? '*' : ns(o), ml, true);
          markServiceEntries(ctx, d, ns(o));
        }
        break;
      }
      case 'PeerAuthentication':
        markPeerAuthentication(ctx, d, o);
        break;
      default:
        break;
    }
  }
}

/**
 * A hostname's winners decide which hosts a ServiceEntry keeps, so every entry claiming a marked
 * hostname recomputes its workloads, and the pods and WorkloadEntries it selects their services.
 */
export function expandHostnames(ctx: DirtyContext, d: DirtySet): void {
  for (const h of d.hostnames) {
    for (const se of ctx.store.byIndex('ServiceEntry', INDEX.host, h)) {
      d.serviceEntries.add(keyOf(se));
      markSelected(ctx, d, ns(se), serviceEntrySpec(se).workloadSelector?.labels, false);
    }
  }
}
