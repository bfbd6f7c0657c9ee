// Loading proto/xds.proto, the request shape the server reads, and the service definition whose
// response serializer passes pre-encoded bytes through (see wire.ts).

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { decodeDeltaRequest } from './request-wire';
import { VersionDigest, digestMap } from './version-digest';
import { serializeOutgoing } from './wire';

export const ADS_SERVICE = 'envoy.service.discovery.v3.AggregatedDiscoveryService';
export const DELTA_METHOD = 'DeltaAggregatedResources';

/** Options shared by every loader of our protos: field names as written, longs and enums as strings. */
export const PROTO_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** The proto/ folder, found from this file in src/ (tests) or dist/src/ (built). */
export function protoDir(): string {
  let dir = __dirname;
  for (;;) {
    const candidate = path.join(dir, 'proto');
    if (fs.existsSync(path.join(candidate, 'xds.proto'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`proto/xds.proto not found above ${__dirname}`);
    dir = parent;
  }
}

/** Loads .proto files from proto/ (e.g. "xds.proto", "workload.proto"). */
export function loadProtos(files: string[]): protoLoader.PackageDefinition {
  const dir = protoDir();
  return protoLoader.loadSync(
    files.map((f) => path.join(dir, f)),
    { ...PROTO_LOADER_OPTIONS, includeDirs: [dir] },
  );
}

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

let cached: grpc.ServiceDefinition | undefined;

/**
 * The ADS service definition for the server: requests are decoded by hand (request-wire.ts),
 * responses are written as the Buffers the server already encoded.
 */
export function adsServiceDefinition(): grpc.ServiceDefinition {
  if (cached) return cached;
  const pkg = loadProtos(['xds.proto']);
  const service = pkg[ADS_SERVICE] as grpc.ServiceDefinition;
  const method = service[DELTA_METHOD]!;
  cached = {
    [DELTA_METHOD]: {
      ...method,
      requestDeserialize: decodeDeltaRequest,
      responseSerialize: serializeOutgoing,
    },
  } as grpc.ServiceDefinition;
  return cached;
}
