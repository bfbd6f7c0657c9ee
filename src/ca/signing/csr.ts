// The untrusted input of the CA: a PKCS#10 CSR in PEM. The parser is strict and bounded: one PEM
// block, size-limited, DER only, a fixed shape, one SubjectPublicKeyInfo, and only the key and
// signature algorithms ztunnel and istio-agent use. Its subject and attributes are checked for
// well-formedness only: the CA ignores them (the SAN comes from authentication).

import type * as crypto from 'node:crypto';
import { CsrVerifierPool, VerifyJob, VerifyOutcome, sharedCsrVerifierPool } from './csr-verifier-pool';
import {
  DerError,
  TAG,
  Tlv,
  byteAt,
  checkWellFormed,
  children,
  childrenExactly,
  content,
  decodeOid,
  expectTag,
  readTlv,
  whole,
} from './der';

/** Largest CSR PEM accepted, in bytes (a P-256 CSR is ~500 bytes, RSA-4096 ~1.7 KiB). */
export const MAX_CSR_PEM_BYTES = 64 * 1024;
export const MIN_RSA_KEY_BITS = 2048;
/** Bounds the cost of verifying one CSR. */
export const MAX_RSA_KEY_BITS = 8192;

/** A CSR the CA refuses; the message is the precise reason (safe to return to the caller). */
export class CsrError extends Error {
  override name = 'CsrError';
}

const OID = {
  rsaEncryption: '1.2.840.113549.1.1.1',
  ecPublicKey: '1.2.840.10045.2.1',
  p256: '1.2.840.10045.3.1.7',
  p384: '1.3.132.0.34',
} as const;

/** Signature algorithm OID -> key family and hash. */
const SIGNATURE_ALGORITHMS: Readonly<Record<string, { family: 'RSA' | 'EC'; hash: string }>> = {
  '1.2.840.113549.1.1.11': { family: 'RSA', hash: 'sha256' },
  '1.2.840.113549.1.1.12': { family: 'RSA', hash: 'sha384' },
  '1.2.840.113549.1.1.13': { family: 'RSA', hash: 'sha512' },
  '1.2.840.10045.4.3.2': { family: 'EC', hash: 'sha256' },
  '1.2.840.10045.4.3.3': { family: 'EC', hash: 'sha384' },
  '1.2.840.10045.4.3.4': { family: 'EC', hash: 'sha512' },
};

export interface ParsedCsr {
  /** The SubjectPublicKeyInfo, DER, copied verbatim into the certificate. */
  spki: Buffer;
  /** e.g. "ECDSA P-256", "RSA 2048". */
  keyDescription: string;
  /** The signed part (CertificationRequestInfo), for signature verification. */
  signedData: Buffer;
  signature: Buffer;
  hash: string;
  /**
   * The same key as a JWK when it has one (RSA, uncompressed EC points): OpenSSL 3 imports a JWK
   * through a direct constructor in a fraction of the time its DER decoder chain takes.
   */
  jwk?: crypto.JsonWebKey;
}

const PEM_LABELS = ['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST'];
const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\s]*?)-----END ([A-Z0-9 ]+)-----/g;

/** Extracts the DER of the single CSR block in `pem`. */
export function csrDerFromPem(pem: string): Buffer {
  if (typeof pem !== 'string' || pem.trim() === '') throw new CsrError('CSR is empty');
  if (Buffer.byteLength(pem, 'utf8') > MAX_CSR_PEM_BYTES)
    throw new CsrError(`CSR is larger than ${MAX_CSR_PEM_BYTES} bytes`);
  const blocks = [...pem.matchAll(PEM_BLOCK)];
  if (blocks.length === 0) throw new CsrError('CSR is not PEM: no BEGIN/END CERTIFICATE REQUEST block');
  if (blocks.length > 1) throw new CsrError(`CSR PEM holds ${blocks.length} blocks; exactly one is allowed`);
  // The pattern has three groups, none optional: a match holds all three.
  const [, begin = '', body = '', end] = blocks[0] ?? [];
  if (begin !== end || !PEM_LABELS.includes(begin))
    throw new CsrError(`PEM block is "${begin}", not a CERTIFICATE REQUEST`);
  const b64 = body.replace(/\s+/g, '');
  if (b64.length === 0 || b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64))
    throw new CsrError('CSR PEM body is not valid base64');
  return Buffer.from(b64, 'base64');
}

function algorithmIdentifier(der: Buffer, tlv: Tlv, what: string): { oid: string; params: Tlv | undefined } {
  expectTag(tlv, TAG.SEQUENCE, what);
  const parts = children(der, tlv);
  const [algorithm, params] = parts;
  if (!algorithm || parts.length > 2) throw new DerError(`${what}: expected 1 or 2 elements, got ${parts.length}`);
  expectTag(algorithm, TAG.OID, `${what} algorithm`);
  return { oid: decodeOid(content(der, algorithm)), params };
}

/** Bit length of a positive big-endian INTEGER's content. */
function bitLength(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  if (i === bytes.length) return 0;
  return (bytes.length - i - 1) * 8 + (32 - Math.clz32(byteAt(bytes, i)));
}

/** EC point sizes (uncompressed, compressed) per curve. */
const EC_POINT_LENGTHS: Readonly<Record<string, { name: string; lengths: readonly [number, number] }>> = {
  [OID.p256]: { name: 'P-256', lengths: [65, 33] },
  [OID.p384]: { name: 'P-384', lengths: [97, 49] },
};

/** A positive big-endian integer as JWK base64url, without sign-padding zeros. */
function jwkInteger(bytes: Buffer): string {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  return bytes.subarray(i).toString('base64url');
}

// The key itself is imported (and fully validated) by the verifier worker; here only its
// algorithm, curve and size are read from the DER, which costs microseconds.
function describeKey(
  der: Buffer,
  spkiTlv: Tlv,
): { family: 'RSA' | 'EC'; description: string; jwk?: crypto.JsonWebKey } {
  expectTag(spkiTlv, TAG.SEQUENCE, 'SubjectPublicKeyInfo');
  const [algTlv, keyTlv] = childrenExactly(der, spkiTlv, 2, 'SubjectPublicKeyInfo');
  expectTag(keyTlv, TAG.BIT_STRING, 'subjectPublicKey');
  const bits = content(der, keyTlv);
  if (bits.length < 2 || bits[0] !== 0) throw new CsrError('subjectPublicKey BIT STRING is malformed');
  const key = bits.subarray(1);
  const alg = algorithmIdentifier(der, algTlv, 'SubjectPublicKeyInfo algorithm');
  if (alg.oid === OID.rsaEncryption) {
    if (!alg.params || alg.params.tag !== TAG.NULL || alg.params.end !== alg.params.contentStart) {
      throw new CsrError('RSA public key algorithm must have NULL parameters');
    }
    const seq = readTlv(key, 0);
    if (seq.end !== key.length) throw new DerError('trailing bytes after the RSA public key');
    expectTag(seq, TAG.SEQUENCE, 'RSAPublicKey');
    const [modulusTlv, exponentTlv] = childrenExactly(key, seq, 2, 'RSAPublicKey (modulus, exponent)');
    expectTag(modulusTlv, TAG.INTEGER, 'RSA modulus');
    expectTag(exponentTlv, TAG.INTEGER, 'RSA exponent');
    const modulus = content(key, modulusTlv);
    if (modulus.length === 0 || byteAt(modulus, 0) & 0x80) throw new CsrError('RSA modulus is not a positive integer');
    const size = bitLength(modulus);
    if (size < MIN_RSA_KEY_BITS)
      throw new CsrError(`RSA key of ${size} bits is too small (at least ${MIN_RSA_KEY_BITS})`);
    if (size > MAX_RSA_KEY_BITS)
      throw new CsrError(`RSA key of ${size} bits is too large (at most ${MAX_RSA_KEY_BITS})`);
    const exponent = content(key, exponentTlv);
    if (exponent.length === 0 || byteAt(exponent, 0) & 0x80)
      throw new CsrError('RSA exponent is not a positive integer');
    return {
      family: 'RSA',
      description: `RSA ${size}`,
      jwk: { kty: 'RSA', n: jwkInteger(modulus), e: jwkInteger(exponent) },
    };
  }
  if (alg.oid === OID.ecPublicKey) {
    if (!alg.params || alg.params.tag !== TAG.OID) throw new CsrError('EC public key must name its curve');
    const curve = decodeOid(content(der, alg.params));
    const known = EC_POINT_LENGTHS[curve];
    if (!known) throw new CsrError(`unsupported EC curve ${curve} (P-256 or P-384 only)`);
    if (!known.lengths.includes(key.length)) throw new CsrError(`EC ${known.name} public key has ${key.length} bytes`);
    const description = `ECDSA ${known.name}`;
    // Compressed points (0x02/0x03) have no JWK form; the verifier imports those from DER.
    if (key.length !== known.lengths[0] || key[0] !== 0x04) return { family: 'EC', description };
    const half = (key.length - 1) / 2;
    const jwk = {
      kty: 'EC',
      crv: known.name,
      x: key.subarray(1, 1 + half).toString('base64url'),
      y: key.subarray(1 + half).toString('base64url'),
    };
    return { family: 'EC', description, jwk };
  }
  throw new CsrError(`unsupported public key algorithm ${alg.oid} (ECDSA P-256/P-384 or RSA only)`);
}

/** Parses a CSR's DER strictly; throws CsrError naming the problem. Does not verify the signature. */
export function parseCsrDer(der: Buffer): ParsedCsr {
  try {
    const root = readTlv(der, 0);
    if (root.end !== der.length) throw new DerError('trailing bytes after the CSR');
    expectTag(root, TAG.SEQUENCE, 'CertificationRequest');
    checkWellFormed(der, root);
    const [info, sigAlgTlv, sigTlv] = childrenExactly(der, root, 3, 'CertificationRequest');
    expectTag(info, TAG.SEQUENCE, 'CertificationRequestInfo');
    const [version, subject, spkiTlv, attributes] = childrenExactly(der, info, 4, 'CertificationRequestInfo');
    expectTag(version, TAG.INTEGER, 'version');
    const v = content(der, version);
    if (v.length !== 1 || v[0] !== 0) throw new CsrError('CSR version must be 0 (PKCS#10 v1)');
    expectTag(subject, TAG.SEQUENCE, 'subject');
    expectTag(attributes, 0xa0, 'attributes');
    const key = describeKey(der, spkiTlv);
    const sigAlg = algorithmIdentifier(der, sigAlgTlv, 'signatureAlgorithm');
    const known = SIGNATURE_ALGORITHMS[sigAlg.oid];
    if (!known) throw new CsrError(`unsupported signature algorithm ${sigAlg.oid}`);
    if (known.family !== key.family)
      throw new CsrError(`signature algorithm ${sigAlg.oid} does not fit a ${key.description} key`);
    expectTag(sigTlv, TAG.BIT_STRING, 'signature');
    const sig = content(der, sigTlv);
    if (sig.length < 2 || sig[0] !== 0) throw new CsrError('signature BIT STRING is malformed');
    return {
      spki: Buffer.from(whole(der, spkiTlv)),
      keyDescription: key.description,
      signedData: whole(der, info),
      signature: sig.subarray(1),
      hash: known.hash,
      ...(key.jwk ? { jwk: key.jwk } : {}),
    };
  } catch (err) {
    if (err instanceof CsrError) throw err;
    if (err instanceof DerError) throw new CsrError(`CSR is not valid DER: ${err.message}`);
    throw new CsrError(`CSR cannot be parsed: ${(err as Error).message}`);
  }
}

/** Verifies the CSR's own signature (and imports its key) off the event loop. */
export async function verifyCsrSignature(
  csr: ParsedCsr,
  pool: CsrVerifierPool = sharedCsrVerifierPool(),
): Promise<void> {
  checkVerified(await pool.verify(verifyJob(csr)));
}

/** Parses a PEM CSR strictly, without verifying its signature; throws CsrError. */
export function parseCsr(pem: string): ParsedCsr {
  return parseCsrDer(csrDerFromPem(pem));
}

/** The verifier's view of a parsed CSR. */
export function verifyJob(csr: ParsedCsr): VerifyJob {
  return { spki: csr.spki, jwk: csr.jwk, hash: csr.hash, data: csr.signedData, signature: csr.signature };
}

/** Throws the CsrError a failed verification means. */
export function checkVerified(outcome: VerifyOutcome): void {
  if (outcome.signingFailed) return;
  if (outcome.error) throw new CsrError(outcome.error);
  if (!outcome.ok) throw new CsrError('CSR signature does not verify');
}

/** Parses and verifies a PEM CSR: everything the CA checks before it signs. */
export async function readCsr(pem: string): Promise<ParsedCsr> {
  const csr = parseCsr(pem);
  await verifyCsrSignature(csr);
  return csr;
}
