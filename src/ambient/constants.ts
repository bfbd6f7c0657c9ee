// Every label, annotation, reserved name and fixed number the ambient index reads or writes, in
// one place. Values are istiod's (see shared/reference/ambient-index.md §6).

export const LABEL = {
  tunnel: 'networking.istio.io/tunnel',
  useWaypoint: 'istio.io/use-waypoint',
  useWaypointNamespace: 'istio.io/use-waypoint-namespace',
  useWaypointCanary: 'istio.io/use-waypoint-canary',
  useWaypointCanaryNamespace: 'istio.io/use-waypoint-canary-namespace',
  waypointFor: 'istio.io/waypoint-for',
  gatewayName: 'gateway.networking.k8s.io/gateway-name',
  managedGateway: 'gateway.istio.io/managed',
  ingressUseWaypoint: 'istio.io/ingress-use-waypoint',
  network: 'topology.istio.io/network',
  workloadName: 'service.istio.io/workload-name',
  canonicalName: ['service.istio.io/canonical-name', 'app.kubernetes.io/name', 'app'],
  canonicalRevision: ['service.istio.io/canonical-revision', 'app.kubernetes.io/version', 'version'],
  podTemplateHash: 'pod-template-hash',
  rolloutsPodTemplateHash: 'rollouts-pod-template-hash',
  deploymentConfig: 'deploymentconfig',
  serviceName: 'kubernetes.io/service-name',
  enableAutoallocateIp: 'networking.istio.io/enable-autoallocate-ip',
  region: 'topology.kubernetes.io/region',
  zone: 'topology.kubernetes.io/zone',
  subzone: 'topology.istio.io/subzone',
} as const;

export const ANNOTATION = {
  redirection: 'ambient.istio.io/redirection',
  waypointInboundBinding: 'ambient.istio.io/waypoint-inbound-binding',
  trafficDistribution: 'networking.istio.io/traffic-distribution',
  dryRun: 'istio.io/dry-run',
  autoRegistrationGroup: 'istio.io/autoRegistrationGroup',
  useWaypointCanaryWeight: 'istio.io/use-waypoint-canary-weight',
} as const;

export const REDIRECTION_ENABLED = 'enabled';
/** The reserved use-waypoint value that opts an object out of any waypoint. */
export const WAYPOINT_NONE = 'none';
/** Managed-gateway label values whose services never get a waypoint (a waypoint's own Service). */
export const MANAGED_MESH_CONTROLLER = 'istio.io-mesh-controller';
export const MANAGED_EASTWEST_CONTROLLER = 'istio.io-eastwest-controller';

export type TrafficType = 'service' | 'workload' | 'all' | 'none';
export const TRAFFIC_TYPES: readonly TrafficType[] = ['service', 'workload', 'all', 'none'];
export const DEFAULT_TRAFFIC_TYPE: TrafficType = 'service';

/** istiod hard-codes the waypoint's HBONE port. */
export const HBONE_PORT = 15008;

export const STATIC_STRICT_POLICY = 'istio_converted_static_strict';
export const CONVERTED_PA_PREFIX = 'converted_peer_authentication_';

export const DEFAULT_CLUSTER_ID = 'Kubernetes';
export const DEFAULT_DOMAIN = 'cluster.local';
/** istiod sends an empty trust_domain when it is the default. */
export const DEFAULT_TRUST_DOMAIN = 'cluster.local';
export const DEFAULT_ROOT_NAMESPACE = 'istio-system';
export const DEFAULT_SYSTEM_NAMESPACE = 'istio-system';

/** The canary weight is a percentage; the primary gets the rest. */
export const MAX_CANARY_WEIGHT = 100;

/** Length of the hex version string (64 bits of SHA-256): collisions are negligible at mesh sizes. */
export const VERSION_HEX_LENGTH = 16;
