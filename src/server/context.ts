// What the server hands to each component it wires. Each interface lives with its owner (the
// host contract, the serving certificate, leadership, authentication); this file only composes
// them, and re-exports them for the server's own files and tests.

import type { CaHostDeps } from '../ca/host-deps';
import type { WebhookServerDeps } from '../webhook/server';
import type { XdsHostDeps } from '../xds/host-deps';

export type {
  DebugRegistry,
  DebugRequest,
  DebugResponse,
  GrpcPorts,
  GrpcRegistrar,
  OnShutdown,
  Readiness,
} from '../contract/host';
export type { ServingCertificate, ServingCertSink, ServingCertSource } from '../contract/serving-cert';
export type { LeaderElector } from '../contract/leader';
export type { CallAuthenticator, CallerIdentity } from '../security/identity';

/**
 * Everything the components ask of their host, and no more: the CA's deps are the widest (it
 * reads the store, publishes roots under a lease and issues the serving certificate), and the
 * xDS server and the webhook listener ask for parts of the same. Shutdown hooks run in reverse
 * order of registration.
 */
export type ServerContext = CaHostDeps & XdsHostDeps & WebhookServerDeps;
