// The Kubernetes and Istio kinds the store holds: group, served versions, plural, scope.
// One place for these facts; the sources and the test API server read them from here.

export interface KindInfo {
  /** Store key; unique across groups (the Gateway API Gateway is "Gateway"). */
  id: KindId;
  group: string;
  kind: string;
  /** Version the Kubernetes source watches. */
  version: string;
  /** Every version a manifest may use for this kind. */
  versions: readonly string[];
  plural: string;
  namespaced: boolean;
  /** Installed by a CRD, so it may be missing from a cluster. */
  crd: boolean;
}

export const KIND_IDS = [
  'Namespace',
  'Node',
  'Pod',
  'Service',
  'EndpointSlice',
  'ConfigMap',
  'ServiceEntry',
  'WorkloadEntry',
  'AuthorizationPolicy',
  'PeerAuthentication',
  'Gateway',
  'GatewayClass',
] as const;

export type KindId = (typeof KIND_IDS)[number];

const k = (
  id: KindId,
  group: string,
  versions: readonly [string, ...string[]],
  plural: string,
  namespaced: boolean,
  crd: boolean,
): KindInfo => ({ id, group, kind: id, version: versions[0], versions, plural, namespaced, crd });

export const KINDS: Readonly<Record<KindId, KindInfo>> = {
  Namespace: k('Namespace', '', ['v1'], 'namespaces', false, false),
  Node: k('Node', '', ['v1'], 'nodes', false, false),
  Pod: k('Pod', '', ['v1'], 'pods', true, false),
  Service: k('Service', '', ['v1'], 'services', true, false),
  EndpointSlice: k('EndpointSlice', 'discovery.k8s.io', ['v1'], 'endpointslices', true, false),
  ConfigMap: k('ConfigMap', '', ['v1'], 'configmaps', true, false),
  ServiceEntry: k('ServiceEntry', 'networking.istio.io', ['v1', 'v1beta1', 'v1alpha3'], 'serviceentries', true, true),
  WorkloadEntry: k(
    'WorkloadEntry',
    'networking.istio.io',
    ['v1', 'v1beta1', 'v1alpha3'],
    'workloadentries',
    true,
    true,
  ),
  AuthorizationPolicy: k(
    'AuthorizationPolicy',
    'security.istio.io',
    ['v1', 'v1beta1'],
    'authorizationpolicies',
    true,
    true,
  ),
  PeerAuthentication: k(
    'PeerAuthentication',
    'security.istio.io',
    ['v1', 'v1beta1'],
    'peerauthentications',
    true,
    true,
  ),
  Gateway: k('Gateway', 'gateway.networking.k8s.io', ['v1', 'v1beta1'], 'gateways', true, true),
  GatewayClass: k('GatewayClass', 'gateway.networking.k8s.io', ['v1', 'v1beta1'], 'gatewayclasses', false, true),
};

/** Finds the kind of a manifest from its apiVersion and kind; undefined for kinds we do not hold. */
export function kindOf(apiVersion: string | undefined, kind: string | undefined): KindInfo | undefined {
  if (!apiVersion || !kind) return undefined;
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  for (const info of Object.values(KINDS)) {
    if (info.kind === kind && info.group === group && info.versions.includes(version)) return info;
  }
  return undefined;
}

export function apiVersionOf(info: KindInfo): string {
  return info.group === '' ? info.version : `${info.group}/${info.version}`;
}
