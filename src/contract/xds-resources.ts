// The contract between the ambient index (producer) and the xDS server (consumer), imported by
// both and importing nothing. The xDS server sees only named, versioned, already-encoded
// resources and change sets, never Kubernetes.

export const ADDRESS_TYPE_URL = 'type.googleapis.com/istio.workload.Address';
export const AUTHORIZATION_TYPE_URL = 'type.googleapis.com/istio.security.Authorization';
export type XdsTypeUrl = typeof ADDRESS_TYPE_URL | typeof AUTHORIZATION_TYPE_URL;

/** Address before Authorization: the order every push follows. */
export const XDS_TYPE_ORDER: readonly XdsTypeUrl[] = [ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL];

export interface XdsResource {
  /** Workload uid, "<ns>/<hostname>" for services, "<ns>/<name>" for authorizations. */
  name: string;
  /** A hash of `bytes`; equal bytes give equal versions. */
  version: string;
  /**
   * The encoded message placed in the Resource's Any value: an istio.workload.Address (oneof
   * workload / service) or an istio.security.Authorization. Encoded once, shared by every stream.
   */
  bytes: Uint8Array;
}

export interface ChangeSet {
  typeUrl: XdsTypeUrl;
  updated: readonly string[];
  removed: readonly string[];
}

export interface ResourceCache {
  get(typeUrl: XdsTypeUrl, name: string): XdsResource | undefined;
  /** Every resource of a type (wildcard subscriptions). */
  all(typeUrl: XdsTypeUrl): Iterable<XdsResource>;
  /** Each batch of store events yields at most one ChangeSet per type. Returns an unsubscribe function. */
  subscribe(listener: (changes: readonly ChangeSet[]) => void): () => void;
  /**
   * On-demand lookup of one requested Address key: a workload uid, "<network>/<ip>" or
   * "<ns>/<hostname>". Returns the names of the Address resources it resolves to (a service
   * brings its workloads too); empty when nothing matches.
   */
  resolveAddress(key: string): string[];
  /** Names of the workload Address resources scheduled on a node. */
  workloadsOnNode(node: string): string[];
}
