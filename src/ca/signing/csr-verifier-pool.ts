// Verifies CSR signatures, and signs the certificates they ask for, on worker threads. Importing
// a public key (createPublicKey) costs OpenSSL 3 tens to hundreds of microseconds and always runs
// on the calling thread, as does the key preparation of crypto.verify; on the event loop that
// would dominate the CA's per-request cost.
//
// One hop per certificate: the worker that verifies a CSR also signs its TBSCertificate with the
// CA key (registered with every worker once), instead of answering the event loop and having it
// queue a second job on the libuv pool. On two cores every thread handoff is a wake-up and a
// context switch, and those cost as much as the work. Jobs posted during one event-loop turn go
// to a worker as one message, so a burst of CSRs wakes each worker once, not once per CSR.
//
// The key goes over as a JWK where it has one: OpenSSL imports that through a direct constructor,
// about half the cost of its DER decoder chain for P-256 and a twentieth for RSA.

import * as nodeCrypto from 'node:crypto';
import * as os from 'node:os';
import { Worker } from 'node:worker_threads';
import { runJob, type WireJob, type WireResult, type WorkerMessage } from './csr-verify-job';

export { RESULT_FLUSH_MS } from './csr-verify-job';

/** Worker threads verifying CSRs and signing leaves; at most the machine's parallelism. */
export const CSR_VERIFY_MAX_WORKERS = 4;
/**
 * Share of the event loop's time that lone callers' jobs may take inline. A node with one
 * certificate request in flight is served on the event loop at once: under another node's flood,
 * the round trip through a busy worker (queueing there, the thread's wake-up, the result's turn
 * back) cost it many times the job itself. Beyond this share (many quiet nodes
 * at once: a mass renewal) their jobs go to the workers like everyone's, which keeps the event
 * loop free for the transport.
 */
export const INLINE_SHARE = 0.25;
/** Inline time that may be spent at once, ms, before INLINE_SHARE paces it. */
export const INLINE_BURST_MS = 5;
/**
 * A lone caller's job runs inline only while the workers hold at least this many jobs each: with
 * idle workers the round trip is short, and signing on the event loop would only take it from the
 * transport (a single client with few calls in flight loses rate that way).
 */
export const INLINE_MIN_QUEUED_PER_WORKER = 2;

export interface VerifyJob {
  spki: Buffer;
  /** The same key as a JWK, imported instead of the DER when present (several times cheaper). */
  jwk?: nodeCrypto.JsonWebKey | undefined;
  hash: string;
  data: Buffer;
  signature: Buffer;
}

/** What to sign once the CSR verifies: a TBSCertificate, with a key from registerKey. */
export interface SignJob {
  key: number;
  hash: string;
  tbs: Buffer;
}

/** ok: the signature verifies; otherwise `error` says why (bad key or bad signature). */
export interface VerifyOutcome {
  ok: boolean;
  error?: string;
  /** The certificate signature, when a SignJob was given and the CSR verified. */
  certificateSignature?: Buffer;
  /** The CSR was fine but signing failed (the CA's fault, not the caller's). */
  signingFailed?: boolean;
}

/**
 * The worker's entry, beside this module in whichever form runs: the compiled .js, or under jest
 * the .ts source (test/support/ts-workers.ts starts those through swc).
 */
const WORKER_FILE = require.resolve('./csr-verify-worker');

/** Posts one message of the worker's protocol (csr-verify-job.ts). */
function post(worker: Worker, message: WorkerMessage): void {
  worker.postMessage(message);
}

interface Pending {
  resolve: (o: VerifyOutcome) => void;
  reject: (e: Error) => void;
  lane: string | undefined;
}

interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Jobs waiting for the end of this event-loop turn. */
  queued: WireJob[];
}

export class CsrVerifierPool {
  private readonly slots: (Slot | undefined)[] = [];
  private readonly keys = new Map<number, nodeCrypto.KeyObject>();
  private nextId = 1;
  private nextKey = 1;
  private flushScheduled = false;
  /** Unanswered jobs per lane, pool-wide. */
  private readonly laneJobs = new Map<string, number>();
  /** Event-loop time lone callers' jobs may still take inline (a token bucket in ms). */
  private inlineBudgetMs = INLINE_BURST_MS;
  private inlineRefilledAt = performance.now();
  /** Jobs run inline, for tests and /debug. */
  inlineJobs = 0;

  constructor(private readonly size = Math.max(1, Math.min(CSR_VERIFY_MAX_WORKERS, os.availableParallelism()))) {}

  /** Worker threads this pool runs at most. */
  get workers(): number {
    return this.size;
  }

  /** Makes a CA private key available to the workers for signing; returns its handle. */
  registerKey(key: nodeCrypto.KeyObject): number {
    const id = this.nextKey++;
    this.keys.set(id, key);
    for (const slot of this.slots) if (slot) post(slot.worker, { keys: [[id, key]] });
    return id;
  }

  /** Drops a key that no longer signs (after a CA rotation). */
  forgetKey(id: number): void {
    if (!this.keys.delete(id)) return;
    for (const slot of this.slots) if (slot) post(slot.worker, { forget: id });
  }

  private spawn(index: number): Slot {
    const slot: Slot = { worker: new Worker(WORKER_FILE), pending: new Map(), queued: [] };
    if (this.keys.size > 0) post(slot.worker, { keys: [...this.keys] });
    slot.worker.on('message', (results: WireResult[]) => {
      for (const r of results) {
        const p = slot.pending.get(r.id);
        if (!p) continue;
        slot.pending.delete(r.id);
        this.laneDone(p.lane);
        p.resolve(outcomeOf(r));
      }
      // An idle worker must not keep the process alive; a busy one must, until it answers.
      if (slot.pending.size === 0 && slot.queued.length === 0) slot.worker.unref();
    });
    const fail = (err: Error) => {
      // A dead worker fails only its own jobs (callers answer INTERNAL) and is replaced on next use.
      if (this.slots[index] === slot) this.slots[index] = undefined;
      for (const p of slot.pending.values()) {
        this.laneDone(p.lane);
        p.reject(err);
      }
      slot.pending.clear();
      slot.queued.length = 0;
    };
    slot.worker.on('error', fail);
    slot.worker.on('exit', () => fail(new Error('CSR verifier worker exited')));
    // Attaching a 'message' listener re-references the worker's port, so unref comes last.
    slot.worker.unref();
    return slot;
  }

  private flush = (): void => {
    this.flushScheduled = false;
    for (const slot of this.slots) {
      if (!slot || slot.queued.length === 0) continue;
      const jobs = slot.queued.splice(0);
      post(slot.worker, { jobs });
    }
  };

  private laneDone(lane: string | undefined): void {
    if (lane === undefined) return;
    const n = this.laneJobs.get(lane) ?? 0;
    if (n <= 1) this.laneJobs.delete(lane);
    else this.laneJobs.set(lane, n - 1);
  }

  private submit(job: WireJob): Promise<VerifyOutcome> {
    let index = 0;
    const load = (i: number) => (this.slots[i] ? this.slots[i].pending.size : 0);
    for (let i = 1; i < this.size; i++) if (load(i) < load(index)) index = i;
    const slot = (this.slots[index] ??= this.spawn(index));
    // The one job of a quiet lane (a node with nothing else in the pool) is posted at once, not
    // at the end of the event-loop turn: under a flood that turn is long, and the batching it
    // buys only matters to the node sending many.
    const quiet = job.lane !== undefined && !this.laneJobs.has(job.lane);
    if (job.lane !== undefined) this.laneJobs.set(job.lane, (this.laneJobs.get(job.lane) ?? 0) + 1);
    return new Promise((resolve, reject) => {
      if (slot.pending.size === 0) slot.worker.ref();
      slot.pending.set(job.id, { resolve, reject, lane: job.lane });
      if (quiet) {
        post(slot.worker, { jobs: [job] });
        return;
      }
      slot.queued.push(job);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /**
   * Verifies a CSR's signature; with `sign`, also signs the certificate when it verifies. Jobs of
   * different `lane`s (requesting nodes) are served round-robin inside each worker. `alone`: the
   * caller has no other request in flight, so while the workers are busy with others' jobs
   * (INLINE_MIN_QUEUED_PER_WORKER) the job runs on the event loop at once, as the inline budget
   * (INLINE_SHARE) allows.
   */
  verify(job: VerifyJob, sign?: SignJob, lane?: string, alone = false): Promise<VerifyOutcome> {
    const wire = wireJob(this.nextId++, job, sign);
    if (lane) wire.lane = lane;
    if (this.inlineReady(alone)) return Promise.resolve(this.runInline(wire));
    return this.submit(wire);
  }

  /**
   * Whether a job with this `alone` would run on the event loop if verify() were called now: the
   * caller is alone, the workers are busy with others' jobs, and the inline budget has time left.
   * A yes holds for a verify() later in the same synchronous run (the budget only refills with
   * time, and the workers' answers need an event-loop turn), so a caller can use it to skip
   * waiting for a worker slot it will not take.
   */
  inlineReady(alone: boolean): boolean {
    return alone && this.queuedJobs() >= this.size * INLINE_MIN_QUEUED_PER_WORKER && this.inlineBudgetLeft();
  }

  /** Jobs posted to the workers and not answered yet. */
  private queuedJobs(): number {
    let n = 0;
    for (const slot of this.slots) n += slot?.pending.size ?? 0;
    return n;
  }

  /** Refills the inline budget (at INLINE_SHARE of the time elapsed) and says whether any is left. */
  private inlineBudgetLeft(): boolean {
    const now = performance.now();
    this.inlineBudgetMs = Math.min(INLINE_BURST_MS, this.inlineBudgetMs + (now - this.inlineRefilledAt) * INLINE_SHARE);
    this.inlineRefilledAt = now;
    return this.inlineBudgetMs > 0;
  }

  private runInline(wire: WireJob): VerifyOutcome {
    const started = performance.now();
    const r = runJob(wire, this.keys);
    this.inlineBudgetMs -= performance.now() - started;
    this.inlineJobs++;
    return outcomeOf(r);
  }

  /** Signs a TBSCertificate without a CSR to verify. */
  sign(sign: SignJob): Promise<VerifyOutcome> {
    return this.submit(wireJob(this.nextId++, undefined, sign));
  }

  async close(): Promise<void> {
    const slots = this.slots.splice(0).filter((s): s is Slot => s !== undefined);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }
}

function outcomeOf(r: WireResult): VerifyOutcome {
  const outcome: VerifyOutcome = { ok: r.ok };
  if (r.error) outcome.error = r.error;
  if (r.signing) outcome.signingFailed = true;
  if (r.signature)
    outcome.certificateSignature = Buffer.from(r.signature.buffer, r.signature.byteOffset, r.signature.byteLength);
  return outcome;
}

function wireJob(id: number, verify: VerifyJob | undefined, sign: SignJob | undefined): WireJob {
  const parts = [verify?.spki, verify?.data, verify?.signature, sign?.tbs];
  // One exact-size copy: cloning the Buffers themselves would copy the whole (pooled, usually
  // 8 KiB) ArrayBuffer behind each of them.
  const buf = new Uint8Array(parts.reduce((n, p) => n + (p?.length ?? 0), 0));
  let at = 0;
  for (const p of parts) {
    if (!p) continue;
    buf.set(p, at);
    at += p.length;
  }
  const job: WireJob = {
    id,
    buf,
    spkiLength: verify?.spki.length ?? 0,
    dataLength: verify?.data.length ?? 0,
    signatureLength: verify?.signature.length ?? 0,
  };
  if (verify) {
    job.hash = verify.hash;
    if (verify.jwk) job.jwk = verify.jwk;
  }
  if (sign) {
    job.signKey = sign.key;
    job.signHash = sign.hash;
  }
  return job;
}

let shared: CsrVerifierPool | undefined;

/** The process-wide pool (workers start on first use and do not keep the process alive). */
export function sharedCsrVerifierPool(): CsrVerifierPool {
  return (shared ??= new CsrVerifierPool());
}
