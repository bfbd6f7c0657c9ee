// The Kubernetes and Istio kinds the store holds: group, served versions, plural, scope.
// One place for these facts; the sources and the test API server read them from here.

export interface KindInfo<Id extends WatchKindId = WatchKindId> {
  /** Store key; unique across groups (the Gateway API Gateway is "Gateway"). */
  id: Id;
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

/**
 * Kinds watched only by one controller's own narrow watch, never by the main source and never
 * held in the object store: Secrets are read in the system namespace under a label selector
 * (the remote-secret controller, store/kube/remote-clusters.ts), because a cluster-wide Secret
 * watch would hold every application's credentials in memory.
 */
export const CONTROLLER_KIND_IDS = ['Secret'] as const;

export type ControllerKindId = (typeof CONTROLLER_KIND_IDS)[number];

/** Every kind a KindWatcher can watch: the store's kinds and the controllers' own. */
export type WatchKindId = KindId | ControllerKindId;

const k = <Id extends WatchKindId>(
  id: Id,
  group: string,
  versions: readonly [string, ...string[]],
  plural: string,
  namespaced: boolean,
  crd: boolean,
): KindInfo<Id> => ({ id, group, kind: id, version: versions[0], versions, plural, namespaced, crd });

export const KINDS: { readonly [Id in WatchKindId]: KindInfo<Id> } = {
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
  Secret: k('Secret', '', ['v1'], 'secrets', true, false),
};

/** The store's kinds only (a manifest of a controller kind is not a store object). */
const STORE_KINDS: readonly KindInfo<KindId>[] = KIND_IDS.map((id) => KINDS[id]);

/** Finds the kind of a manifest from its apiVersion and kind; undefined for kinds we do not hold. */
export function kindOf(apiVersion: string | undefined, kind: string | undefined): KindInfo<KindId> | undefined {
  if (!apiVersion || !kind) return undefined;
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  for (const info of STORE_KINDS) {
    if (info.kind === kind && info.group === group && info.versions.includes(version)) return info;
  }
  return undefined;
}

export function apiVersionOf(info: KindInfo): string {
  return info.group === '' ? info.version : `${info.group}/${info.version}`;
}
