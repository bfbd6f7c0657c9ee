// Workloads without a Pod: ServiceEntry inline endpoints and EndpointSlice endpoints that do not
// point at a Pod (amb/workloads.go serviceEntryWorkloadBuilder, endpointSlicesBuilder).

import type { KubeObject } from '../store/types';
import { LABEL } from './constants';
import { parseIp } from './ip';
import { NetworkMode, Port, PortList, Workload, WorkloadStatus, WorkloadType, setIf } from './messages';
import { servicePortsForEntry } from './service-ports';
import { featureOn, workloadTrustDomain } from './settings';
import { WorkloadEntrySpec, namespaceOf, serviceEntrySpec, serviceSpec, sliceEndpoints, slicePorts } from './specs';
import type { MeshView } from './view';
import { kubeServiceHostname, serviceEntryBoundWaypoint, serviceEntryWinningHosts } from './services';
import { computeWorkloadWaypoint } from './waypoints';
import { canonicalService, localityOfText, tunnelOf } from './workload-meta';
import { isServedKubeService, workloadImplicitPolicies, workloadPolicies } from './workloads';

/** Resolutions whose hosts are endpoints themselves when no endpoints are listed. */
const DNS_RESOLUTIONS = new Set(['DNS', 'DNS_ROUND_ROBIN', 'DYNAMIC_DNS']);

export function serviceEntryWorkloadUid(clusterId: string, namespace: string, name: string, address: string): string {
  return `${clusterId}/networking.istio.io/ServiceEntry/${namespace}/${name}/${address}`;
}

/**
 * One workload per endpoint (or per host for a DNS entry without endpoints), listing only the hosts
 * this entry won in its namespace; an entry that won none has no workloads.
 */
export function serviceEntryWorkloads(se: KubeObject, view: MeshView): Workload[] {
  const s = view.settings;
  const spec = serviceEntrySpec(se);
  const ns = namespaceOf(se);
  let endpoints: WorkloadEntrySpec[] = spec.endpoints ?? [];
  const implicit = endpoints.length === 0 && DNS_RESOLUTIONS.has(spec.resolution ?? '') && !spec.workloadSelector;
  if (endpoints.length === 0 && !implicit) return [];
  const hosts = serviceEntryWinningHosts(se, view);
  if (hosts.length === 0) return [];
  if (implicit) endpoints = hosts.map((h) => ({ address: h }));
  const out: Workload[] = [];
  const seen = new Set<string>();
  const policies = workloadPolicies(view, ns, se.metadata.labels);
  // PILOT_AUTO_ALLOW_WAYPOINT_POLICY: every host of the entry binds the entry's waypoint.
  const entryWaypoint = featureOn(s, 'autoAllowWaypointPolicy') ? serviceEntryBoundWaypoint(se, view) : undefined;
  const serviceWaypoints = entryWaypoint ? [entryWaypoint] : [];
  // Quirk kept from istiod: the network variable is reassigned by an endpoint with a network and
  // not reset, so later endpoints without one inherit it.
  let network = s.network;
  endpoints.forEach((ep, i) => {
    const address = ep.address ?? '';
    const uid = serviceEntryWorkloadUid(s.clusterId, ns, se.metadata.name, address);
    if (ep.network) network = ep.network;
    if (seen.has(uid)) return;
    seen.add(uid);
    const w: Workload = { uid };
    setIf(w, 'name', se.metadata.name);
    setIf(w, 'namespace', ns);
    const ip = parseIp(address);
    if (ip) w.addresses = [ip];
    else setIf(w, 'hostname', address);
    setIf(w, 'network', network);
    setIf(w, 'networkGateway', view.networkGateway(network));
    const tunnel = tunnelOf(se.metadata.labels, se.metadata.annotations);
    setIf(w, 'tunnelProtocol', tunnel.tunnelProtocol);
    setIf(w, 'nativeTunnel', tunnel.nativeTunnel);
    setIf(w, 'trustDomain', workloadTrustDomain(s));
    setIf(w, 'serviceAccount', ep.serviceAccount);
    if (!implicit) {
      const waypoint = computeWorkloadWaypoint(ns, ep.labels, view);
      setIf(w, 'waypoint', waypoint.waypoint);
      setIf(w, 'applicationTunnel', waypoint.applicationTunnel);
    }
    const canonical = canonicalService(se.metadata.labels, se.metadata.name);
    setIf(w, 'canonicalName', canonical.name);
    setIf(w, 'canonicalRevision', canonical.revision);
    setIf(w, 'workloadType', WorkloadType.POD);
    setIf(w, 'workloadName', se.metadata.name);
    const ports = servicePortsForEntry(se, true, ep.ports);
    const services: Record<string, PortList> = {};
    // An implicit endpoint is one host, the i-th: endpoints were made from hosts one to one.
    const own = implicit ? hosts.slice(i, i + 1) : [...hosts];
    for (const host of own.sort()) services[`${ns}/${host}`] = ports;
    setIf(w, 'services', services);
    setIf(
      w,
      'authorizationPolicies',
      featureOn(s, 'autoAllowWaypointPolicy')
        ? [
            ...policies,
            ...workloadImplicitPolicies(ns, implicit ? undefined : ep.labels, serviceWaypoints, view, !implicit),
          ]
        : policies,
    );
    setIf(w, 'clusterId', s.clusterId);
    setIf(w, 'locality', localityOfText(ep.locality));
    if (typeof ep.weight === 'number' && ep.weight > 0) w.capacity = { value: ep.weight };
    out.push(w);
  });
  return out;
}

export function endpointSliceWorkloadUid(clusterId: string, namespace: string, slice: string, address: string): string {
  return `${clusterId}/discovery.k8s.io/EndpointSlice/${namespace}/${slice}/${address}`;
}

/** Endpoints of a Service's slice that are not Pods (e.g. VMs added by hand): HOST_NETWORK, no identity. */
export function endpointSliceWorkloads(slice: KubeObject, view: MeshView): Workload[] {
  const svcName = slice.metadata.labels?.[LABEL.serviceName];
  if (svcName === undefined || slice.addressType === 'FQDN') return [];
  const ns = namespaceOf(slice);
  const svc = view.get('Service', ns, svcName);
  if (!svc || !isServedKubeService(svc)) return [];
  const s = view.settings;
  const serviceKey = `${ns}/${kubeServiceHostname(svcName, ns, s.domain)}`;
  const ports: Port[] = [];
  for (const p of slicePorts(slice)) {
    // istiod skips slice ports without a name, a number, or protocol TCP (an absent protocol included).
    if (p.name === undefined || p.port === undefined || p.protocol !== 'TCP') continue;
    const sp = (serviceSpec(svc).ports ?? []).find((x) => (x.name ?? '') === p.name);
    if (!sp) continue;
    const port: Port = {};
    setIf(port, 'servicePort', sp.port);
    setIf(port, 'targetPort', p.port);
    ports.push(port);
  }
  const out: Workload[] = [];
  const seen = new Set<string>();
  for (const ep of sliceEndpoints(slice)) {
    if (ep.targetRef?.kind === 'Pod') continue;
    const key = ep.addresses?.[0];
    if (key === undefined || seen.has(key)) continue;
    seen.add(key);
    const addresses = (ep.addresses ?? []).map(parseIp);
    if (addresses.some((a) => a === undefined)) continue;
    const w: Workload = { uid: endpointSliceWorkloadUid(s.clusterId, ns, slice.metadata.name, key) };
    setIf(w, 'name', slice.metadata.name);
    setIf(w, 'namespace', ns);
    w.addresses = addresses as Uint8Array[];
    setIf(w, 'network', s.network);
    setIf(w, 'trustDomain', workloadTrustDomain(s));
    w.services = { [serviceKey]: ports.length ? { ports } : {} };
    const ready = ep.conditions?.ready;
    setIf(w, 'status', ready === undefined || ready ? WorkloadStatus.HEALTHY : WorkloadStatus.UNHEALTHY);
    setIf(w, 'clusterId', s.clusterId);
    setIf(w, 'networkMode', NetworkMode.HOST_NETWORK);
    out.push(w);
  }
  return out;
}
