// /debug/ca: what the CA signs with and what it serves, as public facts only. The private key is
// never part of it (nor of logs, metrics or errors).

import * as crypto from 'node:crypto';
import type { DebugRegistry, DebugResponse } from '../contract/host';
import type { ServingCertSource } from '../contract/serving-cert';
import type { CertificateAuthority } from './signing/authority';
import type { NodeFairQueue } from './signing/fair-queue';
import { chainEndReason } from './chain-end';

/** Nodes listed by /debug/ca: the busiest, which is what an operator looks for at 5,000 nodes. */
export const DEBUG_TOP_NODES = 50;

function describe(cert: crypto.X509Certificate) {
  return {
    subject: cert.subject,
    issuer: cert.issuer,
    notBefore: cert.validFrom,
    notAfter: cert.validTo,
    serial: cert.serialNumber,
    sha256: cert.fingerprint256,
  };
}

export function caDebugView(
  authority: CertificateAuthority,
  ctx: { servingCerts: ServingCertSource },
  fairQueue?: NodeFairQueue,
): DebugResponse {
  const m = authority.current();
  let serving: unknown = null;
  try {
    const leafPem = ctx.servingCerts
      .current()
      .certChainPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/)?.[0];
    if (leafPem) {
      const leaf = new crypto.X509Certificate(leafPem);
      serving = { names: leaf.subjectAltName?.split(', ') ?? [], notAfter: leaf.validTo, sha256: leaf.fingerprint256 };
    }
  } catch {
    serving = null;
  }
  return {
    body: {
      source: m.source,
      signer: { ...describe(m.signingCert), keyType: m.signingKey.asymmetricKeyType },
      intermediates: m.chainPems.map((p) => describe(new crypto.X509Certificate(p))),
      // What every certificate it issues must lie within; `cannotIssue` says why once it has ended.
      issuable: {
        notBefore: m.validity.notBefore.toISOString(),
        notAfter: m.validity.notAfter.toISOString(),
        cannotIssue: chainEndReason(authority) ?? null,
      },
      roots: m.roots.map(describe),
      servingCertificate: serving,
      // Per-node queue depth and recent rate of the CSR fair queue, busiest nodes first.
      fairness: fairQueue ? fairQueue.view(DEBUG_TOP_NODES) : null,
    },
  };
}

export function registerCaDebug(
  ctx: { debug: DebugRegistry; servingCerts: ServingCertSource },
  authority: CertificateAuthority,
  fairQueue?: NodeFairQueue,
): void {
  ctx.debug.add(
    'ca',
    'mesh CA: key source, signing certificate, chain, roots, serving certificate (public facts only) and per-node CSR queues',
    () => caDebugView(authority, ctx, fairQueue),
  );
}
