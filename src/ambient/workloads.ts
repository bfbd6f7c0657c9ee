// Workloads from Pods and WorkloadEntries (amb/workloads.go podWorkloadBuilder,
// workloadEntryWorkloadBuilder): pure functions of the object and the MeshView.

import type { DecisionTrace } from '../contract/decision';
import type { KubeObject } from '../store/types';
import { ANNOTATION, LABEL } from './constants';
import { parseIp } from './ip';
import { NetworkMode, PortList, Workload, WorkloadStatus, WorkloadType, setIf } from './messages';
import { candidatePeerAuthentications, peerAuthenticationKeys } from './peer-authentication';
import { policyDisposition, workloadPolicyName } from './authorization';
import { kubeServicePortsForPod, podTcpPorts, serviceEntryPortsForPod, servicePortsForEntry } from './service-ports';
import { featureOn, workloadTrustDomain } from './settings';
import {
  namespaceOf,
  peerAuthenticationSpec,
  podSpec,
  podStatus,
  serviceSpec,
  sliceEndpoints,
  workloadEntrySpec,
} from './specs';
import type { MeshView } from './view';
import {
  kubeServiceHostname,
  serviceClusterIps,
  serviceEntryBoundWaypoint,
  serviceEntryWinningHosts,
} from './services';
import { implicitWaypointPolicies } from './waypoint-policies';
import { Waypoint, computeWorkloadWaypoint, serviceWaypoint, waypointOfInstance, workloadWaypoint } from './waypoints';
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

/** The topic of whole-workload steps in a decision record (explain). */
const WORKLOAD = 'workload';
/** The topic of service steps in a decision record (explain). */
const SERVICES = 'services';

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
  trace?: DecisionTrace,
): string[] {
  const names: string[] = [];
  for (const ap of view.policiesSelecting(namespace, labels ?? {})) {
    const n = workloadPolicyName(ap, view.settings.enableDryRun);
    if (n !== undefined) names.push(n);
    if (trace) explainSelectingPolicy(trace, ap, n, view.settings.enableDryRun);
  }
  if (names.length === 0)
    trace?.decide(
      'policies',
      'policies.none-selecting',
      "AuthorizationPolicies are listed on a workload when their selector's matchLabels (in its namespace or the root namespace) pick its labels",
      'no AuthorizationPolicy selects the workload',
    );
  return names.sort();
}

/** Explain only: one selecting policy, sent by name or kept from ztunnel and why. */
function explainSelectingPolicy(trace: DecisionTrace, ap: KubeObject, name: string | undefined, dryRun?: boolean) {
  const ref = `${ap.metadata.namespace ?? ''}/${ap.metadata.name}`;
  trace.fact(`AuthorizationPolicy ${ref} disposition`, policyDisposition(ap, dryRun));
  trace.decide(
    'policies',
    name === undefined ? 'policies.not-sent' : 'policies.selector',
    'a policy whose selector picks the workload is listed on it, unless ztunnel never gets it (targetRef, dry-run, CUSTOM/AUDIT)',
    name === undefined ? `${ref} selects the workload but is not sent to ztunnel` : `listed: ${name}`,
  );
}

/** PeerAuthentication-derived policy names a workload references. */
export function peerAuthenticationNames(
  view: MeshView,
  namespace: string,
  labels: Record<string, string> | undefined,
  trace?: DecisionTrace,
): string[] {
  const root = view.settings.rootNamespace;
  const inRoot = namespace === root ? [] : view.peerAuthentications(root);
  const candidates = candidatePeerAuthentications(namespace, labels, view.peerAuthentications(namespace), inRoot, root);
  const keys = peerAuthenticationKeys(root, candidates);
  if (trace) {
    const mode = (pa: KubeObject) => peerAuthenticationSpec(pa).mtls?.mode ?? 'UNSET';
    trace.fact(
      'PeerAuthentications that apply (mesh-wide in the root namespace, namespace-wide, selecting)',
      candidates.map((pa) => `${pa.metadata.namespace ?? ''}/${pa.metadata.name} mtls ${mode(pa)}`),
    );
    trace.decide(
      'policies',
      'policies.peer-authentication',
      'the oldest mesh, namespace and workload PeerAuthentication decide in that order: STRICT adds the static strict policy, port-level exceptions a converted one',
      keys.length ? `listed: ${keys.join(', ')}` : 'none',
    );
  }
  return keys;
}

/** AP names (sorted), then the PeerAuthentication-derived names, as istiod orders them. */
export function workloadPolicies(
  view: MeshView,
  namespace: string,
  labels: Record<string, string> | undefined,
  trace?: DecisionTrace,
): string[] {
  return [
    ...selectingPolicyNames(view, namespace, labels, trace),
    ...peerAuthenticationNames(view, namespace, labels, trace),
  ];
}

/** Keys sorted so the encoded map is the same whatever order services were found in. */
function sortedMap(entries: Map<string, PortList>): Record<string, PortList> | undefined {
  if (entries.size === 0) return undefined;
  // No prototype: V8 keeps such an object as a dictionary from the start. A `{}` given a new
  // property name per service made a hidden class per hostname, a twentieth of a 100k-pod build.
  const out = Object.create(null) as Record<string, PortList>;
  if (entries.size === 1) {
    for (const [k, v] of entries) out[k] = v; // most pods have one service: nothing to sort
    return out;
  }
  // Keys in code-unit order, as sort() orders strings.
  for (const [k, v] of [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) out[k] = v;
  return out;
}

/** A Kubernetes Service that yields a Service resource (not ExternalName, every cluster IP parses). */
export function isServedKubeService(svc: KubeObject): boolean {
  if (serviceSpec(svc).type === 'ExternalName') return false;
  return serviceClusterIps(svc).every((ip) => parseIp(ip) !== undefined);
}

/**
 * The services that list the pod, keyed `<ns>/<hostname>`. With `waypoints` (only when
 * PILOT_AUTO_ALLOW_WAYPOINT_POLICY is on), the waypoint each of them binds is collected too.
 */
function podServices(
  pod: KubeObject,
  view: MeshView,
  trace?: DecisionTrace,
  waypoints?: Waypoint[],
): Record<string, PortList> | undefined {
  const ns = namespaceOf(pod);
  const labels = pod.metadata.labels ?? {};
  const containerPorts = podTcpPorts(pod);
  const out = new Map<string, PortList>();
  const domain = view.settings.domain;
  for (const svc of view.servicesSelecting(ns, labels)) {
    const ports = isServedKubeService(svc) ? kubeServicePortsForPod(svc, containerPorts) : undefined;
    if (trace) explainService(trace, svc, ports);
    if (!ports) continue;
    out.set(`${ns}/${kubeServiceHostname(svc.metadata.name, ns, domain)}`, ports);
    if (waypoints) collectWaypoint(waypoints, serviceWaypoint(ns, svc.metadata.labels, view));
  }
  // PILOT_ENABLE_SERVICEENTRY_SELECT_PODS=false: only Kubernetes Services select pods.
  const entries = featureOn(view.settings, 'serviceEntrySelectPods') ? view.serviceEntriesSelecting(ns, labels) : [];
  for (const se of entries) {
    const ports = serviceEntryPortsForPod(se, containerPorts);
    const hosts = serviceEntryWinningHosts(se, view);
    if (trace) explainServiceEntry(trace, ns, se, hosts);
    for (const host of hosts) out.set(`${ns}/${host}`, ports);
    if (waypoints && hosts.length > 0) collectWaypoint(waypoints, serviceEntryBoundWaypoint(se, view));
  }
  // Services reach pods through EndpointSlices whose endpoints name the pod exactly (kind, namespace,
  // name and uid, as istiod's TargetRef index), unless a selector already matched that hostname.
  // Made at the first slice: most pods have none.
  let matched: Set<string> | undefined;
  for (const slice of view.slicesTargetingPod(ns, pod.metadata.name)) {
    matched ??= new Set([...out.keys()].map((k) => k.slice(k.indexOf('/') + 1)));
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
    if (trace) explainSlice(trace, slice, svcName, `${sliceNs}/${hostname}`);
    matched.add(hostname);
    out.set(`${sliceNs}/${hostname}`, kubeServicePortsForPod(svc, containerPorts));
    if (waypoints) collectWaypoint(waypoints, serviceWaypoint(sliceNs, svc.metadata.labels, view));
  }
  if (trace && out.size === 0)
    trace.decide(
      SERVICES,
      'services.none',
      'no Service or ServiceEntry selects the pod and no EndpointSlice names it',
      'none',
    );
  return sortedMap(out);
}

function collectWaypoint(into: Waypoint[], wp: Waypoint | undefined): void {
  if (wp) into.push(wp);
}

/**
 * PILOT_AUTO_ALLOW_WAYPOINT_POLICY: the implicit policies of a workload whose services bind
 * `serviceWaypoints`; its own waypoint is the one it binds, none for a waypoint's own instance
 * (nor, `bindsOwn` false, for a ServiceEntry's endpoints made from its hosts).
 */
export function workloadImplicitPolicies(
  ns: string,
  labels: Record<string, string> | undefined,
  serviceWaypoints: readonly Waypoint[],
  view: MeshView,
  bindsOwn = true,
): string[] {
  const own = !bindsOwn || waypointOfInstance(ns, labels, view) ? undefined : workloadWaypoint(ns, labels, view);
  return implicitWaypointPolicies(own, serviceWaypoints, view);
}

// The explain-only steps live in functions of their own, called under `if (trace)`: written inline
// they made the index's hot functions large enough to slow the from-scratch build, which never
// traces.

/** Explain only: a selecting ServiceEntry and the hosts it lists the pod under. */
function explainServiceEntry(trace: DecisionTrace, ns: string, se: KubeObject, hosts: string[]): void {
  trace.fact(`ServiceEntry ${ns}/${se.metadata.name} hosts it wins`, hosts);
  trace.decide(
    SERVICES,
    'services.serviceentry-selector',
    "a ServiceEntry of the pod's namespace whose workloadSelector picks its labels lists it under each host it wins",
    hosts.length ? `listed under ${hosts.map((h) => `${ns}/${h}`).join(', ')}` : 'no host it wins',
  );
}

/** Explain only: an EndpointSlice naming the pod gives it a Service no selector matched. */
function explainSlice(trace: DecisionTrace, slice: KubeObject, svcName: string, listed: string): void {
  trace.fact(`EndpointSlice ${namespaceOf(slice)}/${slice.metadata.name}`, `names this pod for Service ${svcName}`);
  trace.decide(
    SERVICES,
    'services.endpointslice',
    'a Service reaches a pod through an EndpointSlice endpoint naming it (kind, namespace, name, uid) when no selector matched that hostname',
    `listed: ${listed}`,
  );
}

/** Explain only: the pod's health. */
function explainHealth(trace: DecisionTrace, pod: KubeObject, healthy: boolean): void {
  trace.fact('Ready condition', podIsReady(pod));
  trace.fact('metadata.deletionTimestamp', pod.metadata.deletionTimestamp ?? null);
  trace.decide(
    WORKLOAD,
    'workload.health',
    'HEALTHY when Ready and not being deleted',
    healthy ? 'HEALTHY' : 'UNHEALTHY',
  );
}

/** Explain only: a selecting Service, listed with its ports unless ztunnel gets no Service from it. */
function explainService(trace: DecisionTrace, svc: KubeObject, ports: PortList | undefined): void {
  const ref = `Service ${namespaceOf(svc)}/${svc.metadata.name}`;
  trace.fact(
    `${ref} selector`,
    Object.entries(serviceSpec(svc).selector ?? {}).map(([k, v]) => `${k}=${v}`),
  );
  if (ports)
    trace.fact(
      `${ref} ports (service->target on this pod)`,
      (ports.ports ?? []).map((p) => `${p.servicePort ?? 0}->${p.targetPort ?? 0}`),
    );
  trace.decide(
    SERVICES,
    ports ? 'services.selector' : 'services.not-served',
    ports
      ? "a Service of the pod's namespace whose non-empty selector is a subset of the pod's labels lists the pod"
      : 'an ExternalName Service, or one with a cluster IP that does not parse, yields no Service for ztunnel',
    ports ? `listed: ${ref}` : `${ref} selects the pod but is not served`,
  );
}

/** What every workload carries about how the mesh reaches it: tunnel, identity and waypoint. */
function setMeshIdentity(
  w: Workload,
  ns: string,
  labels: Record<string, string> | undefined,
  annotations: Record<string, string> | undefined,
  serviceAccount: string | undefined,
  view: MeshView,
  trace?: DecisionTrace,
): void {
  const tunnel = tunnelOf(labels, annotations, trace);
  setIf(w, 'tunnelProtocol', tunnel.tunnelProtocol);
  setIf(w, 'nativeTunnel', tunnel.nativeTunnel);
  setIf(w, 'trustDomain', workloadTrustDomain(view.settings));
  setIf(w, 'serviceAccount', serviceAccount);
  const waypoint = computeWorkloadWaypoint(ns, labels, view, trace);
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

/**
 * Every pod with an IP that is not Failed/Succeeded becomes a workload, enrolled or not. A trace
 * (explain only) gets each fact read and each rule applied, topic by topic; the index passes none.
 */
export function podWorkload(pod: KubeObject, view: MeshView, trace?: DecisionTrace): Workload | undefined {
  if (trace) trace.fact('status.phase', podStatus(pod).phase ?? null);
  if (podIsTerminal(pod)) {
    if (trace) trace.decide(WORKLOAD, 'workload.terminal', 'a Failed or Succeeded pod is no workload', 'no workload');
    return undefined;
  }
  const ipTexts = podIpTexts(pod);
  if (trace) trace.fact('status.podIPs (or status.podIP)', ipTexts);
  if (ipTexts.length === 0) {
    if (trace) trace.decide(WORKLOAD, 'workload.no-ip', 'a pod without an IP is no workload yet', 'no workload');
    return undefined;
  }
  const addresses: Uint8Array[] = [];
  for (const t of ipTexts) {
    const ip = parseIp(t);
    if (!ip) {
      if (trace)
        trace.decide(
          WORKLOAD,
          'workload.bad-ip',
          'a pod whose IP does not parse is no workload',
          `no workload: "${t}"`,
        );
      return undefined;
    }
    addresses.push(ip);
  }
  if (trace)
    trace.decide(
      WORKLOAD,
      'workload.pod',
      'a pod with IPs that has not finished is a workload, enrolled or not',
      'a workload',
    );
  const s = view.settings;
  const ns = namespaceOf(pod);
  const labels = pod.metadata.labels;
  const spec = podSpec(pod);
  const w: Workload = { uid: podUid(s.clusterId, ns, pod.metadata.name) };
  setIf(w, 'name', pod.metadata.name);
  setIf(w, 'namespace', ns);
  w.addresses = addresses;
  setIf(w, 'network', s.network);
  setIf(w, 'networkGateway', view.networkGateway(s.network));
  setMeshIdentity(w, ns, labels, pod.metadata.annotations, spec.serviceAccountName, view, trace);
  setIf(w, 'node', spec.nodeName);
  setWorkloadNames(w, labels, podWorkloadName(pod));
  const serviceWaypoints = featureOn(s, 'autoAllowWaypointPolicy') ? [] : undefined;
  setIf(w, 'services', podServices(pod, view, trace, serviceWaypoints));
  const policies = workloadPolicies(view, ns, labels, trace);
  if (serviceWaypoints) policies.push(...workloadImplicitPolicies(ns, labels, serviceWaypoints, view));
  setIf(w, 'authorizationPolicies', policies);
  const healthy = podIsReady(pod) && !pod.metadata.deletionTimestamp;
  if (trace) explainHealth(trace, pod, healthy);
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
  setIf(w, 'networkGateway', view.networkGateway(spec.network || s.network));
  setMeshIdentity(w, ns, labels, we.metadata.annotations, spec.serviceAccount, view);
  setWorkloadNames(
    w,
    labels,
    we.metadata.annotations?.[ANNOTATION.autoRegistrationGroup] ?? labels[LABEL.workloadName] ?? we.metadata.name,
  );
  const services = new Map<string, PortList>();
  const serviceWaypoints = featureOn(s, 'autoAllowWaypointPolicy') ? [] : undefined;
  for (const se of view.serviceEntriesSelecting(ns, labels)) {
    const ports = servicePortsForEntry(se, true, spec.ports);
    const hosts = serviceEntryWinningHosts(se, view);
    for (const host of hosts) services.set(`${ns}/${host}`, ports);
    if (serviceWaypoints && hosts.length > 0) collectWaypoint(serviceWaypoints, serviceEntryBoundWaypoint(se, view));
  }
  // PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES=false: only ServiceEntries select WorkloadEntries.
  const kubeServices = featureOn(view.settings, 'k8sSelectWorkloadEntries') ? view.servicesSelecting(ns, labels) : [];
  for (const svc of kubeServices) {
    if (!isServedKubeService(svc)) continue;
    services.set(
      `${ns}/${kubeServiceHostname(svc.metadata.name, ns, s.domain)}`,
      servicePortsForEntry(svc, false, spec.ports),
    );
    if (serviceWaypoints) collectWaypoint(serviceWaypoints, serviceWaypoint(ns, svc.metadata.labels, view));
  }
  setIf(w, 'services', sortedMap(services));
  const policies = workloadPolicies(view, ns, labels);
  if (serviceWaypoints) policies.push(...workloadImplicitPolicies(ns, labels, serviceWaypoints, view));
  setIf(w, 'authorizationPolicies', policies);
  setIf(w, 'clusterId', s.clusterId);
  setIf(w, 'locality', localityOfText(spec.locality));
  if (typeof spec.weight === 'number' && spec.weight > 0) w.capacity = { value: spec.weight };
  return w;
}
