// The Delta ADS service of an XdsServer on a TLS gRPC server on loopback, as the xDS benches serve it.

import * as grpc from '@grpc/grpc-js';
import type { CallAuthenticator, CallerIdentity } from '../src/security/identity';
import type { XdsServer } from '../src/xds/server';
import { adsServiceDefinition } from '../src/xds/grpc/proto';
import type { TestPki } from '../test/support/tls';

export async function serveAds(
  xds: XdsServer,
  pki: TestPki,
  options: grpc.ServerOptions = {},
): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server(options);
  server.addService(adsServiceDefinition(), xds.implementation('secure'));
  const creds = grpc.ServerCredentials.createSsl(
    null,
    [{ cert_chain: Buffer.from(pki.certPem), private_key: Buffer.from(pki.keyPem) }],
    false,
  );
  const port = await new Promise<number>((res, rej) =>
    server.bindAsync('127.0.0.1:0', creds, (e, p) => (e ? rej(e) : res(p))),
  );
  return { server, port };
}

/** Accepts `Bearer <token>` as the ztunnel of istio-system, as the xDS benches' clients present it. */
export function ztunnelTokenAuthenticator(token: string): CallAuthenticator {
  return {
    authenticate(call): Promise<CallerIdentity> {
      if (call.metadata.get('authorization')[0] !== `Bearer ${token}`) return Promise.reject(new Error('bad token'));
      return Promise.resolve({
        identities: ['spiffe://cluster.local/ns/istio-system/sa/ztunnel'],
        namespace: 'istio-system',
        serviceAccount: 'ztunnel',
        via: 'token',
      });
    },
  };
}
