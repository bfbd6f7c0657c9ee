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
  /**
   * When a certificate it signs may be valid: the intersection of the validity of every
   * certificate from the signing certificate up to its root, so no leaf outlives (or predates)
   * an issuer of its chain.
   */
  validity: { notBefore: Date; notAfter: Date };
}

/** Intermediates a signing certificate may chain through to its root (istiod's x509 default is 10 too). */
export const MAX_CA_CHAIN_DEPTH = 10;

const describeCert = (c: crypto.X509Certificate) => `"${c.subject.split('\n').join(', ')}"`;

/** Whether `issuer` issued `cert` and its key verifies cert's signature. */
function issuedBy(cert: crypto.X509Certificate, issuer: crypto.X509Certificate): boolean {
  return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
}

/**
 * istiod's KeyCertBundle.Verify: the signing certificate chains through cert-chain.pem's
 * certificates to a root of root-cert.pem, and every certificate on that path is valid now. Returns
 * the path's common validity. Each refusal names the file and the certificate.
 */
function verifyPath(
  signing: crypto.X509Certificate,
  chain: readonly crypto.X509Certificate[],
  roots: readonly crypto.X509Certificate[],
  names: CaFileNames,
  now: number,
): { notBefore: Date; notAfter: Date } {
  const fileOf = (c: crypto.X509Certificate) =>
    c === signing ? names.caCert : roots.includes(c) ? names.rootCert : names.certChain;
  let notBefore = -Infinity;
  let notAfter = Infinity;
  const within = (c: crypto.X509Certificate) => {
    const from = new Date(c.validFrom).getTime();
    const to = new Date(c.validTo).getTime();
    if (from > now) throw new Error(`${fileOf(c)}: ${describeCert(c)} is not valid before ${c.validFrom}`);
    if (to <= now) throw new Error(`${fileOf(c)}: ${describeCert(c)} expired at ${c.validTo}`);
    notBefore = Math.max(notBefore, from);
    notAfter = Math.min(notAfter, to);
  };
  let current = signing;
  for (let depth = 0; ; depth++) {
    within(current);
    const root = roots.find((r) => r.fingerprint256 === current.fingerprint256 || issuedBy(current, r));
    if (root) {
      if (root !== current && root.fingerprint256 !== current.fingerprint256) within(root);
      return { notBefore: new Date(notBefore), notAfter: new Date(notAfter) };
    }
    if (depth >= MAX_CA_CHAIN_DEPTH)
      throw new Error(`${names.caCert} does not reach ${names.rootCert} within ${MAX_CA_CHAIN_DEPTH} intermediates`);
    const next = chain.find((c) => c.fingerprint256 !== current.fingerprint256 && issuedBy(current, c));
    if (!next)
      throw new Error(
        `${names.caCert} does not chain to ${names.rootCert}: no certificate of ${names.certChain} or ${names.rootCert} issued ${describeCert(current)}`,
      );
    current = next;
  }
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
  const chain = parsePems(chainPems, names.certChain);
  // istiod's layout: cert-chain.pem starts with ca-cert.pem. A writer that replaces the files one at
  // a time passes through sets where it does not, and those are not applied.
  const [first] = chain;
  if (first && first.fingerprint256 !== signingCert.fingerprint256)
    throw new Error(
      `${names.certChain} must begin with the certificate of ${names.caCert}, but begins with ${describeCert(first)}`,
    );
  const validity = verifyPath(signingCert, chain, roots, names, Date.now());
  return {
    source,
    signingCert,
    signingCertPem,
    signingKey,
    chainPems,
    rootBundlePem: splitPemCertificates(files.rootCertPem).join(''),
    roots,
    validity,
  };
}

/** Every certificate a mesh leaf may be issued by: the signing certificate, intermediates, roots. */
export function meshIssuers(material: CaKeyMaterial): crypto.X509Certificate[] {
  return [material.signingCert, ...material.chainPems.map((p) => new crypto.X509Certificate(p)), ...material.roots];
}
