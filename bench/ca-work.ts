// The CA's own work for one certificate, bare, as the CA bench's floors do it: the CSR check the
// signing worker runs and a leaf TBSCertificate for the root's key to sign.

import * as crypto from 'node:crypto';
import type { ParsedCsr } from '../src/ca/signing/csr';
import { LeafSigner } from '../src/ca/signing/leaf-signer';
import type { CaKeyMaterial } from '../src/ca/signing/key-material';

/**
 * Imports the CSR's public key from the JWK the parser builds and verifies its signature, as the
 * signing worker does; throws if it does not verify (the bench's CSRs always should).
 */
export function checkCsr(c: ParsedCsr): void {
  const key = crypto.createPublicKey({ key: c.jwk!, format: 'jwk' });
  if (!crypto.verify(c.hash, c.signedData, key, c.signature)) throw new Error('a generated CSR did not verify');
}

/** A day-long leaf for `uri` with the CSR's key, ready for the root's key to sign. */
export function sampleLeafTbs(material: CaKeyMaterial, csr: ParsedCsr, uri: string): Buffer {
  return new LeafSigner(material.signingCert.raw, material.signingKey).buildTbs(
    { spki: csr.spki, sans: [{ uri }], notBefore: new Date(), notAfter: new Date(Date.now() + 86400_000) },
    crypto.randomBytes(16),
  );
}
