// istiod's own TLS certificate, as a value that changes: the CA (or a test) writes it, the TLS
// listeners (secure gRPC, webhook) and the webhook configuration controller read it.

/** Key material for istiod's own TLS listeners (secureGRPCAddr, httpsAddr). */
export interface ServingCertificate {
  certChainPem: string;
  privateKeyPem: string;
  /** Roots that client certificates must chain to (the mesh roots). */
  rootsPem: string;
  /**
   * What clients of istiod must trust to reach it (the webhooks' caBundle), when that is not the
   * mesh roots: the CA of a certificate read from --tlsCertFile.
   */
  servingCaPem?: string;
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
