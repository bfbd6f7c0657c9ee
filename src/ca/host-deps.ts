// What the CA takes from the process that hosts it. The server passes its context, which has all
// of these; tests build only these.

import type { Registry } from 'prom-client';
import type { ServeOptions } from '../config/options';
import type { DebugRegistry, GrpcRegistrar, OnShutdown, Readiness } from '../contract/host';
import type { LeaderElector } from '../contract/leader';
import type { ServingCertSink } from '../contract/serving-cert';
import type { MeshConfigSource } from '../mesh/types';
import type { ObjectStore } from '../store/types';

export interface CaHostDeps {
  options: ServeOptions;
  /** Pods, for the node authorizer; the root-cert publisher's Namespaces and ConfigMaps. */
  store: ObjectStore;
  mesh: MeshConfigSource;
  metrics: Registry;
  grpc: GrpcRegistrar;
  readiness: Readiness;
  debug: DebugRegistry;
  servingCerts: ServingCertSink;
  leader: LeaderElector;
  onShutdown: OnShutdown;
}
