// The plugged-in CA's certificate revocation list: ca-crl.pem in ROOT_CA_DIR (the cacerts Secret),
// which istiod distributes as ConfigMap istio-ca-crl (key ca-crl.pem) in every namespace for the
// proxies to mount. The file is optional and is re-read when the directory changes, so a CRL
// added, renewed or rotated together with the intermediate reaches the namespaces without a
// restart. A file that is not a CRL is refused with a log naming what is wrong, and the last good
// one stays published; a removed file also keeps the last one, as istiod does, because dropping
// a CRL would silently re-admit every certificate it revoked.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { scopedLogger } from '../../log/logger';
import { PUBLIC_FILE_MODE, writeFileAtomicSync } from '../../config/atomic-file';
import * as crypto from 'node:crypto';
import {
  DerError,
  TAG,
  childrenExactly,
  children,
  content,
  decodeOid,
  expectTag,
  nth,
  readTlv,
  whole,
} from '../signing/der';

const log = scopedLogger('ca');

/** The file in ROOT_CA_DIR, and the data key of the ConfigMap (istiod uses the same name for both). */
export const CA_CRL_FILE = 'ca-crl.pem';
/** istiod's PILOT_CRL_CONFIGMAP default. */
export const CA_CRL_CONFIGMAP = 'istio-ca-crl';
/**
 * Largest ca-crl.pem accepted: a ConfigMap's data may not exceed 1 MiB (the API server's limit),
 * and the object's metadata needs some of that room, so a larger CRL could never be published.
 */
export const MAX_CA_CRL_BYTES = 1_000_000;
/**
 * Most CRL blocks in one file: one per CA of the chain (root, intermediates) is the usual case;
 * this bounds the walk over operator-supplied data far above that.
 */
export const MAX_CA_CRL_BLOCKS = 16;
/** Quiet time after a directory event before re-reading, so a Secret update is read once. */
export const CA_CRL_DEBOUNCE_MS = 100;
/** Periodic re-read, for volume mounts whose watch events are unreliable; the file is small. */
export const CA_CRL_POLL_MS = 30_000;

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;

/** Signature algorithms a CRL may be signed with, by OID: the hash crypto.verify takes. */
const CRL_SIGNATURE_HASHES: Record<string, string> = {
  '1.2.840.10045.4.3.2': 'sha256', // ecdsa-with-SHA256
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.2.840.113549.1.1.11': 'sha256', // sha256WithRSAEncryption
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
};

/** What a CRL's signature covers and is: the tbsCertList bytes, the hash, the signature. */
interface SignedList {
  tbs: Buffer;
  hash: string | undefined;
  algorithm: string;
  signature: Buffer;
}

/** Checks one DER CertificateList: SEQUENCE { tbsCertList, signatureAlgorithm, signature BIT STRING }. */
function checkCertificateList(der: Buffer, which: string): SignedList {
  try {
    const list = readTlv(der, 0);
    if (list.end !== der.length) throw new DerError(`${der.length - list.end} bytes after the CertificateList`);
    expectTag(list, TAG.SEQUENCE, 'CertificateList');
    const [tbs, algorithm, signature] = childrenExactly(der, list, 3, 'CertificateList');
    expectTag(tbs, TAG.SEQUENCE, 'tbsCertList');
    expectTag(algorithm, TAG.SEQUENCE, 'signatureAlgorithm');
    expectTag(signature, TAG.BIT_STRING, 'signature');
    const fields = children(der, tbs);
    // version is optional (v1 CRLs omit it); when present it is an INTEGER.
    const first = fields[0]?.tag === TAG.INTEGER ? 1 : 0;
    expectTag(nth(fields, first, 'tbsCertList.signature'), TAG.SEQUENCE, 'tbsCertList.signature');
    expectTag(nth(fields, first + 1, 'tbsCertList.issuer'), TAG.SEQUENCE, 'tbsCertList.issuer');
    const thisUpdate = nth(fields, first + 2, 'tbsCertList.thisUpdate');
    if (thisUpdate.tag !== TAG.UTC_TIME && thisUpdate.tag !== TAG.GENERALIZED_TIME)
      throw new DerError(`tbsCertList.thisUpdate: expected a time, got tag 0x${thisUpdate.tag.toString(16)}`);
    const oid = nth(children(der, algorithm), 0, 'signatureAlgorithm.algorithm');
    expectTag(oid, TAG.OID, 'signatureAlgorithm.algorithm');
    const algorithmOid = decodeOid(content(der, oid));
    const bits = content(der, signature);
    // The BIT STRING's first byte counts unused bits; a signature uses whole bytes.
    return {
      tbs: whole(der, tbs),
      hash: CRL_SIGNATURE_HASHES[algorithmOid],
      algorithm: algorithmOid,
      signature: bits.subarray(1),
    };
  } catch (err) {
    throw new Error(`${which} is not an X.509 CRL: ${(err as Error).message}`);
  }
}

/**
 * Checks that `text` is one or more PEM "X509 CRL" blocks, each a well-formed CertificateList, and
 * nothing else PEM-encoded; throws an error naming what is wrong. The signature is not checked:
 * the proxies that load the CRL verify it against the CA they trust.
 */
export function validateCaCrlPem(text: string, signers: readonly crypto.X509Certificate[] = []): void {
  if (Buffer.byteLength(text) > MAX_CA_CRL_BYTES)
    throw new Error(`${CA_CRL_FILE} is larger than ${MAX_CA_CRL_BYTES} bytes, which a ConfigMap cannot hold`);
  let count = 0;
  const lists: SignedList[] = [];
  for (const [, label, body] of text.matchAll(PEM_BLOCK)) {
    count++;
    const which = `block ${count} of ${CA_CRL_FILE}`;
    if (count > MAX_CA_CRL_BLOCKS) throw new Error(`${CA_CRL_FILE} has more than ${MAX_CA_CRL_BLOCKS} PEM blocks`);
    if (label !== 'X509 CRL') throw new Error(`${which} is a ${label ?? 'unnamed'} block, not an X509 CRL`);
    const base64 = (body ?? '').replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) throw new Error(`${which} is not valid base64`);
    lists.push(checkCertificateList(Buffer.from(base64, 'base64'), which));
  }
  if (count === 0) throw new Error(`${CA_CRL_FILE} holds no PEM "X509 CRL" block`);
  // istiod (and Envoy, which ztunnel's peers may be): once a CRL is given for any CA of the chain,
  // one must be given for every CA of it, signed by that CA; a missing one fails every peer's check,
  // and a CRL signed by someone else revokes nothing while looking as if it did.
  const unsigned = signers.filter((signer) => !lists.some((l) => signedBy(l, signer)));
  if (unsigned.length > 0)
    throw new Error(
      `${CA_CRL_FILE} has no CRL signed by ${unsigned.map((c) => `"${c.subject.split('\n').join(', ')}"`).join(', ')} (one is needed for every certificate of the signing chain)`,
    );
}

function signedBy(list: SignedList, signer: crypto.X509Certificate): boolean {
  if (!list.hash) return false;
  try {
    return crypto.verify(list.hash, list.tbs, signer.publicKey, list.signature);
  } catch {
    return false;
  }
}

/** Writes <stateDir>/ca-crl.pem atomically, next to root-cert.pem (local mode's distribution point). */
export function writeCaCrlFile(stateDir: string, pem: string): string {
  const file = path.join(stateDir, CA_CRL_FILE);
  writeFileAtomicSync(file, pem, { mode: PUBLIC_FILE_MODE });
  return file;
}

/** The last good ca-crl.pem of ROOT_CA_DIR, re-read on demand or while watched. */
export class CaCrlSource {
  private pem: string | undefined;
  /** The last problem logged, so a poll that finds the same one does not log it again. */
  private reported = '';
  private readonly listeners = new Set<(pem: string) => void>();

  /** `signers`: the certificates of the signing chain, each of which must have signed a CRL of the file. */
  constructor(
    private readonly dir: string,
    private readonly signers: () => readonly crypto.X509Certificate[] = () => [],
  ) {}

  /** The CRL to publish; undefined while no valid ca-crl.pem has been read. */
  current(): string | undefined {
    return this.pem;
  }

  onChange(listener: (pem: string) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Re-reads the file; the listeners hear of a new valid CRL. Never throws. */
  reload(): void {
    const file = path.join(this.dir, CA_CRL_FILE);
    let text: string;
    try {
      const size = fs.statSync(file).size;
      if (size > MAX_CA_CRL_BYTES) throw new Error(`${CA_CRL_FILE} is larger than ${MAX_CA_CRL_BYTES} bytes`);
      text = fs.readFileSync(file, 'utf8');
      validateCaCrlPem(text, this.signers());
    } catch (err) {
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      if (missing && this.pem === undefined) return;
      const reason = missing ? `${CA_CRL_FILE} was removed` : (err as Error).message;
      if (reason !== this.reported) {
        this.reported = reason;
        log.error({ file, reason }, `${CA_CRL_FILE} is not usable; the last good CRL stays published`);
      }
      return;
    }
    this.reported = '';
    if (text === this.pem) return;
    this.pem = text;
    log.info({ file, bytes: text.length }, `${CA_CRL_FILE} loaded`);
    for (const listener of this.listeners) listener(text);
  }

  /** Reads now, then re-reads on directory events (debounced) and every CA_CRL_POLL_MS; returns the stop. */
  watch(): () => void {
    this.reload();
    let timer: NodeJS.Timeout | undefined;
    const schedule = () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.reload(), CA_CRL_DEBOUNCE_MS);
    };
    let watcher: fs.FSWatcher | undefined;
    try {
      watcher = fs.watch(this.dir, schedule);
      watcher.on('error', () => watcher?.close());
    } catch {
      // No directory yet, or a filesystem without events: the poll below still finds the file.
    }
    const poll = setInterval(() => this.reload(), CA_CRL_POLL_MS);
    poll.unref();
    return () => {
      watcher?.close();
      clearInterval(poll);
      clearTimeout(timer);
    };
  }
}
