// Workloads from Pods and WorkloadEntries (amb/workloads.go podWorkloadBuilder,
// workloadEntryWorkloadBuilder): pure functions of the object and the MeshView.

import type { KubeObject } from '../store/types';
import { ANNOTATION, LABEL } from './constants';
import { parseIp } from './ip';
import { NetworkMode, PortList, Workload, WorkloadStatus, WorkloadType, setIf } from './messages';
import { candidatePeerAuthentications, peerAuthenticationKeys } from './peer-authentication';
import { workloadPolicyName } from './authorization';
import { kubeServicePortsForPod, podTcpPorts, serviceEntryPortsForPod, servicePortsForEntry } from './service-ports';
import { workloadTrustDomain } from './settings';
import { namespaceOf, podSpec, serviceSpec, sliceEndpoints, workloadEntrySpec } from './specs';
import type { MeshView } from './view';
import { kubeServiceHostname, serviceClusterIps, serviceEntryWinningHosts } from './services';
import { computeWorkloadWaypoint } from './waypoints';
import {
  canonicalService,
  localityOfNode,
  localityOfText,
  podIpTexts,
  podIsReady,
  podIsTerminal,
  podWorkloadName,
  tunnelOf,
} from './workload-meta';

export function podUid(clusterId: string, namespace: string, name: string): string {
  return `${clusterId}//Pod/${namespace}/${name}`;
}

export function workloadEntryUid(clusterId: string, namespace: string, name: string): string {
  return `${clusterId}/networking.istio.io/WorkloadEntry/${namespace}/${name}`;
}

/** Names of sent APs (of the namespace or the root namespace) whose selector picks these labels, sorted. */
export function selectingPolicyNames(
  view: MeshView,
  namespace: string,
  labels: Record<string, string> | undefined,
): string[] {
  const names: string[] = [];
  for (const ap of view.policiesSelecting(namespace, labels ?? {})) {
    const n = workloadPolicyName(ap, view.settings.enableDryRun);
    if (n !== undefined) names.push(n);
  }
  return names.sort();
}

/** PeerAuthentication-derived policy names a workload references. */
export function peerAuthenticationNames(
  view: MeshView,
  namespace: string,
  labels: Record<string, string> | undefined,
): string[] {
  const root = view.settings.rootNamespace;
  const inRoot = namespace === root ? [] : view.peerAuthentications(root);
  return peerAuthenticationKeys(
    root,
    candidatePeerAuthentications(namespace, labels, view.peerAuthentications(namespace), inRoot, root),
  );
}

/** AP names (sorted), then the PeerAuthentication-derived names, as istiod orders them. */
export function workloadPolicies(
  view: MeshView,
  namespace: string,
  labels: Record<string, string> | undefined,
): string[] {
  return [...selectingPolicyNames(view, namespace, labels), ...peerAuthenticationNames(view, namespace, labels)];
}

/** Keys sorted so the encoded map is the same whatever order services were found in. */
function sortedMap(entries: Map<string, PortList>): Record<string, PortList> | undefined {
  if (entries.size === 0) return undefined;
  const out: Record<string, PortList> = {};
  // Keys in code-unit order, as sort() orders strings.
  for (const [k, v] of [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) out[k] = v;
  return out;
}

/** A Kubernetes Service that yields a Service resource (not ExternalName, every cluster IP parses). */
export function isServedKubeService(svc: KubeObject): boolean {
  if (serviceSpec(svc).type === 'ExternalName') return false;
  return serviceClusterIps(svc).every((ip) => parseIp(ip) !== undefined);
}

function podServices(pod: KubeObject, view: MeshView): Record<string, PortList> | undefined {
  const ns = namespaceOf(pod);
  const labels = pod.metadata.labels ?? {};
  const containerPorts = podTcpPorts(pod);
  const out = new Map<string, PortList>();
  const domain = view.settings.domain;
  for (const svc of view.servicesSelecting(ns, labels)) {
    if (!isServedKubeService(svc)) continue;
    out.set(`${ns}/${kubeServiceHostname(svc.metadata.name, ns, domain)}`, kubeServicePortsForPod(svc, containerPorts));
  }
  for (const se of view.serviceEntriesSelecting(ns, labels)) {
    const ports = serviceEntryPortsForPod(se, containerPorts);
    for (const host of serviceEntryWinningHosts(se, view)) out.set(`${ns}/${host}`, ports);
  }
  // Services reach pods through EndpointSlices whose endpoints name the pod exactly (kind, namespace,
  // name and uid, as istiod's TargetRef index), unless a selector already matched that hostname.
  const matched = new Set([...out.keys()].map((k) => k.slice(k.indexOf('/') + 1)));
  for (const slice of view.slicesTargetingPod(ns, pod.metadata.name)) {
    const svcName = slice.metadata.labels?.[LABEL.serviceName];
    if (svcName === undefined || slice.addressType === 'FQDN') continue;
    const targets = sliceEndpoints(slice).some(
      (e) =>
        e.targetRef?.kind === 'Pod' &&
        (e.targetRef.namespace ?? '') === ns &&
        e.targetRef.name === pod.metadata.name &&
        (e.targetRef.uid ?? '') === (pod.metadata.uid ?? ''),
    );
    const sliceNs = namespaceOf(slice);
    const hostname = kubeServiceHostname(svcName, sliceNs, domain);
    if (!targets || matched.has(hostname)) continue;
    const svc = view.get('Service', sliceNs, svcName);
    if (!svc || !isServedKubeService(svc)) continue;
    matched.add(hostname);
    out.set(`${sliceNs}/${hostname}`, kubeServicePortsForPod(svc, containerPorts));
  }
  return sortedMap(out);
}

/** What every workload carries about how the mesh reaches it: tunnel, identity and waypoint. */
function setMeshIdentity(
  w: Workload,
  ns: string,
  labels: Record<string, string> | undefined,
  annotations: Record<string, string> | undefined,
  serviceAccount: string | undefined,
  view: MeshView,
): void {
  const tunnel = tunnelOf(labels, annotations);
  setIf(w, 'tunnelProtocol', tunnel.tunnelProtocol);
  setIf(w, 'nativeTunnel', tunnel.nativeTunnel);
  setIf(w, 'trustDomain', workloadTrustDomain(view.settings));
  setIf(w, 'serviceAccount', serviceAccount);
  const waypoint = computeWorkloadWaypoint(ns, labels, view);
  setIf(w, 'waypoint', waypoint.waypoint);
  setIf(w, 'applicationTunnel', waypoint.applicationTunnel);
}

/** The canonical service and workload name; the type is POD for entries too, as istiod sends it. */
function setWorkloadNames(w: Workload, labels: Record<string, string> | undefined, workloadName: string): void {
  const canonical = canonicalService(labels, workloadName);
  setIf(w, 'canonicalName', canonical.name);
  setIf(w, 'canonicalRevision', canonical.revision);
  setIf(w, 'workloadType', WorkloadType.POD);
  setIf(w, 'workloadName', workloadName);
}

/** Every pod with an IP that is not Failed/Succeeded becomes a workload, enrolled or not. */
export function podWorkload(pod: KubeObject, view: MeshView): Workload | undefined {
  if (podIsTerminal(pod)) return undefined;
  const ipTexts = podIpTexts(pod);
  if (ipTexts.length === 0) return undefined;
  const addresses: Uint8Array[] = [];
  for (const t of ipTexts) {
    const ip = parseIp(t);
    if (!ip) return undefined;
    addresses.push(ip);
  }
  const s = view.settings;
  const ns = namespaceOf(pod);
  const labels = pod.metadata.labels;
  const spec = podSpec(pod);
  const w: Workload = { uid: podUid(s.clusterId, ns, pod.metadata.name) };
  setIf(w, 'name', pod.metadata.name);
  setIf(w, 'namespace', ns);
  w.addresses = addresses;
  setIf(w, 'network', s.network);
  setMeshIdentity(w, ns, labels, pod.metadata.annotations, spec.serviceAccountName, view);
  setIf(w, 'node', spec.nodeName);
  setWorkloadNames(w, labels, podWorkloadName(pod));
  setIf(w, 'services', podServices(pod, view));
  setIf(w, 'authorizationPolicies', workloadPolicies(view, ns, labels));
  const healthy = podIsReady(pod) && !pod.metadata.deletionTimestamp;
  setIf(w, 'status', healthy ? WorkloadStatus.HEALTHY : WorkloadStatus.UNHEALTHY);
  setIf(w, 'clusterId', s.clusterId);
  setIf(w, 'locality', spec.nodeName ? localityOfNode(view.get('Node', undefined, spec.nodeName)) : undefined);
  setIf(w, 'networkMode', spec.hostNetwork ? NetworkMode.HOST_NETWORK : NetworkMode.STANDARD);
  return w;
}

/** A WorkloadEntry's labels: spec.labels overlaid by metadata.labels. */
export function workloadEntryLabels(we: KubeObject): Record<string, string> {
  return { ...(workloadEntrySpec(we).labels ?? {}), ...(we.metadata.labels ?? {}) };
}

export function workloadEntryWorkload(we: KubeObject, view: MeshView): Workload {
  const s = view.settings;
  const ns = namespaceOf(we);
  const spec = workloadEntrySpec(we);
  const labels = workloadEntryLabels(we);
  const w: Workload = { uid: workloadEntryUid(s.clusterId, ns, we.metadata.name) };
  setIf(w, 'name', we.metadata.name);
  setIf(w, 'namespace', ns);
  const ip = parseIp(spec.address);
  if (ip) w.addresses = [ip];
  else setIf(w, 'hostname', spec.address);
  setIf(w, 'network', spec.network || s.network);
  setMeshIdentity(w, ns, labels, we.metadata.annotations, spec.serviceAccount, view);
  setWorkloadNames(
    w,
    labels,
    we.metadata.annotations?.[ANNOTATION.autoRegistrationGroup] ?? labels[LABEL.workloadName] ?? we.metadata.name,
  );
  const services = new Map<string, PortList>();
  for (const se of view.serviceEntriesSelecting(ns, labels)) {
    const ports = servicePortsForEntry(se, true, spec.ports);
    for (const host of serviceEntryWinningHosts(se, view)) services.set(`${ns}/${host}`, ports);
  }
  for (const svc of view.servicesSelecting(ns, labels)) {
    if (!isServedKubeService(svc)) continue;
    services.set(
      `${ns}/${kubeServiceHostname(svc.metadata.name, ns, s.domain)}`,
      servicePortsForEntry(svc, false, spec.ports),
    );
  }
  setIf(w, 'services', sortedMap(services));
  setIf(w, 'authorizationPolicies', workloadPolicies(view, ns, labels));
  setIf(w, 'clusterId', s.clusterId);
  setIf(w, 'locality', localityOfText(spec.locality));
  if (typeof spec.weight === 'number' && spec.weight > 0) w.capacity = { value: spec.weight };
  return w;
}
