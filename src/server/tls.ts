// TLS credentials for the gRPC server that follow the serving certificate: when the CA renews
// istiod's certificate (or the mesh roots change), new handshakes use the new material and open
// connections are left alone.

import * as grpc from '@grpc/grpc-js';
import type {
  CaCertificateUpdateListener,
  CertificateProvider,
  IdentityCertificateUpdateListener,
} from '@grpc/grpc-js/build/src/certificate-provider';
import type { ServingCertificate, ServingCertSource } from './context';

/** Adapts a ServingCertSource to grpc-js' certificate-provider interface. */
export class ServingCertProvider implements CertificateProvider {
  private readonly caListeners = new Set<CaCertificateUpdateListener>();
  private readonly identityListeners = new Set<IdentityCertificateUpdateListener>();
  private readonly unsubscribe: () => void;

  constructor(private readonly source: ServingCertSource) {
    this.unsubscribe = source.onChange((cert) => this.publish(cert));
  }

  private publish(cert: ServingCertificate): void {
    for (const l of this.caListeners) l({ caCertificate: Buffer.from(cert.rootsPem) });
    for (const l of this.identityListeners) {
      l({ certificate: Buffer.from(cert.certChainPem), privateKey: Buffer.from(cert.privateKeyPem) });
    }
  }

  addCaCertificateListener(listener: CaCertificateUpdateListener): void {
    this.caListeners.add(listener);
    listener({ caCertificate: Buffer.from(this.source.current().rootsPem) });
  }

  removeCaCertificateListener(listener: CaCertificateUpdateListener): void {
    this.caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: IdentityCertificateUpdateListener): void {
    this.identityListeners.add(listener);
    const cert = this.source.current();
    listener({ certificate: Buffer.from(cert.certChainPem), privateKey: Buffer.from(cert.privateKeyPem) });
  }

  removeIdentityCertificateListener(listener: IdentityCertificateUpdateListener): void {
    this.identityListeners.delete(listener);
  }

  close(): void {
    this.unsubscribe();
  }
}

/**
 * Server credentials like istiod's secure gRPC port: istiod's certificate, and a client
 * certificate requested and verified against the mesh roots if the client offers one
 * (VerifyClientCertIfGiven). A call whose certificate did not verify has no peer certificate in
 * its auth context and must authenticate with a token instead.
 * The source must already hold a certificate.
 */
export function servingCredentials(source: ServingCertSource): { credentials: grpc.ServerCredentials; provider: ServingCertProvider } {
  const provider = new ServingCertProvider(source);
  // grpc-js takes the identity provider first, whatever its parameter name says.
  const credentials = grpc.experimental.createCertificateProviderServerCredentials(provider, provider, false);
  return { credentials, provider };
}
