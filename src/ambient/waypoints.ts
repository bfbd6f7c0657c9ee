// Waypoints: Gateways with status addresses, and which waypoint an object (pod, service, entry)
// is bound to through istio.io/use-waypoint on itself or on its namespace.

import type { LabelSelector } from '../mesh/types';
import { matchesSelector } from '../store/selector';
import type { KubeObject } from '../store/types';
import {
  ANNOTATION,
  DEFAULT_TRAFFIC_TYPE,
  HBONE_PORT,
  LABEL,
  MAX_CANARY_WEIGHT,
  TRAFFIC_TYPES,
  TrafficType,
  WAYPOINT_NONE,
} from './constants';
import { parseIp } from './ip';
import { AppTunnelProtocol, ApplicationTunnel, GatewayAddress } from './messages';

export interface Waypoint {
  namespace: string;
  name: string;
  trafficType: TrafficType;
  address: GatewayAddress;
  /** allowedRoutes.namespaces of the HBONE listener: who may bind. */
  allowedFrom: 'Same' | 'All' | 'Selector';
  allowedSelector?: LabelSelector;
  /** Set on the waypoint's own pods when the inbound-binding annotation asks for it. */
  inboundBinding?: ApplicationTunnel;
}

interface GatewayListener {
  protocol?: string;
  port?: number;
  allowedRoutes?: { namespaces?: { from?: string; selector?: LabelSelector } };
}

function trafficTypeOf(value: string | undefined): TrafficType | undefined {
  return TRAFFIC_TYPES.find((t) => t === value);
}

/** `NONE`, `PROXY` or `<protocol>/<port>`; anything else is ignored. */
export function parseInboundBinding(value: string | undefined): ApplicationTunnel | undefined {
  if (value === undefined) return undefined;
  const [proto, portText, ...rest] = value.split('/');
  if (rest.length > 0) return undefined;
  const protocol = proto === 'NONE' ? AppTunnelProtocol.NONE : proto === 'PROXY' ? AppTunnelProtocol.PROXY : undefined;
  if (protocol === undefined) return undefined;
  const out: ApplicationTunnel = {};
  if (protocol) out.protocol = protocol;
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) return undefined;
    if (Number(portText)) out.port = Number(portText);
  }
  return out;
}

/** Hostname status address first (istiod's waypoints publish one), else the first IP. */
function gatewayAddress(gateway: KubeObject, network: string): GatewayAddress | undefined {
  const addresses: { type?: string; value?: string }[] = gateway.status?.addresses ?? [];
  const host = addresses.find((a) => a.type === 'Hostname' && a.value);
  if (host) return { hostname: { namespace: gateway.metadata.namespace!, hostname: host.value! }, hboneMtlsPort: HBONE_PORT };
  for (const a of addresses) {
    if (a.type !== undefined && a.type !== 'IPAddress') continue;
    const ip = parseIp(a.value);
    if (!ip) continue;
    const address = network ? { network, address: ip } : { address: ip };
    return { address, hboneMtlsPort: HBONE_PORT };
  }
  return undefined;
}

export function waypointFromGateway(gateway: KubeObject, gatewayClass: KubeObject | undefined, network: string): Waypoint | undefined {
  const address = gatewayAddress(gateway, network);
  if (!address) return undefined;
  const trafficType =
    trafficTypeOf(gateway.metadata.labels?.[LABEL.waypointFor]) ??
    trafficTypeOf(gatewayClass?.metadata.labels?.[LABEL.waypointFor]) ??
    DEFAULT_TRAFFIC_TYPE;
  const listeners: GatewayListener[] = gateway.spec?.listeners ?? [];
  const hbone = listeners.find((l) => l.protocol === 'HBONE' && l.port === HBONE_PORT);
  const from = hbone?.allowedRoutes?.namespaces?.from;
  const allowedFrom = from === 'All' || from === 'Selector' ? from : 'Same';
  const binding =
    gateway.metadata.annotations?.[ANNOTATION.waypointInboundBinding] ??
    gatewayClass?.metadata.annotations?.[ANNOTATION.waypointInboundBinding];
  const wp: Waypoint = {
    namespace: gateway.metadata.namespace!,
    name: gateway.metadata.name,
    trafficType,
    address,
    allowedFrom,
  };
  if (allowedFrom === 'Selector') wp.allowedSelector = hbone?.allowedRoutes?.namespaces?.selector ?? {};
  const inbound = parseInboundBinding(binding);
  if (inbound) wp.inboundBinding = inbound;
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

/** The waypoint an object's own labels name; `null` for the explicit `none` opt-out. */
export function waypointRefFromLabels(labels: Record<string, string> | undefined, defaultNamespace: string): WaypointRef | null | undefined {
  const name = labels?.[LABEL.useWaypoint];
  if (name === undefined || name === '') return undefined;
  if (name === WAYPOINT_NONE) return null;
  return { namespace: labels?.[LABEL.useWaypointNamespace] || defaultNamespace, name };
}

/** The canary waypoint an object's own labels name (istio.io/use-waypoint-canary). */
export function canaryRefFromLabels(labels: Record<string, string> | undefined, defaultNamespace: string): WaypointRef | undefined {
  const name = labels?.[LABEL.useWaypointCanary];
  if (!name || name === WAYPOINT_NONE) return undefined;
  return { namespace: labels?.[LABEL.useWaypointCanaryNamespace] || defaultNamespace, name };
}

function attachmentAllowed(wp: Waypoint, fromNamespace: string, view: WaypointLookup): boolean {
  if (wp.allowedFrom === 'All') return true;
  if (wp.allowedFrom === 'Same') return wp.namespace === fromNamespace;
  const ns = view.get('Namespace', undefined, fromNamespace);
  return ns !== undefined && matchesSelector(ns.metadata.labels, wp.allowedSelector ?? {});
}

/**
 * The waypoint bound to an object in `namespace` with `labels`: its own use-waypoint label, else its
 * namespace's. A missing waypoint, a denied attachment or the wrong traffic type gives none.
 */
export function boundWaypoint(
  namespace: string,
  labels: Record<string, string> | undefined,
  traffic: 'service' | 'workload',
  view: WaypointLookup,
): Waypoint | undefined {
  let ref = waypointRefFromLabels(labels, namespace);
  if (ref === undefined) ref = waypointRefFromLabels(view.get('Namespace', undefined, namespace)?.metadata.labels, namespace);
  if (!ref) return undefined;
  const wp = view.waypoint(ref.namespace, ref.name);
  if (!wp || !attachmentAllowed(wp, namespace, view)) return undefined;
  if (wp.trafficType !== traffic && wp.trafficType !== 'all') return undefined;
  return wp;
}

export interface CanaryBinding {
  waypoint: Waypoint;
  /** 0..MAX_CANARY_WEIGHT, the canary's share. */
  weight: number;
}

/**
 * The canary waypoint of a service: labels on the service, else on its namespace, with the weight
 * annotation of the same object (default 0). It must be a service waypoint that may be attached.
 */
export function boundCanary(
  namespace: string,
  labels: Record<string, string> | undefined,
  annotations: Record<string, string> | undefined,
  view: WaypointLookup,
): CanaryBinding | undefined {
  let ref = canaryRefFromLabels(labels, namespace);
  let weightText = annotations?.[ANNOTATION.useWaypointCanaryWeight];
  if (!ref) {
    const ns = view.get('Namespace', undefined, namespace);
    ref = canaryRefFromLabels(ns?.metadata.labels, namespace);
    weightText = ns?.metadata.annotations?.[ANNOTATION.useWaypointCanaryWeight];
  }
  if (!ref) return undefined;
  const weight = weightText === undefined ? 0 : /^\d{1,3}$/.test(weightText) ? Number(weightText) : -1;
  if (weight < 0 || weight > MAX_CANARY_WEIGHT) return undefined;
  const wp = view.waypoint(ref.namespace, ref.name);
  if (!wp || !attachmentAllowed(wp, namespace, view)) return undefined;
  if (wp.trafficType !== 'service' && wp.trafficType !== 'all') return undefined;
  return { waypoint: wp, weight };
}

/** The waypoint a pod is an instance of (label gateway-name naming a waypoint of its namespace). */
export function waypointOfInstance(namespace: string, labels: Record<string, string> | undefined, view: WaypointLookup): Waypoint | undefined {
  const name = labels?.[LABEL.gatewayName];
  return name ? view.waypoint(namespace, name) : undefined;
}
