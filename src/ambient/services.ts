// Services from Kubernetes Services and ServiceEntries (amb/services.go), and the resolution of
// one hostname claimed by several objects.

import type { KubeObject } from '../store/types';
import { ANNOTATION, LABEL, MANAGED_EASTWEST_CONTROLLER, MANAGED_MESH_CONTROLLER, MAX_CANARY_WEIGHT } from './constants';
import { maskCidr, parseCidr, parseIp } from './ip';
import {
  HealthPolicy,
  IPFamilies,
  LbMode,
  LbScope,
  LoadBalancing,
  NetworkAddress,
  Port,
  Service,
  Visibility,
  GatewayAddress,
  WeightedWaypoint,
  setIf,
} from './messages';
import { oldest } from './peer-authentication';
import { kubePortAppProtocol, serviceEntryAppProtocol } from './protocols';
import { KubeServicePort, ServiceEntryPort, numericTargetPort } from './service-ports';
import type { MeshView } from './view';
import { Waypoint, boundCanary, boundWaypoint } from './waypoints';
import { kubeServiceHostname } from './workloads';

const PREFER_CLOSE: LoadBalancing = { routingPreference: [LbScope.NETWORK, LbScope.REGION, LbScope.ZONE], mode: LbMode.FAILOVER };
const PREFER_NODE: LoadBalancing = {
  routingPreference: [LbScope.NETWORK, LbScope.REGION, LbScope.ZONE, LbScope.SUBZONE, LbScope.NODE],
  mode: LbMode.FAILOVER,
};

/** Traffic distribution presets; an unknown value means none. */
function distributionPreset(value: string | undefined): LoadBalancing | undefined {
  switch (value?.toLowerCase()) {
    case 'preferclose':
    case 'prefersamezone':
      return { ...PREFER_CLOSE, routingPreference: [...PREFER_CLOSE.routingPreference!] };
    case 'prefersamenode':
      return { ...PREFER_NODE, routingPreference: [...PREFER_NODE.routingPreference!] };
    default:
      return undefined;
  }
}

function firstPresent(...values: (string | undefined)[]): string | undefined {
  return values.find((v) => v !== undefined && v !== '');
}

export function kubeLoadBalancing(svc: KubeObject, namespace: KubeObject | undefined): LoadBalancing | undefined {
  let lb: LoadBalancing | undefined;
  if (svc.spec?.internalTrafficPolicy === 'Local') lb = { routingPreference: [LbScope.NODE], mode: LbMode.STRICT };
  else {
    lb = distributionPreset(
      firstPresent(svc.spec?.trafficDistribution, svc.metadata.annotations?.[ANNOTATION.trafficDistribution], namespace?.metadata.annotations?.[ANNOTATION.trafficDistribution]),
    );
  }
  if (svc.spec?.publishNotReadyAddresses === true) lb = { ...(lb ?? {}), healthPolicy: HealthPolicy.ALLOW_ALL };
  return lb;
}

function ipFamilies(families: string[] | undefined): IPFamilies {
  if (!families || families.length === 0) return IPFamilies.AUTOMATIC;
  if (families.length >= 2) return IPFamilies.DUAL;
  return families[0] === 'IPv6' ? IPFamilies.IPV6_ONLY : IPFamilies.IPV4_ONLY;
}

/** Go's strconv.ParseBool. */
function parseBool(v: string | undefined): boolean {
  return v !== undefined && ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v);
}

function networkAddress(network: string, address: Uint8Array, length?: number): NetworkAddress {
  const a: NetworkAddress = { address };
  setIf(a, 'network', network);
  if (length !== undefined) a.length = length;
  return a;
}

const skipsWaypoint = (o: KubeObject) => {
  const managed = o.metadata.labels?.[LABEL.managedGateway];
  return managed === MANAGED_MESH_CONTROLLER || managed === MANAGED_EASTWEST_CONTROLLER;
};

/** With a primary waypoint and a canary: [{primary, 100 - w}, {canary, w}]. */
function weightedWaypoints(primary: Waypoint | undefined, o: KubeObject, view: MeshView): WeightedWaypoint[] | undefined {
  if (!primary) return undefined;
  const canary = boundCanary(o.metadata.namespace!, o.metadata.labels, o.metadata.annotations, view);
  if (!canary) return undefined;
  const entry = (destination: GatewayAddress, weight: number): WeightedWaypoint => {
    const w: WeightedWaypoint = { destination };
    setIf(w, 'weight', weight);
    return w;
  };
  return [entry(primary.address, MAX_CANARY_WEIGHT - canary.weight), entry(canary.waypoint.address, canary.weight)];
}

/** ExternalName Services are not sent; headless ones are, with no addresses. */
export function kubeService(svc: KubeObject, view: MeshView): Service | undefined {
  if (svc.spec?.type === 'ExternalName') return undefined;
  const ns = svc.metadata.namespace!;
  const s = view.settings;
  const namespace = view.get('Namespace', undefined, ns);
  const out: Service = { hostname: kubeServiceHostname(svc.metadata.name, ns, s.domain) };
  setIf(out, 'name', svc.metadata.name);
  setIf(out, 'namespace', ns);
  const ips: string[] = svc.spec?.clusterIPs?.length ? svc.spec.clusterIPs : svc.spec?.clusterIP ? [svc.spec.clusterIP] : [];
  const addresses: NetworkAddress[] = [];
  for (const text of ips) {
    const ip = text && text !== 'None' ? parseIp(text) : undefined;
    if (ip) addresses.push(networkAddress(s.network, ip));
  }
  setIf(out, 'addresses', addresses);
  const ports: Port[] = ((svc.spec?.ports ?? []) as KubeServicePort[]).map((p) => {
    const port: Port = {};
    setIf(port, 'servicePort', p.port);
    setIf(port, 'targetPort', numericTargetPort(p));
    setIf(port, 'appProtocol', kubePortAppProtocol(p));
    return port;
  });
  setIf(out, 'ports', ports);
  const wp = skipsWaypoint(svc) ? undefined : boundWaypoint(ns, svc.metadata.labels, 'service', view);
  setIf(out, 'waypoint', wp?.address);
  setIf(out, 'loadBalancing', kubeLoadBalancing(svc, namespace));
  setIf(out, 'ipFamilies', ipFamilies(svc.spec?.ipFamilies));
  out.canonical = true;
  setIf(out, 'weightedWaypoints', weightedWaypoints(wp, svc, view));
  if (wp) {
    const ingress = svc.metadata.labels?.[LABEL.ingressUseWaypoint] ?? namespace?.metadata.labels?.[LABEL.ingressUseWaypoint];
    setIf(out, 'ingressUseWaypoint', parseBool(ingress));
  }
  return out;
}

/** exportTo ["."] keeps a ServiceEntry in its namespace. */
export function serviceEntryVisibility(se: KubeObject): Visibility {
  const exportTo: string[] | undefined = se.spec?.exportTo;
  return exportTo && exportTo.length > 0 && exportTo.every((e) => e === '.' || e === se.metadata.namespace) ? Visibility.NAMESPACE : Visibility.PUBLIC;
}

function serviceEntryAddresses(se: KubeObject, host: string, network: string): NetworkAddress[] {
  const out: NetworkAddress[] = [];
  for (const text of (se.spec?.addresses ?? []) as string[]) {
    const cidr = parseCidr(text);
    if (!cidr) continue;
    const masked = maskCidr(cidr);
    const isHost = masked.length === masked.address.length * 8;
    out.push(networkAddress(network, masked.address, isHost ? undefined : masked.length));
  }
  const resolution = se.spec?.resolution ?? 'NONE';
  if (out.length === 0 && resolution !== 'NONE' && (!host.startsWith('*') || resolution === 'DYNAMIC_DNS')) {
    for (const a of (se.status?.addresses ?? []) as { value?: string; host?: string }[]) {
      const ip = a.host === host ? parseIp(a.value) : undefined;
      if (ip) out.push(networkAddress(network, ip));
    }
  }
  return out;
}

export function serviceEntryLoadBalancing(se: KubeObject, namespace: KubeObject | undefined): LoadBalancing | undefined {
  if ((se.spec?.resolution ?? 'NONE') === 'NONE') return { mode: LbMode.PASSTHROUGH, healthPolicy: HealthPolicy.ALLOW_ALL };
  return distributionPreset(firstPresent(se.metadata.annotations?.[ANNOTATION.trafficDistribution], namespace?.metadata.annotations?.[ANNOTATION.trafficDistribution]));
}

/** The Service of one ServiceEntry host (canonical is decided by the hostname's group). */
export function serviceEntryService(se: KubeObject, host: string, view: MeshView): Service {
  const ns = se.metadata.namespace!;
  const namespace = view.get('Namespace', undefined, ns);
  const out: Service = { hostname: host };
  setIf(out, 'name', se.metadata.name);
  setIf(out, 'namespace', ns);
  setIf(out, 'addresses', serviceEntryAddresses(se, host, view.settings.network));
  const ports: Port[] = ((se.spec?.ports ?? []) as ServiceEntryPort[]).map((p) => {
    const port: Port = {};
    setIf(port, 'servicePort', p.number);
    setIf(port, 'targetPort', p.targetPort || p.number);
    setIf(port, 'appProtocol', serviceEntryAppProtocol(p.protocol));
    return port;
  });
  setIf(out, 'ports', ports);
  setIf(out, 'subjectAltNames', se.spec?.subjectAltNames);
  const visibility = serviceEntryVisibility(se);
  let wp = skipsWaypoint(se) ? undefined : boundWaypoint(ns, se.metadata.labels, 'service', view);
  // A namespace-private ServiceEntry may not use another namespace's waypoint.
  if (wp && visibility === Visibility.NAMESPACE && wp.namespace !== ns) wp = undefined;
  setIf(out, 'waypoint', wp?.address);
  setIf(out, 'weightedWaypoints', weightedWaypoints(wp, se, view));
  setIf(out, 'loadBalancing', serviceEntryLoadBalancing(se, namespace));
  setIf(out, 'visibility', visibility);
  return out;
}

/** `<name>.<ns>.svc.<domain>` back to the Kubernetes Service it names, if it is one. */
export function kubeServiceOfHostname(hostname: string, domain: string): { namespace: string; name: string } | undefined {
  const suffix = `.svc.${domain}`;
  if (!hostname.endsWith(suffix)) return undefined;
  const parts = hostname.slice(0, -suffix.length).split('.');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { name: parts[0], namespace: parts[1] };
}

/**
 * Every Service resource claiming `hostname`, keyed `<ns>/<hostname>`. Per namespace a Kubernetes
 * Service beats ServiceEntries, else the oldest ServiceEntry wins; canonical goes to the Kubernetes
 * Service, else to the oldest winner that is not namespace-private.
 */
export function servicesOfHostname(hostname: string, view: MeshView): Map<string, Service> {
  const winners = new Map<string, { service: Service; source: KubeObject; kube: boolean }>();
  const ref = kubeServiceOfHostname(hostname, view.settings.domain);
  const kubeSvc = ref ? view.get('Service', ref.namespace, ref.name) : undefined;
  const kube = kubeSvc ? kubeService(kubeSvc, view) : undefined;
  if (kube && kubeSvc) winners.set(kubeSvc.metadata.namespace!, { service: kube, source: kubeSvc, kube: true });
  const byNamespace = new Map<string, KubeObject[]>();
  for (const se of view.serviceEntriesWithHost(hostname)) {
    const ns = se.metadata.namespace!;
    if (winners.has(ns)) continue;
    byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), se]);
  }
  for (const [ns, entries] of byNamespace) {
    const se = oldest(entries)!;
    winners.set(ns, { service: serviceEntryService(se, hostname, view), source: se, kube: false });
  }
  if (!kube) {
    const eligible = [...winners.values()].filter((w) => w.service.visibility !== Visibility.NAMESPACE);
    const first = oldest(eligible.map((w) => w.source));
    for (const w of winners.values()) if (w.source === first) w.service.canonical = true;
  }
  const out = new Map<string, Service>();
  for (const ns of [...winners.keys()].sort()) out.set(`${ns}/${hostname}`, winners.get(ns)!.service);
  return out;
}
