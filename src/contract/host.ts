// What the process that hosts a component offers it: gRPC registration, readiness, /debug
// endpoints. The server implements these; components depend on them and never on the server,
// so the server stays the composition root that nothing imports.

import type * as grpc from '@grpc/grpc-js';

export type GrpcPort = 'plaintext' | 'secure';
export type GrpcPorts = GrpcPort | 'both';

export interface GrpcRegistrar {
  /**
   * Adds a service to the plaintext server, the TLS server, or both. An implementation given as a
   * function is made once per port, so it knows which port its calls come on.
   */
  addService(
    service: grpc.ServiceDefinition,
    implementation: grpc.UntypedServiceImplementation | ((port: GrpcPort) => grpc.UntypedServiceImplementation),
    ports: GrpcPorts,
  ): void;
  /** True when secureGRPCAddr is enabled; the CA moves to the plaintext port when it is not. */
  secureEnabled: boolean;
  /**
   * Destroys the connection of a call, found by the call's getPeer(): false when no open
   * connection has that peer address.
   */
  closeConnection(peer: string): boolean;
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
  /** Extra response headers (a paged list's next page, see debug-page.ts). */
  headers?: Readonly<Record<string, string>>;
}

export interface DebugRegistry {
  /** Registers a /debug/<name> endpoint (the index page lists it with its description). */
  add(name: string, description: string, handler: (req: DebugRequest) => DebugResponse | Promise<DebugResponse>): void;
}

/** Registers a hook that runs on shutdown, in reverse order of registration. */
export type OnShutdown = (hook: () => void | Promise<void>) => void;
