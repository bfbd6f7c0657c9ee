// Issues leaf certificates from a DER template prepared once per signing key. Only the serial,
// validity, SubjectAltName and SubjectPublicKeyInfo vary per certificate, so the per-request work
// is a few Buffer.concat calls plus one native signature off the event loop: on the CSR path the
// worker that verified the CSR signs (csr-verifier-pool.ts), elsewhere the libuv thread pool.

import * as crypto from 'node:crypto';
import {
  TAG,
  children,
  content,
  decodeOid,
  encodeOid,
  encodeTime,
  encodeUnsignedInteger,
  nth,
  readTlv,
  tlv,
  whole,
} from './der';

/** Bytes of randomness in a serial number (RFC 5280 allows up to 20 octets). */
export const SERIAL_BYTES = 16;

export type SanEntry = { uri: string } | { dns: string } | { ip: string };

export interface LeafRequest {
  spki: Buffer;
  sans: readonly SanEntry[];
  notBefore: Date;
  notAfter: Date;
}

/** A TBSCertificate ready to be signed, with what the issued leaf reports. */
export interface PreparedLeaf {
  tbs: Buffer;
  serial: Buffer;
  notAfter: Date;
}

export interface IssuedLeaf {
  der: Buffer;
  pem: string;
  serialHex: string;
  notAfter: Date;
}

const OID = {
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  basicConstraints: '2.5.29.19',
  authorityKeyId: '2.5.29.35',
  subjectKeyId: '2.5.29.14',
  subjectAltName: '2.5.29.17',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
};

const TRUE = Buffer.from([0x01, 0x01, 0xff]);
const EMPTY_SEQUENCE = Buffer.from([0x30, 0x00]);

/** Encoded OIDs by dotted form: the SubjectAltName extension is built for every leaf. */
const oidDer = new Map<string, Buffer>();

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  let id = oidDer.get(oid);
  if (!id) oidDer.set(oid, (id = encodeOid(oid)));
  return critical
    ? tlv(TAG.SEQUENCE, id, TRUE, tlv(TAG.OCTET_STRING, value))
    : tlv(TAG.SEQUENCE, id, tlv(TAG.OCTET_STRING, value));
}

/** The signature algorithm (hash and AlgorithmIdentifier DER) a CA key signs with. */
export function signatureAlgorithmFor(key: crypto.KeyObject): { hash: string; algorithmId: Buffer } {
  if (key.asymmetricKeyType === 'rsa') {
    return {
      hash: 'sha256',
      algorithmId: tlv(TAG.SEQUENCE, encodeOid('1.2.840.113549.1.1.11'), Buffer.from([TAG.NULL, 0])),
    };
  }
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1')
      return { hash: 'sha256', algorithmId: tlv(TAG.SEQUENCE, encodeOid('1.2.840.10045.4.3.2')) };
    if (curve === 'secp384r1')
      return { hash: 'sha384', algorithmId: tlv(TAG.SEQUENCE, encodeOid('1.2.840.10045.4.3.3')) };
    throw new Error(`CA key uses unsupported EC curve ${curve ?? 'unknown'} (P-256 or P-384)`);
  }
  throw new Error(`CA key type ${key.asymmetricKeyType ?? 'unknown'} is not supported (RSA or ECDSA)`);
}

/** The subject Name DER and key identifier of a CA certificate, read from its DER. */
export function issuerFields(certDer: Buffer): { subject: Buffer; keyId: Buffer } {
  const cert = readTlv(certDer, 0);
  const tbs = children(certDer, nth(children(certDer, cert), 0, 'tbsCertificate'));
  const offset = nth(tbs, 0, 'tbsCertificate version or serial').tag === 0xa0 ? 1 : 0;
  const subject = whole(certDer, nth(tbs, offset + 4, 'subject'));
  const spki = children(certDer, nth(tbs, offset + 5, 'subjectPublicKeyInfo'));
  let keyId: Buffer | undefined;
  const extsWrapper = tbs.find((t) => t.tag === 0xa3);
  if (extsWrapper) {
    for (const ext of children(certDer, nth(children(certDer, extsWrapper), 0, 'extensions'))) {
      const parts = children(certDer, ext);
      if (decodeOid(content(certDer, nth(parts, 0, 'extension id'))) !== OID.subjectKeyId) continue;
      const octets = content(certDer, nth(parts, parts.length - 1, 'extension value'));
      keyId = Buffer.from(content(octets, readTlv(octets, 0)));
    }
  }
  // RFC 5280 §4.2.1.2 method 1 when the CA certificate carries no SubjectKeyIdentifier.
  keyId ??= crypto
    .createHash('sha1')
    .update(content(certDer, nth(spki, 1, 'subjectPublicKey')).subarray(1))
    .digest();
  return { subject: Buffer.from(subject), keyId };
}

function encodeSan(entry: SanEntry): Buffer {
  if ('uri' in entry) return tlv(0x86, Buffer.from(entry.uri, 'latin1'));
  if ('dns' in entry) return tlv(0x82, Buffer.from(entry.dns, 'latin1'));
  return tlv(0x87, ipBytes(entry.ip));
}

function ipBytes(ip: string): Buffer {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (v4) return Buffer.from(v4.slice(1).map(Number));
  const [head = '', tail] = ip.split('::');
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((h) => parseInt(h, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const groups = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

/** Base64 characters per PEM line (RFC 7468). */
const PEM_LINE = 64;

export function toPem(der: Buffer, label = 'CERTIFICATE'): string {
  const b64 = der.toString('base64');
  let body = b64 === '' ? '\n' : '';
  for (let at = 0; at < b64.length; at += PEM_LINE) body += b64.slice(at, at + PEM_LINE) + '\n';
  return `-----BEGIN ${label}-----\n${body}-----END ${label}-----\n`;
}

/** Signs leaves with one CA key and certificate. */
/** The CA cannot issue a certificate valid now: an issuer of its chain has expired (or is not valid yet). */
export class IssuerValidityError extends Error {}

export class LeafSigner {
  /** No leaf is valid after this: the end of the shortest-lived certificate of the signing chain. */
  readonly notAfterLimit: Date;
  /** Nor before this: the latest start of the signing chain's certificates. */
  readonly notBeforeLimit: Date;
  private readonly hash: string;
  private readonly algorithmId: Buffer;
  /** [0] version v3 is first, then the serial varies, then algorithm + issuer are fixed. */
  private readonly versionField = tlv(0xa0, Buffer.from([TAG.INTEGER, 1, 2]));
  private readonly algorithmAndIssuer: Buffer;
  private readonly fixedExtensions: Buffer;

  constructor(
    signingCertDer: Buffer,
    private readonly key: crypto.KeyObject,
    /** The signing chain's common validity (CaKeyMaterial.validity); default the signing certificate's own. */
    chainValidity?: { notBefore: Date; notAfter: Date },
  ) {
    const cert = new crypto.X509Certificate(signingCertDer);
    this.notAfterLimit = chainValidity?.notAfter ?? new Date(cert.validTo);
    this.notBeforeLimit = chainValidity?.notBefore ?? new Date(cert.validFrom);
    const alg = signatureAlgorithmFor(key);
    this.hash = alg.hash;
    this.algorithmId = alg.algorithmId;
    const { subject, keyId } = issuerFields(signingCertDer);
    this.algorithmAndIssuer = Buffer.concat([alg.algorithmId, subject]);
    this.fixedExtensions = Buffer.concat([
      extension(OID.keyUsage, true, tlv(TAG.BIT_STRING, Buffer.from([0x05, 0xa0]))),
      extension(OID.extKeyUsage, false, tlv(TAG.SEQUENCE, encodeOid(OID.serverAuth), encodeOid(OID.clientAuth))),
      extension(OID.basicConstraints, true, EMPTY_SEQUENCE),
      extension(OID.authorityKeyId, false, tlv(TAG.SEQUENCE, tlv(0x80, keyId))),
    ]);
  }

  /** The TBSCertificate DER for a request; exposed for tests. */
  buildTbs(req: LeafRequest, serial: Buffer): Buffer {
    const san = extension(OID.subjectAltName, true, tlv(TAG.SEQUENCE, ...req.sans.map(encodeSan)));
    return tlv(
      TAG.SEQUENCE,
      this.versionField,
      encodeUnsignedInteger(serial),
      this.algorithmAndIssuer,
      tlv(TAG.SEQUENCE, encodeTime(req.notBefore), encodeTime(req.notAfter)),
      EMPTY_SEQUENCE,
      req.spki,
      tlv(0xa3, tlv(TAG.SEQUENCE, this.fixedExtensions, san)),
    );
  }

  /** The hash the signing key signs with (sha256 for RSA and P-256, sha384 for P-384). */
  get signingHash(): string {
    return this.hash;
  }

  /**
   * A fresh serial and the TBSCertificate for `req`, its validity kept inside every issuer's (as
   * istiod clamps a leaf's end to its signer's). A request that leaves no such validity is refused,
   * never issued born-expired.
   */
  prepare(req: LeafRequest): PreparedLeaf {
    if (req.sans.length === 0) throw new Error('a certificate needs at least one SAN');
    const notAfter = req.notAfter > this.notAfterLimit ? this.notAfterLimit : req.notAfter;
    const notBefore = req.notBefore < this.notBeforeLimit ? this.notBeforeLimit : req.notBefore;
    if (notAfter <= notBefore)
      throw new IssuerValidityError(
        `signing certificate has expired at ${this.notAfterLimit.toISOString()} (or its chain is not valid before ${this.notBeforeLimit.toISOString()})`,
      );
    const serial = randomSerialBytes(SERIAL_BYTES);
    serial.writeUInt8((serial.readUInt8(0) & 0x7f) | 0x01, 0); // positive and exactly SERIAL_BYTES long
    return { tbs: this.buildTbs({ ...req, notBefore, notAfter }, serial), serial, notAfter };
  }

  /** The certificate from a prepared TBSCertificate and its signature by this signer's key. */
  assemble(prepared: PreparedLeaf, signature: Buffer): IssuedLeaf {
    const der = tlv(TAG.SEQUENCE, prepared.tbs, this.algorithmId, tlv(TAG.BIT_STRING, Buffer.from([0]), signature));
    return { der, pem: toPem(der), serialHex: prepared.serial.toString('hex'), notAfter: prepared.notAfter };
  }

  /** Prepares and signs on the libuv thread pool. */
  sign(req: LeafRequest): Promise<IssuedLeaf> {
    // A throw in the executor (prepare refusing the request) rejects the returned promise.
    return new Promise((resolve, reject) => {
      const prepared = this.prepare(req);
      crypto.sign(this.hash, prepared.tbs, this.key, (err, signature) => {
        if (err) {
          reject(new Error(`signing failed: ${err.message}`));
          return;
        }
        resolve(this.assemble(prepared, signature));
      });
    });
  }
}

/**
 * Serial numbers are drawn from one SERIAL_RANDOM_POOL_BYTES fill of the CSPRNG at a time, so the
 * event loop makes one crypto.randomBytes call per pool, not one per certificate. Each serial is
 * its own copy; the bytes are the same CSPRNG output either way.
 */
export const SERIAL_RANDOM_POOL_BYTES = 4096;
let serialPool = Buffer.alloc(0);
let serialPoolAt = 0;

function randomSerialBytes(n: number): Buffer {
  if (serialPoolAt + n > serialPool.length) {
    serialPool = crypto.randomBytes(SERIAL_RANDOM_POOL_BYTES);
    serialPoolAt = 0;
  }
  const out = Buffer.from(serialPool.subarray(serialPoolAt, serialPoolAt + n));
  serialPoolAt += n;
  return out;
}
