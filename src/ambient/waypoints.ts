// Waypoints: Gateways with status addresses, and which waypoint an object (pod, service, entry)
// is bound to through istio.io/use-waypoint on itself or on its namespace (amb/waypoints.go).

import type { DecisionTrace } from '../contract/decision';
import type { LabelSelector } from '../store/selector';
import { matchesSelector } from '../store/selector';
import type { KubeObject } from '../store/types';
import { ANNOTATION, DEFAULT_TRAFFIC_TYPE, HBONE_PORT, LABEL, MAX_CANARY_WEIGHT, WAYPOINT_NONE } from './constants';
import { parseIp } from './ip';
import { AppTunnelProtocol, ApplicationTunnel, GatewayAddress } from './messages';
import { GatewayListener, gatewaySpec, gatewayStatus, namespaceOf, ownValue } from './specs';

/** The topic of waypoint steps in a decision record (explain). */
const WP = 'waypoint';

/** The listener protocol a PROXY inbound binding attaches to. */
export const PROXY_LISTENER_PROTOCOL = 'istio.io/PROXY';

export interface Waypoint {
  namespace: string;
  name: string;
  /** The istio.io/waypoint-for value as written (an unknown value binds nothing). */
  trafficType: string;
  /** Undefined when no status address is usable; the waypoint still exists and binds. */
  address?: GatewayAddress;
  /** allowedRoutes.namespaces of the bound (or HBONE) listener: who may bind. */
  allowedFrom: string;
  /** For `Selector`; absent means the selector matches nothing, as a nil Kubernetes selector. */
  allowedSelector?: LabelSelector;
  /** The inbound-binding annotation, applied to the waypoint's own pods. */
  inboundBinding?: ApplicationTunnel;
}

/** `<protocol>` or `<protocol>/<port>` with protocol NONE or PROXY; a bad port reads as 0, as in istiod. */
export function parseInboundBinding(value: string | undefined): ApplicationTunnel | undefined {
  if (value === undefined) return undefined;
  const parts = value.split('/');
  if (parts.length > 2) return undefined;
  const protocol =
    parts[0] === 'NONE' ? AppTunnelProtocol.NONE : parts[0] === 'PROXY' ? AppTunnelProtocol.PROXY : undefined;
  if (protocol === undefined) return undefined;
  const out: ApplicationTunnel = {};
  if (protocol) out.protocol = protocol;
  const portText = parts[1]; // present only in `<protocol>/<port>`
  if (portText !== undefined && /^\d+$/.test(portText) && Number(portText) <= 0xffffffff && Number(portText) > 0)
    out.port = Number(portText);
  return out;
}

/** A Hostname status address first (istiod's waypoints publish one), else the first valid IPAddress. */
function gatewayAddress(gateway: KubeObject, network: string): GatewayAddress | undefined {
  const addresses = gatewayStatus(gateway).addresses ?? [];
  const host = addresses.find((a) => a.type === 'Hostname');
  if (host)
    return {
      hostname: { namespace: namespaceOf(gateway), ...(host.value ? { hostname: host.value } : {}) },
      hboneMtlsPort: HBONE_PORT,
    };
  for (const a of addresses) {
    if (a.type !== 'IPAddress') continue;
    const ip = parseIp(a.value);
    if (!ip) continue;
    return { address: network ? { network, address: ip } : { address: ip }, hboneMtlsPort: HBONE_PORT };
  }
  return undefined;
}

/** The listener whose allowedRoutes govern attachment: the bound one, else HBONE on 15008. */
function attachmentListener(
  listeners: readonly GatewayListener[],
  binding: ApplicationTunnel | undefined,
): GatewayListener | undefined {
  if (binding) {
    const bound = binding.port
      ? listeners.find((l) => l.port === binding.port)
      : binding.protocol === AppTunnelProtocol.PROXY
        ? listeners.find((l) => l.protocol === PROXY_LISTENER_PROTOCOL)
        : undefined;
    if (bound) return bound;
  }
  return listeners.find((l) => l.protocol === 'HBONE' && l.port === HBONE_PORT);
}

/** A Gateway is a waypoint once its status has addresses (any class). */
export function waypointFromGateway(
  gateway: KubeObject,
  gatewayClass: KubeObject | undefined,
  network: string,
): Waypoint | undefined {
  const addresses = gatewayStatus(gateway).addresses;
  if (!Array.isArray(addresses) || addresses.length === 0) return undefined;
  let trafficType: string = DEFAULT_TRAFFIC_TYPE;
  const classType = gatewayClass?.metadata.labels?.[LABEL.waypointFor];
  if (classType !== undefined) trafficType = classType;
  const ownType = gateway.metadata.labels?.[LABEL.waypointFor];
  if (ownType !== undefined) trafficType = ownType;
  const bindingText =
    gateway.metadata.annotations?.[ANNOTATION.waypointInboundBinding] ??
    gatewayClass?.metadata.annotations?.[ANNOTATION.waypointInboundBinding];
  const binding = parseInboundBinding(bindingText);
  const listener = attachmentListener(gatewaySpec(gateway).listeners ?? [], binding);
  const namespaces = listener?.allowedRoutes?.namespaces;
  const wp: Waypoint = {
    namespace: namespaceOf(gateway),
    name: gateway.metadata.name,
    trafficType,
    allowedFrom: namespaces?.from ?? 'Same',
  };
  const address = gatewayAddress(gateway, network);
  if (address) wp.address = address;
  if (namespaces?.selector) wp.allowedSelector = namespaces.selector;
  if (binding) wp.inboundBinding = binding;
  return wp;
}

export interface WaypointLookup {
  waypoint(namespace: string, name: string): Waypoint | undefined;
  get(kind: 'Namespace', namespace: undefined, name: string): KubeObject | undefined;
}

export interface WaypointRef {
  namespace: string;
  name: string;
}

/**
 * istiod's GetUseWaypoint: the label's presence decides (even an empty value); `none` is the
 * explicit opt-out (null); a present namespace label overrides the namespace, even when empty.
 */
export function waypointRefFromLabels(
  labels: Record<string, string> | undefined,
  defaultNamespace: string,
): WaypointRef | null | undefined {
  const name = ownValue(labels, LABEL.useWaypoint);
  if (name === undefined) return undefined;
  if (name === WAYPOINT_NONE) return null;
  const nsOverride = ownValue(labels, LABEL.useWaypointNamespace) ?? defaultNamespace;
  return { namespace: nsOverride, name };
}

/** The canary waypoint a set of labels names (istio.io/use-waypoint-canary). */
export function canaryRefFromLabels(
  labels: Record<string, string> | undefined,
  defaultNamespace: string,
): WaypointRef | undefined {
  const name = labels?.[LABEL.useWaypointCanary];
  if (!name || name === WAYPOINT_NONE) return undefined;
  const nsOverride = ownValue(labels, LABEL.useWaypointCanaryNamespace) ?? defaultNamespace;
  return { namespace: nsOverride, name };
}

/** Whether the waypoint's allowedRoutes let an object of `fromNamespace` bind it. */
export function attachmentAllowed(wp: Waypoint, fromNamespace: string, view: WaypointLookup): boolean {
  switch (wp.allowedFrom) {
    case 'All':
      return true;
    case 'Selector': {
      // A missing selector selects nothing (metav1.LabelSelectorAsSelector(nil) is Nothing).
      if (!wp.allowedSelector) return false;
      return matchesSelector(
        view.get('Namespace', undefined, fromNamespace)?.metadata.labels ?? {},
        wp.allowedSelector,
      );
    }
    default:
      return wp.namespace === fromNamespace;
  }
}

/**
 * istiod's fetchWaypointForTarget: the object's own use-waypoint label, else its namespace's (the
 * Namespace object must exist). A named waypoint that is missing or denies attachment gives none;
 * there is no fallback from the object to its namespace.
 */
function waypointForTarget(
  namespace: string,
  labels: Record<string, string> | undefined,
  view: WaypointLookup,
  trace?: DecisionTrace,
): Waypoint | undefined {
  const own = waypointRefFromLabels(labels, namespace);
  if (trace) trace.fact(`own label ${LABEL.useWaypoint}`, ownValue(labels, LABEL.useWaypoint) ?? null);
  if (own === null) {
    if (trace) explainWaypointOptOut(trace);
    return undefined;
  }
  let ref = own;
  if (ref === undefined) {
    const ns = view.get('Namespace', undefined, namespace);
    if (trace) explainNamespaceLabel(trace, namespace, ns);
    ref = ns ? (waypointRefFromLabels(ns.metadata.labels, namespace) ?? undefined) : undefined;
  }
  if (!ref) {
    if (trace) explainWaypointUnlabelled(trace);
    return undefined;
  }
  if (trace) explainWaypointLabel(trace, own !== undefined, ref);
  const wp = view.waypoint(ref.namespace, ref.name);
  if (!wp) {
    if (trace) explainWaypointMissing(trace, ref);
    return undefined;
  }
  const allowed = attachmentAllowed(wp, namespace, view);
  if (trace) explainAttachment(trace, wp, namespace, allowed);
  return allowed ? wp : undefined;
}

// The explain-only steps live in functions of their own, called under `if (trace)`: written inline
// they made the index's hot functions large enough to slow the from-scratch build, which never
// traces.

function explainWaypointOptOut(trace: DecisionTrace): void {
  trace.decide(WP, 'waypoint.opt-out', `${LABEL.useWaypoint}=${WAYPOINT_NONE} opts out of any waypoint`, 'none');
}

function explainNamespaceLabel(trace: DecisionTrace, namespace: string, ns: KubeObject | undefined): void {
  trace.fact(`Namespace ${namespace} exists`, ns !== undefined);
  trace.fact(`namespace label ${LABEL.useWaypoint}`, ownValue(ns?.metadata.labels, LABEL.useWaypoint) ?? null);
}

function explainWaypointUnlabelled(trace: DecisionTrace): void {
  trace.decide(
    WP,
    'waypoint.unlabelled',
    `no ${LABEL.useWaypoint} on the object, nor (when it has none) on its namespace, other than ${WAYPOINT_NONE}`,
    'none',
  );
}

function explainWaypointLabel(trace: DecisionTrace, own: boolean, ref: { namespace: string; name: string }): void {
  trace.decide(
    WP,
    own ? 'waypoint.own-label' : 'waypoint.namespace-label',
    own
      ? `the object's own ${LABEL.useWaypoint} wins over its namespace's`
      : `without a label of its own, the object takes its namespace's ${LABEL.useWaypoint}`,
    `names ${ref.namespace}/${ref.name}`,
  );
}

function explainWaypointMissing(trace: DecisionTrace, ref: { namespace: string; name: string }): void {
  trace.decide(
    WP,
    'waypoint.missing',
    'a waypoint is a Gateway with status addresses; there is no fallback to the namespace',
    `none: Gateway ${ref.namespace}/${ref.name} is missing or has no status addresses`,
  );
}

function explainAttachment(trace: DecisionTrace, wp: Waypoint, namespace: string, allowed: boolean): void {
  trace.fact(`waypoint ${wp.namespace}/${wp.name} allowedRoutes.namespaces.from`, wp.allowedFrom);
  trace.decide(
    WP,
    allowed ? 'waypoint.attachment-allowed' : 'waypoint.attachment-denied',
    "the waypoint's listener allowedRoutes must admit the object's namespace",
    allowed ? `${namespace} may bind` : `none: ${namespace} may not bind ${wp.namespace}/${wp.name}`,
  );
}

function explainTrafficType(trace: DecisionTrace, wp: Waypoint, binds: boolean): void {
  trace.fact(`waypoint ${wp.namespace}/${wp.name} ${LABEL.waypointFor}`, wp.trafficType);
  trace.decide(
    WP,
    'waypoint.traffic-type',
    'a workload binds only a waypoint for workload or all traffic',
    binds ? 'binds' : `none: the waypoint is for ${wp.trafficType} traffic`,
  );
}

function explainInstance(trace: DecisionTrace, instanceOf: Waypoint): void {
  trace.decide(
    WP,
    'waypoint.instance',
    "a waypoint's own pod gets no waypoint, only the waypoint's inbound binding",
    instanceOf.inboundBinding ? 'application tunnel from the inbound binding' : 'none',
  );
}

function explainBound(trace: DecisionTrace, wp: Waypoint): void {
  trace.decide(
    WP,
    wp.address ? 'waypoint.bound' : 'waypoint.no-address',
    "ztunnel is sent the waypoint's status address; without one it is sent none",
    wp.address ? `${wp.namespace}/${wp.name}` : `none: ${wp.namespace}/${wp.name} has no usable status address`,
  );
}

/** A workload binds only a `workload` or `all` waypoint. */
export function workloadWaypoint(
  namespace: string,
  labels: Record<string, string> | undefined,
  view: WaypointLookup,
  trace?: DecisionTrace,
): Waypoint | undefined {
  const wp = waypointForTarget(namespace, labels, view, trace);
  const binds = wp !== undefined && (wp.trafficType === 'workload' || wp.trafficType === 'all');
  if (trace && wp) explainTrafficType(trace, wp, binds);
  return binds ? wp : undefined;
}

/** A service binds only a `service` or `all` waypoint; a waypoint's or east-west gateway's own Service binds none. */
export function serviceWaypoint(
  namespace: string,
  labels: Record<string, string> | undefined,
  view: WaypointLookup,
): Waypoint | undefined {
  const managed = labels?.[LABEL.managedGateway];
  if (managed === 'istio.io-mesh-controller' || managed === 'istio.io-eastwest-controller') return undefined;
  const wp = waypointForTarget(namespace, labels, view);
  return wp && (wp.trafficType === 'service' || wp.trafficType === 'all') ? wp : undefined;
}

/** The waypoint a pod (or entry) is an instance of: label gateway-name naming a waypoint of its namespace. */
export function waypointOfInstance(
  namespace: string,
  labels: Record<string, string> | undefined,
  view: WaypointLookup,
): Waypoint | undefined {
  const name = labels?.[LABEL.gatewayName];
  return name ? view.waypoint(namespace, name) : undefined;
}

/** istiod's computeWaypoint for workloads: an instance gets the inbound binding, others their bound waypoint. */
export function computeWorkloadWaypoint(
  namespace: string,
  labels: Record<string, string> | undefined,
  view: WaypointLookup,
  trace?: DecisionTrace,
): { waypoint?: GatewayAddress; applicationTunnel?: ApplicationTunnel } {
  const instanceOf = waypointOfInstance(namespace, labels, view);
  if (trace) trace.fact(`label ${LABEL.gatewayName}`, labels?.[LABEL.gatewayName] ?? null);
  if (instanceOf) {
    if (trace) explainInstance(trace, instanceOf);
    return instanceOf.inboundBinding ? { applicationTunnel: { ...instanceOf.inboundBinding } } : {};
  }
  const wp = workloadWaypoint(namespace, labels, view, trace);
  if (trace && wp) explainBound(trace, wp);
  return wp?.address ? { waypoint: wp.address } : {};
}

export interface CanaryBinding {
  waypoint: Waypoint;
  /** 0..MAX_CANARY_WEIGHT, the canary's share. */
  weight: number;
}

/**
 * istiod's ResolveUseWaypointCanary: the namespace is consulted only when the object has no
 * use-waypoint of its own; the canary label and the weight annotation are each read from the object,
 * else from the namespace. A weight that is not an integer in 0..100 disables the canary, as does a
 * canary equal to the primary, missing, denying attachment or not carrying service traffic.
 */
export function boundCanary(o: KubeObject, primary: Waypoint, view: WaypointLookup): CanaryBinding | undefined {
  const namespace = namespaceOf(o);
  const labels = o.metadata.labels;
  const nsMeta = waypointRefFromLabels(labels, namespace)
    ? undefined
    : view.get('Namespace', undefined, namespace)?.metadata;
  const has = (m: Record<string, string> | undefined, k: string) =>
    m !== undefined && Object.prototype.hasOwnProperty.call(m, k);
  const nsLabels = nsMeta?.labels;
  const canaryLabels =
    !has(labels, LABEL.useWaypointCanary) && has(nsLabels, LABEL.useWaypointCanary) ? nsLabels : labels;
  const ref = canaryRefFromLabels(canaryLabels, namespace);
  if (!ref) return undefined;
  if (ref.namespace === primary.namespace && ref.name === primary.name) return undefined;
  let weightText = o.metadata.annotations?.[ANNOTATION.useWaypointCanaryWeight];
  if (weightText === undefined && nsMeta) weightText = nsMeta.annotations?.[ANNOTATION.useWaypointCanaryWeight];
  // Go's strconv.Atoi: optional sign, decimal digits.
  const weight = weightText === undefined ? 0 : /^[+-]?\d+$/.test(weightText) ? Number(weightText) : NaN;
  if (!(weight >= 0 && weight <= MAX_CANARY_WEIGHT)) return undefined;
  const wp = view.waypoint(ref.namespace, ref.name);
  if (!wp || !attachmentAllowed(wp, namespace, view)) return undefined;
  if (wp.trafficType !== 'service' && wp.trafficType !== 'all') return undefined;
  return { waypoint: wp, weight: weight === 0 ? 0 : weight };
}
