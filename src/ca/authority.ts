// The signing authority: the current key material and its leaf signer, swapped atomically when a
// plugged-in CA rotates, plus the response chain istiod returns.

import type * as crypto from 'node:crypto';
import { ParsedCsr, checkVerified, verifyJob } from './csr';
import { CsrVerifierPool, sharedCsrVerifierPool } from './csr-verifier-pool';
import { CaKeyMaterial, meshIssuers } from './key-material';
import { IssuedLeaf, LeafRequest, LeafSigner, SanEntry } from './leaf-signer';

/** NotBefore is back-dated like istiod's, so peers with a slow clock accept fresh certificates. */
export const NOT_BEFORE_BACKDATE_MS = 2 * 60 * 1000;
/**
 * How long the workers keep a replaced CA key: certificates prepared under it just before a
 * rotation are still signed with it rather than failing.
 */
export const RETIRED_KEY_GRACE_MS = 60_000;

export interface IssuedCertificate extends IssuedLeaf {
  /** Leaf, each intermediate of cert-chain.pem, then the root bundle: ztunnel's cert_chain. */
  chain: string[];
}

export class CertificateAuthority {
  private material!: CaKeyMaterial;
  private signer!: LeafSigner;
  /** The pool's handle for the current signing key. */
  private keyHandle: number | undefined;
  private issuers: crypto.X509Certificate[] = [];
  private readonly listeners = new Set<(m: CaKeyMaterial) => void>();

  constructor(
    material: CaKeyMaterial,
    private readonly pool: CsrVerifierPool = sharedCsrVerifierPool(),
  ) {
    this.setMaterial(material);
  }

  setMaterial(material: CaKeyMaterial): void {
    const signer = new LeafSigner(material.signingCert.raw, material.signingKey);
    const retired = this.keyHandle;
    this.keyHandle = this.pool.registerKey(material.signingKey);
    if (retired !== undefined) setTimeout(() => this.pool.forgetKey(retired), RETIRED_KEY_GRACE_MS).unref();
    this.material = material;
    this.signer = signer;
    this.issuers = meshIssuers(material);
    for (const l of this.listeners) l(material);
  }

  /** Signing worker threads behind this authority (the fair queue sizes its slots by them). */
  get signingWorkers(): number {
    return this.pool.workers;
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

  /** Issues a certificate for a key that needs no proof of possession (istiod's own). */
  async issue(spki: Buffer, sans: readonly SanEntry[], ttlMs: number, now = Date.now()): Promise<IssuedCertificate> {
    const material = this.material;
    const leaf = await this.signer.sign(leafRequest(spki, sans, ttlMs, now));
    return { ...leaf, chain: [leaf.pem, ...material.chainPems, material.rootBundlePem] };
  }

  /**
   * Verifies the CSR's own signature and signs its certificate in one worker job. Throws CsrError
   * when the CSR does not verify (the caller's fault); any other error is the CA's. `lane` names
   * the requesting node, so the workers serve nodes round-robin.
   */
  async issueForCsr(
    csr: ParsedCsr,
    sans: readonly SanEntry[],
    ttlMs: number,
    now = Date.now(),
    lane?: string,
  ): Promise<IssuedCertificate> {
    const { material, signer, keyHandle } = this;
    // setMaterial, called by the constructor, always registers a key.
    if (keyHandle === undefined) throw new Error('the CA has no signing key registered');
    const prepared = signer.prepare(leafRequest(csr.spki, sans, ttlMs, now));
    const outcome = await this.pool.verify(
      verifyJob(csr),
      { key: keyHandle, hash: signer.signingHash, tbs: prepared.tbs },
      lane,
    );
    checkVerified(outcome);
    if (!outcome.certificateSignature) throw new Error(outcome.error ?? 'the signing worker returned no signature');
    const leaf = signer.assemble(prepared, outcome.certificateSignature);
    return { ...leaf, chain: [leaf.pem, ...material.chainPems, material.rootBundlePem] };
  }
}

function leafRequest(spki: Buffer, sans: readonly SanEntry[], ttlMs: number, now: number): LeafRequest {
  return { spki, sans, notBefore: new Date(now - NOT_BEFORE_BACKDATE_MS), notAfter: new Date(now + ttlMs) };
}
