// Services from Kubernetes Services and ServiceEntries (amb/services.go), and the resolution of
// one hostname claimed by several objects (selectWorkloadServices).

import { parseGoBool } from '../config/bool';
import type { KubeObject } from '../store/types';
import { ANNOTATION, LABEL } from './constants';
import { maskCidr, parseCidr, parseIp } from './ip';
import {
  GatewayAddress,
  HealthPolicy,
  IPFamilies,
  LbMode,
  LbScope,
  LoadBalancing,
  NetworkAddress,
  Port,
  Service,
  Visibility,
  WeightedWaypoint,
  setIf,
} from './messages';
import { oldest } from './peer-authentication';
import { kubePortAppProtocol, serviceEntryAppProtocol } from './protocols';
import { numericTargetPort } from './service-ports';
import { namespaceOf, serviceEntrySpec, serviceEntryStatus, serviceSpec } from './specs';
import type { MeshView } from './view';
import { type SeVisibility, visibilityFor } from './visibility';
import { featureOn } from './settings';
import { Waypoint, boundCanary, serviceWaypoint } from './waypoints';

type Distribution = 'any' | 'zone' | 'node';

/** A Kubernetes Service's cluster hostname: <name>.<namespace>.svc.<domain>. */
export function kubeServiceHostname(name: string, namespace: string, domain: string): string {
  return `${name}.${namespace}.svc.${domain}`;
}

const preset = (d: Distribution): LoadBalancing | undefined =>
  d === 'zone'
    ? { routingPreference: [LbScope.NETWORK, LbScope.REGION, LbScope.ZONE], mode: LbMode.FAILOVER }
    : d === 'node'
      ? {
          routingPreference: [LbScope.NETWORK, LbScope.REGION, LbScope.ZONE, LbScope.SUBZONE, LbScope.NODE],
          mode: LbMode.FAILOVER,
        }
      : undefined;

function annotationDistribution(value: string | undefined): Distribution | undefined {
  if (!value) return undefined;
  switch (value.toLowerCase()) {
    case 'preferclose':
    case 'prefersamezone':
      return 'zone';
    case 'prefersamenode':
      return 'node';
    default:
      return 'any';
  }
}

/**
 * istiod's GetTrafficDistribution: spec.trafficDistribution when it is a known value (exact case),
 * else a non-empty Service annotation (case-insensitive; unknown means none), else the Namespace's.
 */
export function trafficDistribution(
  spec: string | undefined,
  annotations: Record<string, string> | undefined,
  nsAnnotations: Record<string, string> | undefined,
): Distribution {
  if (spec === 'PreferSameZone' || spec === 'PreferClose') return 'zone';
  if (spec === 'PreferSameNode') return 'node';
  return (
    annotationDistribution(annotations?.[ANNOTATION.trafficDistribution]) ??
    annotationDistribution(nsAnnotations?.[ANNOTATION.trafficDistribution]) ??
    'any'
  );
}

export function kubeLoadBalancing(svc: KubeObject, namespace: KubeObject | undefined): LoadBalancing | undefined {
  const spec = serviceSpec(svc);
  let lb: LoadBalancing | undefined =
    spec.internalTrafficPolicy === 'Local'
      ? { routingPreference: [LbScope.NODE], mode: LbMode.STRICT }
      : preset(
          trafficDistribution(spec.trafficDistribution, svc.metadata.annotations, namespace?.metadata.annotations),
        );
  if (spec.publishNotReadyAddresses === true) lb = { ...(lb ?? {}), healthPolicy: HealthPolicy.ALLOW_ALL };
  return lb;
}

function ipFamilies(families: string[] | undefined): IPFamilies {
  if (!families || families.length === 0 || families.length > 2) return IPFamilies.AUTOMATIC;
  if (families.length === 2) return IPFamilies.DUAL;
  return families[0] === 'IPv4' ? IPFamilies.IPV4_ONLY : IPFamilies.IPV6_ONLY;
}

/** True only for Go's true spellings; absent or unparsable is false. */
const parseBool = (v: string | undefined): boolean => v !== undefined && parseGoBool(v) === true;

/** ingress-use-waypoint from the object's labels, else its namespace's. */
function ingressUseWaypoint(o: KubeObject, namespace: KubeObject | undefined): boolean {
  const own = o.metadata.labels;
  if (own && Object.prototype.hasOwnProperty.call(own, LABEL.ingressUseWaypoint))
    return parseBool(own[LABEL.ingressUseWaypoint]);
  return parseBool(namespace?.metadata.labels?.[LABEL.ingressUseWaypoint]);
}

function networkAddress(network: string, address: Uint8Array, length?: number): NetworkAddress {
  const a: NetworkAddress = { address };
  setIf(a, 'network', network);
  if (length !== undefined) a.length = length;
  return a;
}

/** With a primary waypoint and a valid canary: [{primary, 100 - w}, {canary, w}]. */
function weightedWaypoints(
  primary: Waypoint | undefined,
  o: KubeObject,
  view: MeshView,
): WeightedWaypoint[] | undefined {
  if (!primary) return undefined;
  const canary = boundCanary(o, primary, view);
  if (!canary) return undefined;
  const entry = (destination: GatewayAddress | undefined, weight: number): WeightedWaypoint => {
    const w = { destination: destination ?? {} } as WeightedWaypoint;
    setIf(w, 'weight', weight);
    return w;
  };
  return [entry(primary.address, 100 - canary.weight), entry(canary.waypoint.address, canary.weight)];
}

/** A Service's cluster IPs (clusterIPs, else clusterIP), without "" and None (headless). */
export function serviceClusterIps(svc: KubeObject): string[] {
  const { clusterIPs, clusterIP } = serviceSpec(svc);
  const ips = clusterIPs?.length ? clusterIPs : [clusterIP ?? ''];
  return ips.filter((ip) => ip !== '' && ip !== 'None');
}

/** ExternalName Services are not sent, nor Services with an unparsable cluster IP; headless ones are, with no addresses. */
export function kubeService(svc: KubeObject, view: MeshView): Service | undefined {
  const spec = serviceSpec(svc);
  if (spec.type === 'ExternalName') return undefined;
  const ns = namespaceOf(svc);
  const s = view.settings;
  const addresses: NetworkAddress[] = [];
  for (const text of serviceClusterIps(svc)) {
    const ip = parseIp(text);
    if (!ip) return undefined;
    addresses.push(networkAddress(s.network, ip));
  }
  const namespace = view.get('Namespace', undefined, ns);
  const out: Service = { hostname: kubeServiceHostname(svc.metadata.name, ns, s.domain) };
  setIf(out, 'name', svc.metadata.name);
  setIf(out, 'namespace', ns);
  setIf(out, 'addresses', addresses);
  const ports: Port[] = (spec.ports ?? []).map((p) => {
    const port: Port = {};
    setIf(port, 'servicePort', p.port);
    setIf(port, 'targetPort', numericTargetPort(p));
    setIf(port, 'appProtocol', kubePortAppProtocol(p));
    return port;
  });
  setIf(out, 'ports', ports);
  const wp = serviceWaypoint(ns, svc.metadata.labels, view);
  setIf(out, 'waypoint', wp?.address);
  setIf(out, 'loadBalancing', kubeLoadBalancing(svc, namespace));
  setIf(out, 'ipFamilies', ipFamilies(spec.ipFamilies));
  // A Kubernetes Service is always canonical for its hostname.
  out.canonical = true;
  if (wp) setIf(out, 'ingressUseWaypoint', ingressUseWaypoint(svc, namespace));
  setIf(out, 'weightedWaypoints', weightedWaypoints(wp, svc, view));
  return out;
}

/**
 * Addresses of one host: the spec's (IP or masked CIDR), else auto-allocated ones from status,
 * unless `useAllocated` is off (PILOT_ENABLE_IP_AUTOALLOCATE=false: istiod then neither assigns
 * nor uses them, so addresses left in status by an earlier allocation are ignored too).
 */
function serviceEntryAddresses(
  se: KubeObject,
  host: string,
  network: string,
  useAllocated: boolean,
): NetworkAddress[] | undefined {
  const out: NetworkAddress[] = [];
  const spec = serviceEntrySpec(se);
  for (const text of spec.addresses ?? []) {
    const cidr = parseCidr(text);
    if (!cidr) return undefined;
    const masked = maskCidr(cidr);
    const isHost = masked.length === masked.address.length * 8;
    out.push(networkAddress(network, masked.address, isHost ? undefined : masked.length));
  }
  const resolution = spec.resolution ?? 'NONE';
  const optedOut = (se.metadata.labels?.[LABEL.enableAutoallocateIp] ?? '').toLowerCase() === 'false';
  if (
    out.length === 0 &&
    useAllocated &&
    resolution !== 'NONE' &&
    !optedOut &&
    (!host.startsWith('*') || resolution === 'DYNAMIC_DNS')
  ) {
    for (const a of serviceEntryStatus(se).addresses ?? []) {
      const ip = a.host === host ? parseIp(a.value) : undefined;
      if (ip) out.push(networkAddress(network, ip));
    }
  }
  return out;
}

export function serviceEntryLoadBalancing(
  se: KubeObject,
  namespace: KubeObject | undefined,
): LoadBalancing | undefined {
  if ((serviceEntrySpec(se).resolution ?? 'NONE') === 'NONE')
    return { mode: LbMode.PASSTHROUGH, healthPolicy: HealthPolicy.ALLOW_ALL };
  return preset(trafficDistribution(undefined, se.metadata.annotations, namespace?.metadata.annotations));
}

/**
 * The Service of one ServiceEntry host before hostname resolution (canonical is decided there).
 * None when meshConfig.serviceEntryVisibility hides the entry or an address does not parse.
 */
export function serviceEntryService(se: KubeObject, host: string, view: MeshView): Service | undefined {
  const ns = namespaceOf(se);
  const namespace = view.get('Namespace', undefined, ns);
  const visibility = visibilityFor(view.settings.serviceEntryVisibility, namespace?.metadata.labels);
  if (visibility === 'NONE') return undefined;
  const addresses = serviceEntryAddresses(se, host, view.settings.network, featureOn(view.settings, 'ipAutoallocate'));
  if (!addresses) return undefined;
  const out: Service = { hostname: host };
  setIf(out, 'name', se.metadata.name);
  setIf(out, 'namespace', ns);
  setIf(out, 'addresses', addresses);
  const spec = serviceEntrySpec(se);
  const ports: Port[] = (spec.ports ?? []).map((p) => {
    const port: Port = {};
    setIf(port, 'servicePort', p.number);
    setIf(port, 'targetPort', p.targetPort || p.number);
    setIf(port, 'appProtocol', serviceEntryAppProtocol(p.protocol));
    return port;
  });
  setIf(out, 'ports', ports);
  setIf(out, 'subjectAltNames', spec.subjectAltNames);
  const wp = serviceEntryWaypoint(se, visibility, view);
  setIf(out, 'waypoint', wp?.address);
  setIf(out, 'loadBalancing', serviceEntryLoadBalancing(se, namespace));
  if (wp) setIf(out, 'ingressUseWaypoint', ingressUseWaypoint(se, namespace));
  setIf(out, 'weightedWaypoints', weightedWaypoints(wp, se, view));
  setIf(out, 'visibility', visibility === 'NAMESPACE' ? Visibility.NAMESPACE : Visibility.PUBLIC);
  return out;
}

/** The waypoint a ServiceEntry's hosts bind; a namespace-private entry binds none of another namespace. */
export function serviceEntryWaypoint(se: KubeObject, visibility: SeVisibility, view: MeshView): Waypoint | undefined {
  const ns = namespaceOf(se);
  const wp = serviceWaypoint(ns, se.metadata.labels, view);
  return wp && visibility === 'NAMESPACE' && wp.namespace !== ns ? undefined : wp;
}

/** The same, reading the entry's visibility from its namespace. */
export function serviceEntryBoundWaypoint(se: KubeObject, view: MeshView): Waypoint | undefined {
  const namespace = view.get('Namespace', undefined, namespaceOf(se));
  return serviceEntryWaypoint(
    se,
    visibilityFor(view.settings.serviceEntryVisibility, namespace?.metadata.labels),
    view,
  );
}

/** `<name>.<ns>.svc.<domain>` back to the Kubernetes Service it names, if it is one. */
export function kubeServiceOfHostname(
  hostname: string,
  domain: string,
): { namespace: string; name: string } | undefined {
  const suffix = `.svc.${domain}`;
  if (!hostname.endsWith(suffix)) return undefined;
  const parts = hostname.slice(0, -suffix.length).split('.');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { name: parts[0], namespace: parts[1] };
}

export interface HostnameWinner {
  service: Service;
  /** The Kubernetes Service or ServiceEntry it came from. */
  source: KubeObject;
  kube: boolean;
}

/**
 * One winner per namespace among the objects claiming `hostname`: a Kubernetes Service always,
 * else the oldest ServiceEntry. Canonical goes to the Kubernetes Service, else to the oldest
 * winner that is not namespace-private. Keyed `<ns>/<hostname>`, sorted.
 */
export function hostnameWinners(hostname: string, view: MeshView): Map<string, HostnameWinner> {
  const winners = new Map<string, HostnameWinner>();
  const ref = kubeServiceOfHostname(hostname, view.settings.domain);
  const kubeSvc = ref ? view.get('Service', ref.namespace, ref.name) : undefined;
  const kube = kubeSvc ? kubeService(kubeSvc, view) : undefined;
  if (kube && kubeSvc) winners.set(namespaceOf(kubeSvc), { service: kube, source: kubeSvc, kube: true });
  const byNamespace = new Map<string, { se: KubeObject; service: Service }[]>();
  for (const se of view.serviceEntriesWithHost(hostname)) {
    const ns = namespaceOf(se);
    if (winners.has(ns)) continue;
    const service = serviceEntryService(se, hostname, view);
    if (!service) continue;
    byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), { se, service }]);
  }
  for (const [ns, entries] of byNamespace) {
    const first = oldest(entries.map((e) => e.se));
    const winner = entries.find((e) => e.se === first);
    if (winner) winners.set(ns, { service: winner.service, source: winner.se, kube: false });
  }
  if (!kube) {
    const eligible = [...winners.values()].filter((w) => w.service.visibility !== Visibility.NAMESPACE);
    const first = oldest(eligible.map((w) => w.source));
    for (const w of winners.values()) if (w.source === first) w.service.canonical = true;
  }
  const out = new Map<string, HostnameWinner>();
  // Namespaces in code-unit order, as sort() orders strings.
  const byName = [...winners].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [ns, winner] of byName) out.set(`${ns}/${hostname}`, winner);
  return out;
}

export function servicesOfHostname(hostname: string, view: MeshView): Map<string, Service> {
  return new Map([...hostnameWinners(hostname, view)].map(([k, w]) => [k, w.service]));
}

/** The hosts a ServiceEntry won in its namespace: only these reach ztunnel and its workloads. */
export function serviceEntryWinningHosts(se: KubeObject, view: MeshView): string[] {
  const ns = namespaceOf(se);
  return [...new Set(serviceEntrySpec(se).hosts ?? [])].filter(
    (h) => hostnameWinners(h, view).get(`${ns}/${h}`)?.source === se,
  );
}
