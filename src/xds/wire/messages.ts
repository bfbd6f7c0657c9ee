// The request messages as the server reads them: DeltaDiscoveryRequest and its node, decoded by
// hand in request-wire.ts. Kept apart from proto.ts (which builds the service from the decoder)
// so that the decoder and the service definition do not import each other.

import { VersionDigest, digestMap } from './version-digest';

export interface ProtoStruct {
  fields?: Record<string, ProtoValue>;
}
export interface ProtoValue {
  kind?: 'nullValue' | 'numberValue' | 'stringValue' | 'boolValue' | 'structValue' | 'listValue';
  nullValue?: string;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: ProtoStruct;
  listValue?: { values?: ProtoValue[] };
}

export interface NodeMessage {
  id: string;
  cluster: string;
  metadata: ProtoStruct | null;
  locality: { region: string; zone: string; sub_zone: string } | null;
}

export interface StatusMessage {
  code: number;
  message: string;
}

/**
 * initial_resource_versions as received: the entry count and digest are read from the raw bytes;
 * the name -> version map is decoded only when asked for (an unchanged reconnect never asks).
 */
export interface HeldVersions {
  /** Entries as listed, a repeated name counted each time (0 exactly when the map is empty). */
  readonly size: number;
  readonly digest: VersionDigest;
  /** The entries, the last value of a repeated name winning (protobuf map semantics). */
  map(): ReadonlyMap<string, string>;
}

/** HeldVersions of a map built in code (tests, in-process callers). */
export function heldVersions(entries: ReadonlyMap<string, string> | Record<string, string> = {}): HeldVersions {
  const map = entries instanceof Map ? entries : new Map(Object.entries(entries));
  return { size: map.size, digest: digestMap(map), map: () => map };
}

/** envoy.service.discovery.v3.DeltaDiscoveryRequest as the server decodes it (request-wire.ts). */
export interface DeltaDiscoveryRequest {
  node: NodeMessage | null;
  type_url: string;
  resource_names_subscribe: string[];
  resource_names_unsubscribe: string[];
  initial_resource_versions: HeldVersions;
  response_nonce: string;
  /** Present (non-null) only on a NACK. */
  error_detail: StatusMessage | null;
  /** Set when a client string is over its limit (client-limits.ts): which field and which limit. */
  invalid?: string;
}
