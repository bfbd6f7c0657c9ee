// /debug/ca: what the CA signs with and what it serves, as public facts only. The private key is
// never part of it (nor of logs, metrics or errors).

import * as crypto from 'node:crypto';
import type { DebugRegistry, DebugResponse } from '../contract/host';
import type { ServingCertSource } from '../contract/serving-cert';
import type { CertificateAuthority } from './authority';

function describe(cert: crypto.X509Certificate) {
  return { subject: cert.subject, issuer: cert.issuer, notBefore: cert.validFrom, notAfter: cert.validTo, serial: cert.serialNumber, sha256: cert.fingerprint256 };
}

export function caDebugView(authority: CertificateAuthority, ctx: { servingCerts: ServingCertSource }): DebugResponse {
  const m = authority.current();
  let serving: unknown = null;
  try {
    const leafPem = ctx.servingCerts.current().certChainPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/)?.[0];
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
      roots: m.roots.map(describe),
      servingCertificate: serving,
    },
  };
}

export function registerCaDebug(ctx: { debug: DebugRegistry; servingCerts: ServingCertSource }, authority: CertificateAuthority): void {
  ctx.debug.add('ca', 'mesh CA: key source, signing certificate, chain, roots and serving certificate (public facts only)', () => caDebugView(authority, ctx));
}
