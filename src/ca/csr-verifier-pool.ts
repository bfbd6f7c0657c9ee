// Verifies CSR signatures on worker threads. Importing a public key (createPublicKey) costs
// OpenSSL 3 a few hundred microseconds and always runs on the calling thread, as does the key
// preparation of crypto.verify; on the event loop that would dominate the CA's per-request cost.
// The workers take the key (as a JWK where it has one: OpenSSL imports that through a direct
// constructor, about half the cost of its DER decoder chain for P-256 and a twentieth for RSA),
// import it and verify, so the event loop only posts a message and reads the answer.

import type * as crypto from 'node:crypto';
import * as os from 'node:os';
import { Worker } from 'node:worker_threads';

/** Worker threads verifying CSRs; at most the machine's parallelism. */
export const CSR_VERIFY_MAX_WORKERS = 4;

export interface VerifyJob {
  spki: Buffer;
  /** The same key as a JWK, imported instead of the DER when present (several times cheaper). */
  jwk?: crypto.JsonWebKey | undefined;
  hash: string;
  data: Buffer;
  signature: Buffer;
}

/** ok: the signature verifies; otherwise `error` says why (bad key or bad signature). */
export interface VerifyOutcome {
  ok: boolean;
  error?: string;
}

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const crypto = require('node:crypto');
parentPort.on('message', (m) => {
  const all = Buffer.from(m.buf);
  const spki = all.subarray(0, m.spkiLength);
  const data = all.subarray(m.spkiLength, m.spkiLength + m.dataLength);
  const signature = all.subarray(m.spkiLength + m.dataLength);
  let key;
  try {
    key = m.jwk ? crypto.createPublicKey({ key: m.jwk, format: 'jwk' }) : crypto.createPublicKey({ key: spki, format: 'der', type: 'spki' });
  } catch (err) {
    parentPort.postMessage({ id: m.id, ok: false, error: 'CSR public key cannot be read: ' + err.message });
    return;
  }
  let ok = false;
  try {
    ok = crypto.verify(m.hash, data, key, signature);
  } catch (err) {
    ok = false;
  }
  parentPort.postMessage({ id: m.id, ok });
});
`;

interface Pending {
  resolve: (o: VerifyOutcome) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
}

export class CsrVerifierPool {
  private readonly slots: (Slot | undefined)[] = [];
  private nextId = 1;

  constructor(private readonly size = Math.max(1, Math.min(CSR_VERIFY_MAX_WORKERS, os.availableParallelism()))) {}

  private spawn(index: number): Slot {
    const slot: Slot = { worker: new Worker(WORKER_SOURCE, { eval: true }), pending: new Map() };
    slot.worker.on('message', (m: { id: number; ok: boolean; error?: string }) => {
      const p = slot.pending.get(m.id);
      if (!p) return;
      slot.pending.delete(m.id);
      // An idle worker must not keep the process alive; a busy one must, until it answers.
      if (slot.pending.size === 0) slot.worker.unref();
      p.resolve(m.error ? { ok: false, error: m.error } : { ok: m.ok });
    });
    const fail = (err: Error) => {
      // A dead worker fails only its own jobs (callers answer INTERNAL) and is replaced on next use.
      if (this.slots[index] === slot) this.slots[index] = undefined;
      for (const p of slot.pending.values()) p.reject(err);
      slot.pending.clear();
    };
    slot.worker.on('error', fail);
    slot.worker.on('exit', () => fail(new Error('CSR verifier worker exited')));
    // Attaching a 'message' listener re-references the worker's port, so unref comes last.
    slot.worker.unref();
    return slot;
  }

  verify(job: VerifyJob): Promise<VerifyOutcome> {
    let index = 0;
    for (let i = 1; i < this.size; i++) {
      if ((this.slots[i]?.pending.size ?? 0) < (this.slots[index]?.pending.size ?? 0)) index = i;
    }
    const slot = (this.slots[index] ??= this.spawn(index));
    const id = this.nextId++;
    // One exact-size buffer, transferred: cloning the Buffers themselves would copy the whole
    // (pooled, usually 8 KiB) ArrayBuffer behind each of them.
    const buf = new ArrayBuffer(job.spki.length + job.data.length + job.signature.length);
    const view = new Uint8Array(buf);
    view.set(job.spki, 0);
    view.set(job.data, job.spki.length);
    view.set(job.signature, job.spki.length + job.data.length);
    return new Promise((resolve, reject) => {
      if (slot.pending.size === 0) slot.worker.ref();
      slot.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ id, jwk: job.jwk, hash: job.hash, spkiLength: job.spki.length, dataLength: job.data.length, buf }, [buf]);
    });
  }

  async close(): Promise<void> {
    const slots = this.slots.splice(0).filter((s): s is Slot => s !== undefined);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }
}

let shared: CsrVerifierPool | undefined;

/** The process-wide pool (workers start on first use and do not keep the process alive). */
export function sharedCsrVerifierPool(): CsrVerifierPool {
  return (shared ??= new CsrVerifierPool());
}
