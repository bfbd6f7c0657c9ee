// The signing authority: the current key material and its leaf signer, swapped atomically when a
// plugged-in CA rotates, plus the response chain istiod returns.

import type * as crypto from 'node:crypto';
import { CaKeyMaterial, meshIssuers } from './key-material';
import { IssuedLeaf, LeafSigner, SanEntry } from './leaf-signer';

/** NotBefore is back-dated like istiod's, so peers with a slow clock accept fresh certificates. */
export const NOT_BEFORE_BACKDATE_MS = 2 * 60 * 1000;

export interface IssuedCertificate extends IssuedLeaf {
  /** Leaf, each intermediate of cert-chain.pem, then the root bundle: ztunnel's cert_chain. */
  chain: string[];
}

export class CertificateAuthority {
  private material!: CaKeyMaterial;
  private signer!: LeafSigner;
  private issuers: crypto.X509Certificate[] = [];
  private readonly listeners = new Set<(m: CaKeyMaterial) => void>();

  constructor(material: CaKeyMaterial) {
    this.setMaterial(material);
  }

  setMaterial(material: CaKeyMaterial): void {
    const signer = new LeafSigner(material.signingCert.raw, material.signingKey);
    this.material = material;
    this.signer = signer;
    this.issuers = meshIssuers(material);
    for (const l of this.listeners) l(material);
  }

  current(): CaKeyMaterial {
    return this.material;
  }

  rootBundlePem(): string {
    return this.material.rootBundlePem;
  }

  meshIssuers(): readonly crypto.X509Certificate[] {
    return this.issuers;
  }

  /** Latest moment any issued certificate may be valid until. */
  notAfterLimit(): Date {
    return this.signer.notAfterLimit;
  }

  /** Returns an unsubscribe function; listeners hear every key material change. */
  onChange(listener: (m: CaKeyMaterial) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async issue(spki: Buffer, sans: readonly SanEntry[], ttlMs: number, now = Date.now()): Promise<IssuedCertificate> {
    const material = this.material;
    const leaf = await this.signer.sign({
      spki,
      sans,
      notBefore: new Date(now - NOT_BEFORE_BACKDATE_MS),
      notAfter: new Date(now + ttlMs),
    });
    return { ...leaf, chain: [leaf.pem, ...material.chainPems, material.rootBundlePem] };
  }
}
