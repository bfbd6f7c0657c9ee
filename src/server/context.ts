// What the server hands to each component it wires: the seams between process wiring and the
// domain packages. Components depend on these interfaces, never on the listeners themselves.

import type * as grpc from '@grpc/grpc-js';
import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';
import type { Registry } from 'prom-client';
import type { ServeOptions } from '../config/options';
import type { ObjectStore } from '../store/types';
import type { MeshConfigSource } from '../mesh/types';

/** Key material for istiod's own TLS listeners (secureGRPCAddr, httpsAddr). */
export interface ServingCertificate {
  certChainPem: string;
  privateKeyPem: string;
  /** Roots that client certificates must chain to (the mesh roots). */
  rootsPem: string;
}

/**
 * Where the TLS listeners get their certificate. The CA fills it with a certificate it issues;
 * tests fill it with one they generate. A change reaches new handshakes without a restart.
 */
export interface ServingCertSource {
  current(): ServingCertificate;
  /** Returns an unsubscribe function. */
  onChange(listener: (cert: ServingCertificate) => void): () => void;
}

/** The writable side, held by whoever issues istiod's certificate (the CA; tests). */
export interface ServingCertSink extends ServingCertSource {
  set(cert: ServingCertificate): void;
  /** Resolves once a certificate has been set; TLS listeners start after it. */
  whenAvailable(): Promise<ServingCertificate>;
}

/** Who is calling, as decided by authentication (client certificate or bearer token). */
export interface CallerIdentity {
  /** SPIFFE ids, e.g. spiffe://cluster.local/ns/istio-system/sa/ztunnel. */
  identities: string[];
  namespace: string;
  serviceAccount: string;
  /** From the token's pod claims (TokenReview user.extra or the local token); absent for certificates. */
  podName?: string;
  podUid?: string;
  via: 'certificate' | 'token';
}

/** Authenticates a gRPC call; rejects with an error whose message is the exact reason (for logs). */
export interface CallAuthenticator {
  authenticate(call: ServerSurfaceCall): Promise<CallerIdentity>;
}

export type GrpcPorts = 'plaintext' | 'secure' | 'both';

export interface GrpcRegistrar {
  /** Adds a service to the plaintext server, the TLS server, or both. */
  addService(service: grpc.ServiceDefinition, implementation: grpc.UntypedServiceImplementation, ports: GrpcPorts): void;
  /** True when secureGRPCAddr is enabled; the CA moves to the plaintext port when it is not. */
  secureEnabled: boolean;
}

/** A named readiness condition shown by /ready until it is satisfied. */
export interface Readiness {
  /** `detail` lists what the component still waits for; /ready shows it. */
  register(component: string, detail?: () => readonly string[]): (ready: boolean) => void;
}

export interface DebugRequest {
  path: string;
  query: URLSearchParams;
  method: string;
  body: string;
}

export interface DebugResponse {
  status?: number;
  /** Serialised as JSON unless a string. */
  body: unknown;
  contentType?: string;
}

export interface DebugRegistry {
  /** Registers a /debug/<name> endpoint (the index page lists it with its description). */
  add(name: string, description: string, handler: (req: DebugRequest) => DebugResponse | Promise<DebugResponse>): void;
}

/** Runs singleton controllers only while this replica leads; local mode always leads. */
export interface LeaderElector {
  /** Starts `run` when leadership of `lease` is gained; calls the returned stop when it is lost. */
  runWhileLeader(lease: string, run: () => (() => void | Promise<void>)): void;
}

export interface ServerContext {
  options: ServeOptions;
  store: ObjectStore;
  mesh: MeshConfigSource;
  metrics: Registry;
  grpc: GrpcRegistrar;
  readiness: Readiness;
  debug: DebugRegistry;
  servingCerts: ServingCertSink;
  leader: LeaderElector;
  /** Runs on shutdown, in reverse order of registration. */
  onShutdown(hook: () => void | Promise<void>): void;
}
