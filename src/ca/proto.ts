// Loads proto/citadel.proto once: the IstioCertificateService definition and its message shapes.

import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_LOADER_OPTIONS, protoDir } from '../proto-files';

export const CA_SERVICE_NAME = 'istio.v1.auth.IstioCertificateService';

/** A google.protobuf.Value as proto-loader decodes it (oneofs: true). */
export interface StructValue {
  kind?: string;
  stringValue?: string;
  [field: string]: unknown;
}

export interface IstioCertificateRequest {
  csr: string;
  /** int64 as a decimal string (proto-loader longs: String), so huge values stay exact. */
  validity_duration: string;
  metadata: { fields?: Record<string, StructValue> } | null;
}

export interface IstioCertificateResponse {
  cert_chain: string[];
}

let cached: grpc.ServiceDefinition | undefined;

export function certificateServiceDefinition(): grpc.ServiceDefinition {
  if (cached) return cached;
  const pkg = protoLoader.loadSync(path.join(protoDir(), 'citadel.proto'), PROTO_LOADER_OPTIONS);
  const loaded = grpc.loadPackageDefinition(pkg) as unknown as {
    istio: { v1: { auth: { IstioCertificateService: grpc.ServiceClientConstructor } } };
  };
  cached = loaded.istio.v1.auth.IstioCertificateService.service;
  return cached;
}

/** A client constructor, for tests, benchmarks and tools. */
export function certificateServiceClient(): grpc.ServiceClientConstructor {
  return grpc.makeGenericClientConstructor(certificateServiceDefinition(), 'IstioCertificateService');
}
