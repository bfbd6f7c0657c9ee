// One CSR-verifier job as it crosses to a worker thread, and the code that runs it. Both sides of
// the pool use runJob: the worker threads (csr-verify-worker.ts) for most jobs, the event loop for
// a lone caller's job (csr-verifier-pool.ts, INLINE_SHARE). It imports only node:crypto, so the
// worker loads nothing else of the server.

import * as nodeCrypto from 'node:crypto';

/**
 * A worker working through a batch answers with what it has finished at least this often, so an
 * early job of a long batch (RSA signatures take ~0.3 ms each) does not wait for the last one,
 * while a burst still costs the event loop one wake-up per millisecond, not one per job.
 */
export const RESULT_FLUSH_MS = 1;

export interface WireJob {
  id: number;
  /** Who the job is for (the requesting node); the worker serves lanes round-robin. */
  lane?: string;
  jwk?: nodeCrypto.JsonWebKey | undefined;
  hash?: string;
  /** spki | data | signature | tbs, lengths below; one buffer so cloning copies once. */
  buf: Uint8Array;
  spkiLength: number;
  dataLength: number;
  signatureLength: number;
  signKey?: number;
  signHash?: string;
}

export interface WireResult {
  id: number;
  ok: boolean;
  error?: string;
  signature?: Uint8Array;
  signing?: boolean;
}

/** What the pool posts to a worker: signing keys to add, one to drop, or a batch of jobs. */
export type WorkerMessage = { keys: [number, nodeCrypto.KeyObject][] } | { forget: number } | { jobs: WireJob[] };

/** One job: verify the CSR's signature, then sign the certificate with a registered key. */
export function runJob(m: WireJob, keys: ReadonlyMap<number, nodeCrypto.KeyObject>): WireResult {
  const all = Buffer.from(m.buf.buffer, m.buf.byteOffset, m.buf.byteLength);
  let at = 0;
  const take = (n: number) => all.subarray(at, (at += n));
  const spki = take(m.spkiLength);
  const data = take(m.dataLength);
  const signature = take(m.signatureLength);
  const tbs = all.subarray(at);
  if (m.hash !== undefined) {
    let key;
    try {
      key = m.jwk
        ? nodeCrypto.createPublicKey({ key: m.jwk, format: 'jwk' })
        : nodeCrypto.createPublicKey({ key: spki, format: 'der', type: 'spki' });
    } catch (err) {
      return { id: m.id, ok: false, error: 'CSR public key cannot be read: ' + (err as Error).message };
    }
    let ok = false;
    try {
      ok = nodeCrypto.verify(m.hash, data, key, signature);
    } catch {
      ok = false;
    }
    if (!ok) return { id: m.id, ok: false };
  }
  if (m.signKey === undefined) return { id: m.id, ok: true };
  const signer = keys.get(m.signKey);
  if (!signer) return { id: m.id, ok: false, error: `signing key ${m.signKey} is not registered`, signing: true };
  try {
    return { id: m.id, ok: true, signature: nodeCrypto.sign(m.signHash ?? null, tbs, signer) };
  } catch (err) {
    return { id: m.id, ok: false, error: 'signing failed: ' + (err as Error).message, signing: true };
  }
}
