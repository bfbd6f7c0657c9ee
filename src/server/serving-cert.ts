// The holder of istiod's serving certificate: the CA (or a test) sets it, TLS listeners read it.

import type { ServingCertificate, ServingCertSink } from '../contract/serving-cert';

export class ServingCertHolder implements ServingCertSink {
  private cert: ServingCertificate | undefined;
  private readonly listeners = new Set<(cert: ServingCertificate) => void>();
  private waiters: ((cert: ServingCertificate) => void)[] = [];

  current(): ServingCertificate {
    if (!this.cert) throw new Error('no serving certificate yet: the CA has not issued one');
    return this.cert;
  }

  set(cert: ServingCertificate): void {
    this.cert = cert;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(cert);
    for (const l of this.listeners) l(cert);
  }

  whenAvailable(): Promise<ServingCertificate> {
    if (this.cert) return Promise.resolve(this.cert);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  onChange(listener: (cert: ServingCertificate) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
