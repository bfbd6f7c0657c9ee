// Generates CA certificates (the self-signed root; intermediates in tests) with @peculiar/x509 on
// Node's WebCrypto. This runs once per root, so its JavaScript ASN.1 cost does not matter here.

import 'reflect-metadata';
import * as crypto from 'node:crypto';
import type { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(crypto.webcrypto as never);

export type CaKeyType = 'RSA' | 'ECDSA';

export interface CaCertificateRequest {
  /** Distinguished name, e.g. "O=cluster.local". */
  subject: string;
  keyType: CaKeyType;
  /** RSA modulus size; ignored for ECDSA (always P-256). */
  rsaBits?: number;
  ttlMs: number;
  /** Signs with this CA instead of self-signing (for intermediates). */
  issuer?: { certPem: string; keyPem: string };
  /** pathLenConstraint of BasicConstraints, when limited. */
  pathLength?: number;
  now?: Date;
}

export interface GeneratedCa {
  certPem: string;
  /** PKCS#8 PEM. */
  keyPem: string;
}

/** Certificates of a CA are back-dated like istiod's, so clock skew between hosts does not bite. */
export const CA_BACKDATE_MS = 2 * 60 * 1000;

function algorithmFor(keyType: CaKeyType, rsaBits: number): webcrypto.RsaHashedKeyGenParams | webcrypto.EcKeyGenParams {
  return keyType === 'RSA'
    ? { name: 'RSASSA-PKCS1-v1_5', modulusLength: rsaBits, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }
    : { name: 'ECDSA', namedCurve: 'P-256' };
}

async function importSigningKey(
  keyPem: string,
): Promise<{ key: webcrypto.CryptoKey; signingAlgorithm: webcrypto.Algorithm | webcrypto.EcdsaParams }> {
  const keyObject = crypto.createPrivateKey(keyPem);
  const der = keyObject.export({ format: 'der', type: 'pkcs8' });
  if (keyObject.asymmetricKeyType === 'rsa') {
    const alg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    return { key: await crypto.webcrypto.subtle.importKey('pkcs8', der, alg, false, ['sign']), signingAlgorithm: alg };
  }
  const curve = keyObject.asymmetricKeyDetails?.namedCurve === 'secp384r1' ? 'P-384' : 'P-256';
  const key = await crypto.webcrypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: curve }, false, [
    'sign',
  ]);
  return {
    key,
    signingAlgorithm: { name: 'ECDSA', hash: curve === 'P-384' ? 'SHA-384' : 'SHA-256' } as webcrypto.EcdsaParams,
  };
}

export async function generateCaCertificate(req: CaCertificateRequest): Promise<GeneratedCa> {
  const subtle = crypto.webcrypto.subtle;
  const alg = algorithmFor(req.keyType, req.rsaBits ?? 2048);
  const keys = await subtle.generateKey(alg, true, ['sign', 'verify']);
  const now = req.now ?? new Date();
  const serial = crypto.randomBytes(16);
  serial.writeUInt8(serial.readUInt8(0) & 0x7f, 0); // a positive INTEGER
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(true, req.pathLength, true),
    new x509.KeyUsagesExtension(
      x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
      true,
    ),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
  ];
  const base = {
    serialNumber: serial.toString('hex'),
    notBefore: new Date(now.getTime() - CA_BACKDATE_MS),
    notAfter: new Date(now.getTime() + req.ttlMs),
  };
  let cert: x509.X509Certificate;
  if (req.issuer) {
    const issuerCert = new x509.X509Certificate(req.issuer.certPem);
    const signer = await importSigningKey(req.issuer.keyPem);
    extensions.push(await x509.AuthorityKeyIdentifierExtension.create(issuerCert.publicKey));
    cert = await x509.X509CertificateGenerator.create({
      ...base,
      subject: req.subject,
      issuer: issuerCert.subject,
      publicKey: keys.publicKey,
      signingKey: signer.key,
      signingAlgorithm: signer.signingAlgorithm,
      extensions,
    });
  } else {
    cert = await x509.X509CertificateGenerator.createSelfSigned({
      ...base,
      name: req.subject,
      keys,
      signingAlgorithm: req.keyType === 'RSA' ? alg : ({ name: 'ECDSA', hash: 'SHA-256' } as webcrypto.EcdsaParams),
      extensions,
    });
  }
  const pkcs8 = Buffer.from(await subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = crypto
    .createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })
    .export({ format: 'pem', type: 'pkcs8' }) as string;
  return { certPem: cert.toString('pem') + '\n', keyPem };
}
