// The signing authority: the current key material and its leaf signer, swapped atomically when a
// plugged-in CA rotates, plus the response chain istiod returns. The trust bundle it serves is the
// material's roots and the other root of a self-signed rotation (root-rotation.ts), combined once
// per change so signing only reads a reference. meshConfig caCertificates are not in it, as in
// istiod (mesh-trust-anchors.ts).

import * as crypto from 'node:crypto';
import { ParsedCsr, checkVerified, verifyJob } from './csr';
import { CsrVerifierPool, sharedCsrVerifierPool } from './csr-verifier-pool';
import { CaKeyMaterial, meshIssuers, splitPemCertificates } from './key-material';
import { IssuedLeaf, IssuerValidityError, LeafRequest, LeafSigner, SanEntry } from './leaf-signer';

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
  /** What signs, as loaded. */
  private signing!: CaKeyMaterial;
  /**
   * `signing` with a rotation's other root among its roots: what this CA itself vouches for (the
   * serving certificate's roots, hence the webhook caBundle, and /debug/ca), and the trust bundle
   * peers are given at the end of every chain.
   */
  private material!: CaKeyMaterial;
  /** The other root of a rotation in progress: trusted, and an issuer of valid mesh certificates. */
  private rotationRoots: readonly string[] = [];
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

  /** Replaces what signs; `rotationRoots` are the other roots of a rotation in progress. */
  setMaterial(material: CaKeyMaterial, rotationRoots: readonly string[] = []): void {
    const signer = new LeafSigner(material.signingCert.raw, material.signingKey, material.validity);
    const retired = this.keyHandle;
    this.keyHandle = this.pool.registerKey(material.signingKey);
    if (retired !== undefined) setTimeout(() => this.pool.forgetKey(retired), RETIRED_KEY_GRACE_MS).unref();
    this.signing = material;
    this.signer = signer;
    this.rotationRoots = rotationRoots;
    this.rebuild();
  }

  /**
   * A rotation step: switches the signer only when the signing root changed, so a step that
   * changes the bundle alone keeps the worker's key registration.
   */
  setRotation(material: CaKeyMaterial, rotationRoots: readonly string[]): void {
    if (
      material.signingCertPem === this.signing.signingCertPem &&
      material.rootBundlePem === this.signing.rootBundlePem
    ) {
      if (sameList(rotationRoots, this.rotationRoots)) return;
      this.rotationRoots = rotationRoots;
      this.rebuild();
      return;
    }
    this.setMaterial(material, rotationRoots);
  }

  /** The material as loaded (its own roots only): what a plugged-in CA watcher compares against. */
  signingMaterial(): CaKeyMaterial {
    return this.signing;
  }

  private rebuild(): void {
    const own = splitPemCertificates(this.signing.rootBundlePem);
    const rotation = this.rotationRoots.flatMap(splitPemCertificates);
    const vouched = [...new Set([...own, ...rotation])];
    const parsed = new Map(this.signing.roots.map((r, i) => [own[i] ?? '', r]));
    const roots = vouched.map((pem) => parsed.get(pem) ?? new crypto.X509Certificate(pem));
    this.material = { ...this.signing, rootBundlePem: vouched.join(''), roots };
    this.issuers = [
      ...meshIssuers(this.signing),
      ...rotation.filter((pem) => !own.includes(pem)).map((pem) => new crypto.X509Certificate(pem)),
    ];
    for (const l of this.listeners) l(this.material);
  }

  /** Signing worker threads behind this authority (the fair queue sizes its slots by them). */
  get signingWorkers(): number {
    return this.pool.workers;
  }

  current(): CaKeyMaterial {
    return this.material;
  }

  /** The trust bundle peers are given: the CA's roots (and a rotation's other root). */
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
    const { material } = this;
    const leaf = await this.signer.sign(leafRequest(spki, sans, ttlMs, now));
    return { ...leaf, chain: [leaf.pem, ...material.chainPems, material.rootBundlePem] };
  }

  /**
   * Whether issueForCsr with this `alone`, called now in the same synchronous run, signs on the
   * event loop rather than on a worker (csr-verifier-pool.ts inlineReady).
   */
  signsInline(alone: boolean): boolean {
    return this.pool.inlineReady(alone);
  }

  /**
   * Verifies the CSR's own signature and signs its certificate in one worker job. Throws CsrError
   * when the CSR does not verify (the caller's fault); any other error is the CA's. `lane` names
   * the requesting node, so the workers serve nodes round-robin; `alone` (the node's only call) may
   * run it on the event loop instead (csr-verifier-pool.ts, INLINE_SHARE).
   */
  async issueForCsr(
    csr: ParsedCsr,
    sans: readonly SanEntry[],
    ttlMs: number,
    now = Date.now(),
    lane?: string,
    alone = false,
  ): Promise<IssuedCertificate> {
    const { material, signer, keyHandle } = this;
    // setMaterial, called by the constructor, always registers a key.
    if (keyHandle === undefined) throw new Error('the CA has no signing key registered');
    // istiod's refusal: past its signer's end the CA issues nothing (not even a born-expired leaf).
    if (now >= signer.notAfterLimit.getTime())
      throw new IssuerValidityError(`signing certificate has expired at ${signer.notAfterLimit.toISOString()}`);
    const prepared = signer.prepare(leafRequest(csr.spki, sans, ttlMs, now));
    const outcome = await this.pool.verify(
      verifyJob(csr),
      { key: keyHandle, hash: signer.signingHash, tbs: prepared.tbs },
      lane,
      alone,
    );
    checkVerified(outcome);
    if (!outcome.certificateSignature) throw new Error(outcome.error ?? 'the signing worker returned no signature');
    const leaf = signer.assemble(prepared, outcome.certificateSignature);
    return { ...leaf, chain: [leaf.pem, ...material.chainPems, material.rootBundlePem] };
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function leafRequest(spki: Buffer, sans: readonly SanEntry[], ttlMs: number, now: number): LeafRequest {
  return { spki, sans, notBefore: new Date(now - NOT_BEFORE_BACKDATE_MS), notAfter: new Date(now + ttlMs) };
}
