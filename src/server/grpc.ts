// The two gRPC servers: plaintext on grpcAddr and TLS on secureGRPCAddr. They are separate
// grpc.Server instances because istiod serves different services on each (the CA only on the
// secure port unless that port is disabled).

import * as grpc from '@grpc/grpc-js';
import type { ListenAddress } from '../config/address';
import { formatAddress } from '../config/address';
import { scopedLogger } from '../log/logger';
import { bindErrorCode, ListenError } from '../net/listen-error';
import type { GrpcPorts, GrpcRegistrar } from '../contract/host';
import type { ServingCertSink } from '../contract/serving-cert';
import type { BoundListener } from './http';
import { servingCertCredentials } from '../ca/serving-cert/grpc-credentials';

const log = scopedLogger('server');

/**
 * grpc-js writes its own errors to stderr in a format of its own, which breaks the JSON log
 * stream. They go through our logger instead; a failed bind is reported by the process as one
 * line naming the flag (ListenError), so grpc-js's own line about it is only debug detail.
 */
grpc.setLogger({
  error: (...args: unknown[]) => {
    const message = args.map(String).join(' ');
    if (/No address added/.test(message)) log.debug({ grpc: message }, 'grpc-js');
    else log.warn({ grpc: message }, 'grpc-js');
  },
});

async function bind(
  name: string,
  server: grpc.Server,
  addr: ListenAddress,
  creds: grpc.ServerCredentials,
): Promise<number> {
  const tryBind = (host: string) =>
    new Promise<number>((resolve, reject) =>
      server.bindAsync(formatAddress(host, addr.port), creds, (err, port) =>
        err
          ? reject(new ListenError(name, formatAddress(host, addr.port), bindErrorCode(err), err.message))
          : resolve(port),
      ),
    );
  if (addr.host !== '') return tryBind(addr.host);
  // ":15010" means every interface; prefer dual-stack, fall back where IPv6 is off.
  try {
    return await tryBind('::');
  } catch {
    return tryBind('0.0.0.0');
  }
}

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
    implementation: grpc.UntypedServiceImplementation,
    ports: GrpcPorts,
  ): void {
    if (ports !== 'secure' && this.plaintext) this.plaintext.addService(service, implementation);
    if (ports !== 'plaintext' && this.secure) this.secure.addService(service, implementation);
  }

  /** A shutdown has begun: a port still waiting for its certificate must not bind afterwards. */
  stopBinding(): void {
    this.shuttingDown = true;
  }

  async startPlaintext(): Promise<GrpcListener | undefined> {
    if (!this.plaintext || !this.plaintextAddr || this.shuttingDown) return undefined;
    const port = await bind('grpc', this.plaintext, this.plaintextAddr, grpc.ServerCredentials.createInsecure());
    return this.listener('grpc', this.plaintextAddr, port, this.plaintext);
  }

  /** Binds the TLS port once a serving certificate exists, as istiod starts 15012 after its cert. */
  async startSecure(certs: ServingCertSink): Promise<GrpcListener | undefined> {
    if (!this.secure || !this.secureAddr) return undefined;
    await certs.whenAvailable();
    if (this.shuttingDown) return undefined;
    const port = await bind('secure-grpc', this.secure, this.secureAddr, servingCertCredentials(certs));
    return this.listener('secure-grpc', this.secureAddr, port, this.secure);
  }

  private listener(name: string, addr: ListenAddress, port: number, server: grpc.Server): GrpcListener {
    const address = formatAddress(addr.host === '' ? '::' : addr.host, port);
    log.info({ listener: name, address, port }, 'listening');
    return {
      name,
      address,
      port,
      close: () => drainServer(server),
      // Cancels what is left (RST_STREAM CANCEL): only streams that outlived the drain window.
      forceClose: () => server.forceShutdown(),
    };
  }
}
