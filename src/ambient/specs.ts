// The parts of each kind's spec and status the ambient index reads, typed once at the point where
// they leave the store. The store keeps objects as the API server (or a local file) gave them,
// with spec and status untyped; the shapes here are those the API server's schemas (and the Istio
// CRDs' structural schemas) guarantee, field by field only as far as the derivations read them.
// Every field is optional: an absent one reads as istiod reads an unset field.

import type { LabelSelector } from '../store/selector';
import type { KubeObject } from '../store/types';

/** The namespace of an object; the store files one without a namespace (cluster-scoped kinds) under ''. */
export const namespaceOf = (o: KubeObject): string => o.metadata.namespace ?? '';

/**
 * A label or annotation the map itself holds, even when empty; never one inherited from
 * Object.prototype (a label named "constructor" is a user's label like any other).
 */
export function ownValue(map: Record<string, string> | undefined, key: string): string | undefined {
  return map && Object.prototype.hasOwnProperty.call(map, key) ? map[key] : undefined;
}

export interface KubeServicePort {
  name?: string;
  protocol?: string;
  appProtocol?: string;
  port: number;
  targetPort?: number | string;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
}

export interface ServiceEntryPort {
  number: number;
  name?: string;
  protocol?: string;
  targetPort?: number;
}

interface Container {
  ports?: ContainerPort[];
  restartPolicy?: string;
}

export interface PodSpec {
  nodeName?: string;
  serviceAccountName?: string;
  hostNetwork?: boolean;
  containers?: Container[];
  initContainers?: Container[];
}

export interface PodStatus {
  phase?: string;
  conditions?: { type?: string; status?: string }[];
  podIP?: string;
  podIPs?: { ip?: string }[];
}

export interface ServiceSpec {
  type?: string;
  selector?: Record<string, string>;
  ports?: KubeServicePort[];
  clusterIP?: string;
  clusterIPs?: string[];
  ipFamilies?: string[];
  internalTrafficPolicy?: string;
  trafficDistribution?: string;
  publishNotReadyAddresses?: boolean;
}

/** A ServiceEntry or WorkloadEntry endpoint (a WorkloadEntry's spec is one). */
export interface WorkloadEntrySpec {
  address?: string;
  labels?: Record<string, string>;
  ports?: Record<string, number>;
  network?: string;
  locality?: string;
  serviceAccount?: string;
  weight?: number;
}

export interface ServiceEntrySpec {
  hosts?: string[];
  addresses?: string[];
  ports?: ServiceEntryPort[];
  resolution?: string;
  subjectAltNames?: string[];
  workloadSelector?: { labels?: Record<string, string> };
  endpoints?: WorkloadEntrySpec[];
}

export interface ServiceEntryStatus {
  addresses?: { value?: string; host?: string }[];
}

/** A policy's workload selector; `null` is kept apart from absent where istiod tells them apart. */
interface WorkloadSelector {
  matchLabels?: Record<string, string> | null;
}

export interface AuthorizationPolicySpec {
  selector?: WorkloadSelector | null;
  targetRef?: unknown;
  targetRefs?: unknown;
  action?: string;
  /** Converted rule by rule (authorization.ts), so each is read there. */
  rules?: unknown[];
}

export interface PeerAuthenticationMtls {
  mode?: string;
}

export interface PeerAuthenticationSpec {
  selector?: WorkloadSelector | null;
  mtls?: PeerAuthenticationMtls | null;
  portLevelMtls?: Record<string, PeerAuthenticationMtls | null | undefined> | null;
}

export interface GatewayListener {
  protocol?: string;
  port?: number;
  allowedRoutes?: { namespaces?: { from?: string; selector?: LabelSelector } };
}

export interface GatewaySpec {
  gatewayClassName?: string;
  listeners?: GatewayListener[];
}

export interface GatewayStatus {
  addresses?: { type?: string; value?: string }[];
}

/** An EndpointSlice endpoint's reference to what it stands for. */
export interface SliceTargetRef {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
}

export interface SliceEndpoint {
  addresses?: string[];
  conditions?: { ready?: boolean };
  targetRef?: SliceTargetRef;
}

export interface SlicePort {
  name?: string;
  port?: number;
  protocol?: string;
}

// Each reader returns {} for an object without a spec (or status), which reads as every field unset.
export const podSpec = (o: KubeObject) => (o.spec ?? {}) as PodSpec;
export const podStatus = (o: KubeObject) => (o.status ?? {}) as PodStatus;
export const serviceSpec = (o: KubeObject) => (o.spec ?? {}) as ServiceSpec;
export const serviceEntrySpec = (o: KubeObject) => (o.spec ?? {}) as ServiceEntrySpec;
export const serviceEntryStatus = (o: KubeObject) => (o.status ?? {}) as ServiceEntryStatus;
export const workloadEntrySpec = (o: KubeObject) => (o.spec ?? {}) as WorkloadEntrySpec;
export const authorizationPolicySpec = (o: KubeObject) => (o.spec ?? {}) as AuthorizationPolicySpec;
export const peerAuthenticationSpec = (o: KubeObject) => (o.spec ?? {}) as PeerAuthenticationSpec;
export const gatewaySpec = (o: KubeObject) => (o.spec ?? {}) as GatewaySpec;
export const gatewayStatus = (o: KubeObject) => (o.status ?? {}) as GatewayStatus;
/** An EndpointSlice keeps its endpoints and ports at the top level, not under spec. */
export const sliceEndpoints = (o: KubeObject) => (o['endpoints'] ?? []) as SliceEndpoint[];
export const slicePorts = (o: KubeObject) => (o['ports'] ?? []) as SlicePort[];
