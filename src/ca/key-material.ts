// The CA's key material, however it was obtained (self-signed or plugged in), checked once when
// loaded: the signing certificate is a CA, its key matches, and the roots parse. Error messages
// name files and facts, never key bytes.

import * as crypto from 'node:crypto';

export interface CaFiles {
  caCertPem: string;
  caKeyPem: string;
  /** Intermediates from the signing certificate towards the root; empty for a self-signed root. */
  certChainPem: string;
  rootCertPem: string;
}

export interface CaKeyMaterial {
  source: 'self-signed' | 'plugged-in';
  signingCert: crypto.X509Certificate;
  signingCertPem: string;
  signingKey: crypto.KeyObject;
  /** Each certificate of cert-chain.pem, one PEM each, newline-terminated. */
  chainPems: string[];
  /** The root bundle (may hold several roots), newline-terminated. */
  rootBundlePem: string;
  roots: crypto.X509Certificate[];
}

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]*?-----END CERTIFICATE-----/g;

/** The CERTIFICATE blocks of a PEM text, each normalised to end with one newline. */
export function splitPemCertificates(text: string): string[] {
  return [...text.matchAll(CERT_BLOCK)].map((m) => `${m[0].trim()}\n`);
}

function parsePems(pems: readonly string[], what: string): crypto.X509Certificate[] {
  return pems.map((pem, i) => {
    try {
      return new crypto.X509Certificate(pem);
    } catch (err) {
      throw new Error(`${what}: certificate ${i + 1} cannot be parsed: ${(err as Error).message}`);
    }
  });
}

function parseCerts(text: string, what: string): crypto.X509Certificate[] {
  return parsePems(splitPemCertificates(text), what);
}

/** The file names errors should mention: the layout the files came from (istiod's or a kubernetes.io/tls Secret). */
export interface CaFileNames {
  caCert: string;
  caKey: string;
  rootCert: string;
  certChain: string;
}

export const ISTIOD_CA_FILE_NAMES: CaFileNames = {
  caCert: 'ca-cert.pem',
  caKey: 'ca-key.pem',
  rootCert: 'root-cert.pem',
  certChain: 'cert-chain.pem',
};

/** Validates a set of CA files and turns them into usable key material. */
export function buildKeyMaterial(
  files: CaFiles,
  source: CaKeyMaterial['source'],
  names: CaFileNames = ISTIOD_CA_FILE_NAMES,
): CaKeyMaterial {
  const signingPems = splitPemCertificates(files.caCertPem);
  const [signingCert, ...extra] = parsePems(signingPems, names.caCert);
  const [signingCertPem] = signingPems;
  if (!signingCert || signingCertPem === undefined) throw new Error(`${names.caCert} holds no certificate`);
  if (extra.length > 0)
    throw new Error(`${names.caCert} must hold exactly one certificate (put intermediates in ${names.certChain})`);
  if (!signingCert.ca)
    throw new Error(`${names.caCert} is not a CA certificate (BasicConstraints CA:true is required)`);
  let signingKey: crypto.KeyObject;
  try {
    signingKey = crypto.createPrivateKey(files.caKeyPem);
  } catch {
    // The parser's own message could quote key material; say only what is wrong.
    throw new Error(`${names.caKey} is not a readable PEM private key`);
  }
  if (!signingCert.checkPrivateKey(signingKey))
    throw new Error(`${names.caKey} does not match the public key of ${names.caCert}`);
  const roots = parseCerts(files.rootCertPem, names.rootCert);
  if (roots.length === 0) throw new Error(`${names.rootCert} holds no certificate`);
  const chainPems = splitPemCertificates(files.certChainPem);
  parseCerts(files.certChainPem, names.certChain);
  const now = Date.now();
  if (new Date(signingCert.validTo).getTime() <= now)
    throw new Error(`${names.caCert} expired at ${signingCert.validTo}`);
  return {
    source,
    signingCert,
    signingCertPem,
    signingKey,
    chainPems,
    rootBundlePem: splitPemCertificates(files.rootCertPem).join(''),
    roots,
  };
}

/** Every certificate a mesh leaf may be issued by: the signing certificate, intermediates, roots. */
export function meshIssuers(material: CaKeyMaterial): crypto.X509Certificate[] {
  return [material.signingCert, ...material.chainPems.map((p) => new crypto.X509Certificate(p)), ...material.roots];
}
