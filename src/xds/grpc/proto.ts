// Loading the project's protos, and the ADS service definition: requests are read by the hand
// decoders (request-wire.ts, sotw-wire.ts), responses pass pre-encoded bytes through (wire.ts). The request
// shapes are in messages.ts and re-exported here.

import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_LOADER_OPTIONS, protoDir } from '../../proto-files';
import { decodeDeltaRequest } from '../wire/request-wire';
import { decodeSotwRequest } from '../wire/sotw-wire';
import { serializeOutgoing } from '../wire/wire';

export { PROTO_LOADER_OPTIONS, protoDir } from '../../proto-files';
export {
  heldVersions,
  type DeltaDiscoveryRequest,
  type HeldVersions,
  type NodeMessage,
  type ProtoStruct,
  type ProtoValue,
  type StatusMessage,
} from '../wire/messages';

export const ADS_SERVICE = 'envoy.service.discovery.v3.AggregatedDiscoveryService';
export const DELTA_METHOD = 'DeltaAggregatedResources';
/** State of the World: istioctl's debug queries only (sotw-stream.ts); ztunnel uses Delta. */
export const SOTW_METHOD = 'StreamAggregatedResources';

/** Loads .proto files from proto/ (e.g. "xds.proto", "workload.proto"). */
export function loadProtos(files: string[]): protoLoader.PackageDefinition {
  const dir = protoDir();
  return protoLoader.loadSync(
    files.map((f) => path.join(dir, f)),
    { ...PROTO_LOADER_OPTIONS, includeDirs: [dir] },
  );
}

let cached: grpc.ServiceDefinition | undefined;

/**
 * The ADS service definition for the server: requests are decoded by hand (request-wire.ts),
 * responses are written as the Buffers the server already encoded.
 */
export function adsServiceDefinition(): grpc.ServiceDefinition {
  if (cached) return cached;
  const pkg = loadProtos(['xds.proto']);
  const service = pkg[ADS_SERVICE] as grpc.ServiceDefinition | undefined;
  const method = service?.[DELTA_METHOD];
  const sotw = service?.[SOTW_METHOD];
  if (!method || !sotw) throw new Error(`${ADS_SERVICE}.${DELTA_METHOD}/${SOTW_METHOD} not found in proto/xds.proto`);
  cached = {
    [DELTA_METHOD]: {
      ...method,
      requestDeserialize: decodeDeltaRequest,
      responseSerialize: serializeOutgoing,
    },
    [SOTW_METHOD]: {
      ...sotw,
      requestDeserialize: decodeSotwRequest,
      // Responses are encoded when built (sotw-wire.ts).
      responseSerialize: (body: Buffer) => body,
    },
  };
  return cached;
}
