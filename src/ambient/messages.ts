// Plain-object shapes of the messages in proto/workload.proto and proto/authorization.proto, with
// protobufjs' camelCase field names. Builders leave default values out so the encoding matches a
// proto3 encoder's (zero values are not written).

export enum TunnelProtocol {
  NONE = 0,
  HBONE = 1,
  LEGACY_ISTIO_MTLS = 2,
}
export enum WorkloadStatus {
  HEALTHY = 0,
  UNHEALTHY = 1,
}
export enum WorkloadType {
  DEPLOYMENT = 0,
  CRONJOB = 1,
  POD = 2,
  JOB = 3,
}
export enum NetworkMode {
  STANDARD = 0,
  HOST_NETWORK = 1,
}
export enum AppProtocol {
  UNKNOWN = 0,
  HTTP11 = 1,
  HTTP2 = 2,
  GRPC = 3,
  TCP = 4,
  TLS = 5,
}
export enum IPFamilies {
  AUTOMATIC = 0,
  IPV4_ONLY = 1,
  IPV6_ONLY = 2,
  DUAL = 3,
}
export enum LbScope {
  UNSPECIFIED_SCOPE = 0,
  REGION = 1,
  ZONE = 2,
  SUBZONE = 3,
  NODE = 4,
  CLUSTER = 5,
  NETWORK = 6,
}
export enum LbMode {
  UNSPECIFIED_MODE = 0,
  STRICT = 1,
  FAILOVER = 2,
  PASSTHROUGH = 3,
}
export enum HealthPolicy {
  ONLY_HEALTHY = 0,
  ALLOW_ALL = 1,
}
export enum AppTunnelProtocol {
  NONE = 0,
  PROXY = 1,
}
export enum Visibility {
  PUBLIC = 0,
  NAMESPACE = 1,
}
export enum AuthzScope {
  GLOBAL = 0,
  NAMESPACE = 1,
  WORKLOAD_SELECTOR = 2,
}
export enum AuthzAction {
  ALLOW = 0,
  DENY = 1,
}

export interface NetworkAddress {
  network?: string;
  address: Uint8Array;
  length?: number;
}
export interface NamespacedHostname {
  namespace?: string;
  hostname?: string;
}
export interface GatewayAddress {
  hostname?: NamespacedHostname;
  address?: NetworkAddress;
  hboneMtlsPort?: number;
}
export interface Port {
  servicePort?: number;
  targetPort?: number;
  appProtocol?: AppProtocol;
}
export interface PortList {
  ports?: Port[];
}
export interface Locality {
  region?: string;
  zone?: string;
  subzone?: string;
}
export interface ApplicationTunnel {
  protocol?: AppTunnelProtocol;
  port?: number;
}
export interface LoadBalancing {
  routingPreference?: LbScope[];
  mode?: LbMode;
  healthPolicy?: HealthPolicy;
}
export interface WeightedWaypoint {
  destination: GatewayAddress;
  weight?: number;
}

export interface Workload {
  uid: string;
  name?: string;
  namespace?: string;
  addresses?: Uint8Array[];
  hostname?: string;
  network?: string;
  networkGateway?: GatewayAddress;
  tunnelProtocol?: TunnelProtocol;
  trustDomain?: string;
  serviceAccount?: string;
  waypoint?: GatewayAddress;
  node?: string;
  canonicalName?: string;
  canonicalRevision?: string;
  workloadType?: WorkloadType;
  workloadName?: string;
  nativeTunnel?: boolean;
  applicationTunnel?: ApplicationTunnel;
  services?: Record<string, PortList>;
  authorizationPolicies?: string[];
  status?: WorkloadStatus;
  clusterId?: string;
  locality?: Locality;
  networkMode?: NetworkMode;
  capacity?: { value: number };
}

export interface Service {
  name?: string;
  namespace?: string;
  hostname: string;
  addresses?: NetworkAddress[];
  ports?: Port[];
  subjectAltNames?: string[];
  waypoint?: GatewayAddress;
  loadBalancing?: LoadBalancing;
  ipFamilies?: IPFamilies;
  canonical?: boolean;
  ingressUseWaypoint?: boolean;
  weightedWaypoints?: WeightedWaypoint[];
  visibility?: Visibility;
}

export interface Address {
  workload?: Workload;
  service?: Service;
}

export interface StringMatch {
  exact?: string;
  prefix?: string;
  suffix?: string;
  presence?: Record<string, never>;
}
export interface AuthzAddress {
  address: Uint8Array;
  length: number;
}
export interface ServiceAccountMatch {
  namespace: string;
  serviceAccount: string;
}
export interface Match {
  namespaces?: StringMatch[];
  notNamespaces?: StringMatch[];
  principals?: StringMatch[];
  notPrincipals?: StringMatch[];
  sourceIps?: AuthzAddress[];
  notSourceIps?: AuthzAddress[];
  destinationIps?: AuthzAddress[];
  notDestinationIps?: AuthzAddress[];
  destinationPorts?: number[];
  notDestinationPorts?: number[];
  serviceAccounts?: ServiceAccountMatch[];
  notServiceAccounts?: ServiceAccountMatch[];
}
export interface Clause {
  matches?: Match[];
}
export interface Rule {
  clauses?: Clause[];
}
export interface Authorization {
  name: string;
  namespace: string;
  scope?: AuthzScope;
  action?: AuthzAction;
  rules?: Rule[];
  dryRun?: boolean;
}

/** Copies `value` into `target[key]` only when it is not a proto3 default (so it is not encoded). */
export function setIf<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined | null): void {
  if (value === undefined || value === null) return;
  if (value === '' || value === 0 || value === false) return;
  if (Array.isArray(value) && value.length === 0) return;
  target[key] = value;
}
