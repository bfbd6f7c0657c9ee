// What the server hands to each component it wires. Each interface lives with its owner (the
// host contract, the serving certificate, leadership, authentication); this file only composes
// them, and re-exports them for the server's own files and tests.

import type { Registry } from 'prom-client';
import type { ServeOptions } from '../config/options';
import type { ObjectStore } from '../store/types';
import type { MeshConfigSource } from '../mesh/types';
import type { DebugRegistry, GrpcRegistrar, OnShutdown, Readiness } from '../contract/host';
import type { ServingCertSink } from '../contract/serving-cert';
import type { LeaderElector } from '../contract/leader';

export type { DebugRegistry, DebugRequest, DebugResponse, GrpcPorts, GrpcRegistrar, OnShutdown, Readiness } from '../contract/host';
export type { ServingCertificate, ServingCertSink, ServingCertSource } from '../contract/serving-cert';
export type { LeaderElector } from '../contract/leader';
export type { CallAuthenticator, CallerIdentity } from '../security/identity';

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
  onShutdown: OnShutdown;
}
