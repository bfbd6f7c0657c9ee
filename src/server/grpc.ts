// The two gRPC servers: plaintext on grpcAddr and TLS on secureGRPCAddr. They are separate
// grpc.Server instances because istiod serves different services on each (the CA only on the
// secure port unless that port is disabled).

import * as net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { ListenAddress } from '../config/address';
import { scopedLogger } from '../log/logger';
import { listen } from '../net/http-listener';
import type { GrpcPort, GrpcPorts, GrpcRegistrar } from '../contract/host';
import type { ServingCertSink } from '../contract/serving-cert';
import type { BoundListener } from './http';
import { servingCertCredentials } from '../ca/serving-cert/grpc-credentials';

const log = scopedLogger('server');

/**
 * grpc-js writes its own errors to stderr in a format of its own, which breaks the JSON log
 * stream. They go through our logger instead. Ports are bound by node:net here (serve()), so a
 * failed bind is a ListenError naming the flag, never a grpc-js line.
 */
grpc.setLogger({
  error: (...args: unknown[]) => log.warn({ grpc: args.map(String).join(' ') }, 'grpc-js'),
});

/** A bound gRPC port: close() drains it, forceClose() ends it at the shutdown deadline. */
export interface GrpcListener extends BoundListener {
  forceClose(): void;
}

/**
 * GOAWAY to every connection and no new ones; resolves when every call has finished. Long-lived
 * xDS streams are ended by the xDS server's shutdown hook, which runs alongside.
 */
function drainServer(server: grpc.Server): Promise<void> {
  return new Promise((resolve) => server.tryShutdown(() => resolve()));
}

export class GrpcServers implements GrpcRegistrar {
  readonly plaintext: grpc.Server | undefined;
  readonly secure: grpc.Server | undefined;
  private shuttingDown = false;
  /**
   * Every open connection of both ports, by the peer address grpc-js reports for its calls
   * (`<remoteAddress>:<remotePort>`, getPeer()): how a stream that cannot be reset is cut.
   */
  private readonly connections = new Map<string, net.Socket>();

  constructor(
    private readonly plaintextAddr: ListenAddress | null,
    private readonly secureAddr: ListenAddress | null,
    options: grpc.ServerOptions,
  ) {
    this.plaintext = plaintextAddr ? new grpc.Server(options) : undefined;
    this.secure = secureAddr ? new grpc.Server(options) : undefined;
  }

  get secureEnabled(): boolean {
    return this.secure !== undefined;
  }

  addService(
    service: grpc.ServiceDefinition,
    implementation: grpc.UntypedServiceImplementation | ((port: GrpcPort) => grpc.UntypedServiceImplementation),
    ports: GrpcPorts,
  ): void {
    const forPort = (port: GrpcPort) => (typeof implementation === 'function' ? implementation(port) : implementation);
    if (ports !== 'secure' && this.plaintext) this.plaintext.addService(service, forPort('plaintext'));
    if (ports !== 'plaintext' && this.secure) this.secure.addService(service, forPort('secure'));
  }

  closeConnection(peer: string): boolean {
    const socket = this.connections.get(peer);
    if (!socket) return false;
    socket.destroy();
    return true;
  }

  /** A shutdown has begun: a port still waiting for its certificate must not bind afterwards. */
  stopBinding(): void {
    this.shuttingDown = true;
  }

  async startPlaintext(): Promise<GrpcListener | undefined> {
    if (!this.plaintext || !this.plaintextAddr || this.shuttingDown) return undefined;
    return this.serve('grpc', this.plaintext, this.plaintextAddr, grpc.ServerCredentials.createInsecure());
  }

  /** Binds the TLS port once a serving certificate exists, as istiod starts 15012 after its cert. */
  async startSecure(certs: ServingCertSink): Promise<GrpcListener | undefined> {
    if (!this.secure || !this.secureAddr) return undefined;
    await certs.whenAvailable();
    if (this.shuttingDown) return undefined;
    return this.serve('secure-grpc', this.secure, this.secureAddr, servingCertCredentials(certs));
  }

  /**
   * Listens with node:net and hands each connection to grpc-js through its public connection
   * injector (TLS, when the credentials have it, is grpc-js's as with bindAsync), so the server
   * holds every socket itself and can close one by its peer.
   */
  private async serve(
    name: string,
    server: grpc.Server,
    addr: ListenAddress,
    creds: grpc.ServerCredentials,
  ): Promise<GrpcListener> {
    const injector = server.createConnectionInjector(creds);
    const sockets = new Set<net.Socket>();
    const tcp = net.createServer((socket) => {
      const peer = `${socket.remoteAddress ?? ''}:${socket.remotePort ?? ''}`;
      sockets.add(socket);
      this.connections.set(peer, socket);
      socket.once('close', () => {
        sockets.delete(socket);
        if (this.connections.get(peer) === socket) this.connections.delete(peer);
      });
      injector.injectConnection(socket);
    });
    const bound = await listen(name, tcp, addr, { logger: log });
    const stopAccepting = () => new Promise<void>((resolve) => tcp.close(() => resolve()));
    return {
      ...bound,
      close: async () => {
        await Promise.all([stopAccepting(), drainServer(server)]);
      },
      forceClose: () => {
        tcp.close();
        server.forceShutdown();
        for (const socket of sockets) socket.destroy();
      },
    };
  }
}
