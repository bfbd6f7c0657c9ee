// grpc-js server credentials fed by a ServingCertSource: new handshakes pick up a renewed
// certificate or root without restarting the server or dropping open connections. Client
// certificates are requested but optional (ztunnel sends none); when one is sent, TLS verifies it
// against the mesh roots and the CallAuthenticator reads it from the call's auth context.

import * as grpc from '@grpc/grpc-js';
import type { ServingCertSource, ServingCertificate } from '../../contract/serving-cert';

type IdentityListener = grpc.experimental.IdentityCertificateUpdateListener;
type CaListener = grpc.experimental.CaCertificateUpdateListener;

/** One provider for both roles, so grpc-js argument order cannot mix them up. */
class ServingCertProvider implements grpc.experimental.CertificateProvider {
  private readonly identity = new Set<IdentityListener>();
  private readonly ca = new Set<CaListener>();
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly source: ServingCertSource) {}

  private currentOrNull(): ServingCertificate | null {
    try {
      return this.source.current();
    } catch {
      return null;
    }
  }

  private ensureSubscribed(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = this.source.onChange((cert) => {
      for (const l of this.ca) l({ caCertificate: Buffer.from(cert.rootsPem) });
      for (const l of this.identity)
        l({ certificate: Buffer.from(cert.certChainPem), privateKey: Buffer.from(cert.privateKeyPem) });
    });
  }

  private maybeUnsubscribe(): void {
    if (this.identity.size === 0 && this.ca.size === 0) {
      this.unsubscribe?.();
      this.unsubscribe = undefined;
    }
  }

  addCaCertificateListener(listener: CaListener): void {
    this.ca.add(listener);
    this.ensureSubscribed();
    // grpc-js adds its own watcher only after registering with the provider; an update delivered
    // synchronously here would never reach the server, so the first one is deferred.
    queueMicrotask(() => {
      const cert = this.currentOrNull();
      if (cert && this.ca.has(listener)) listener({ caCertificate: Buffer.from(cert.rootsPem) });
    });
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.ca.delete(listener);
    this.maybeUnsubscribe();
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identity.add(listener);
    this.ensureSubscribed();
    queueMicrotask(() => {
      const cert = this.currentOrNull();
      if (cert && this.identity.has(listener))
        listener({ certificate: Buffer.from(cert.certChainPem), privateKey: Buffer.from(cert.privateKeyPem) });
    });
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identity.delete(listener);
    this.maybeUnsubscribe();
  }
}

/**
 * Server credentials for secureGRPCAddr: the serving certificate from `source`, client
 * certificates requested but not required, verified against `rootsPem` when presented.
 */
export function servingCertCredentials(source: ServingCertSource): grpc.ServerCredentials {
  const provider = new ServingCertProvider(source);
  return grpc.experimental.createCertificateProviderServerCredentials(provider, provider, false);
}
