// Parses manifest files on one worker thread, so a large or hostile file never blocks the event
// loop that serves xDS, the CA and the webhook. One thread: local mode's folders are small, the
// machine is shared, and files are answered in the order they were asked for.
//
// A thread that takes longer than LOCAL_PARSE_TIMEOUT_MS on one file, or runs out of its
// LOCAL_PARSER_HEAP_MB heap, is replaced; that file is refused with the reason, the others are
// asked again of the new thread.

import { Worker } from 'node:worker_threads';
import type { FingerprintedObject, ParseAck, ParseReply, ParseRequest, ParseResult } from './parse-protocol';

/**
 * Longest one file may take to parse. 8 MiB of YAML takes the yaml package seconds on a busy core;
 * a file still parsing after a minute is pathological, and while it parses no other file can.
 */
export const LOCAL_PARSE_TIMEOUT_MS = 60_000;

/**
 * Heap of the parser thread. yaml's document model takes a few tens of times the file's size
 * (BENCHMARKS.md, "Figures behind the code's comments"), so every file within MAX_MANIFEST_BYTES of
 * that shape fits; a file that needs more is refused instead of growing the process without bound.
 */
export const LOCAL_PARSER_HEAP_MB = 1024;

/** Jobs handed to the thread at once; the rest wait here, so a replaced thread re-runs few. */
export const LOCAL_PARSE_IN_FLIGHT = 32;

export type ParseOutcome = (ParseResult & { objects: FingerprintedObject[] }) | { type: 'stopped' };

interface Job {
  request: ParseRequest;
  objects: FingerprintedObject[];
  resolve: (outcome: ParseOutcome) => void;
}

/**
 * The thread's entry, beside this module in whichever form runs: the compiled .js, or under jest
 * the .ts source (test/support/ts-workers.ts starts those through swc).
 */
const WORKER_FILE = require.resolve('./parse-worker');

export interface ManifestParserOptions {
  /** Default LOCAL_PARSE_TIMEOUT_MS; tests of the limit make it short. */
  timeoutMs?: number;
  /** Default LOCAL_PARSER_HEAP_MB. */
  heapMb?: number;
}

export class ManifestParser {
  private readonly timeoutMs: number;
  private readonly heapMb: number;
  private worker: Worker | undefined;
  /** Sent to the thread, in its order: the first is the one being parsed. */
  private readonly sent: Job[] = [];
  private readonly waiting: Job[] = [];
  private watchdog: NodeJS.Timeout | undefined;
  /** The current thread has started and runs jobs; the time limit only runs once it has. */
  private ready = false;
  private nextId = 1;
  private closed = false;

  constructor(options: ManifestParserOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? LOCAL_PARSE_TIMEOUT_MS;
    this.heapMb = options.heapMb ?? LOCAL_PARSER_HEAP_MB;
  }

  parse(file: string, abs: string, knownHash: string | undefined): Promise<ParseOutcome> {
    if (this.closed) return Promise.resolve({ type: 'stopped' });
    return new Promise((resolve) => {
      this.waiting.push({ request: { id: this.nextId++, file, abs, knownHash }, objects: [], resolve });
      this.pump();
    });
  }

  /** Stops the thread; jobs not finished resolve as `stopped`. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    this.clearWatchdog();
    for (const job of [...this.sent.splice(0), ...this.waiting.splice(0)]) job.resolve({ type: 'stopped' });
    await worker?.terminate();
  }

  private pump(): void {
    while (this.sent.length < LOCAL_PARSE_IN_FLIGHT) {
      const job = this.waiting.shift();
      if (!job) break;
      this.sent.push(job);
      this.thread().postMessage(job.request);
      if (this.sent.length === 1 && this.ready) this.armWatchdog();
    }
    // Keep the process alive while files are being parsed, not while the thread idles.
    if (this.sent.length > 0) this.worker?.ref();
    else this.worker?.unref();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_FILE, { resourceLimits: { maxOldGenerationSizeMb: this.heapMb } });
    this.ready = false;
    worker.on('message', (reply: ParseReply) => this.onReply(worker, reply));
    worker.on('error', (err) =>
      this.replace(
        worker,
        (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `parsing needs more than LOCAL_PARSER_HEAP_MB (${this.heapMb} MB) of heap`
          : `the parser thread failed: ${err.message}`,
      ),
    );
    worker.on('exit', (code) => this.replace(worker, `the parser thread exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  private onReply(worker: Worker, reply: ParseReply): void {
    if (worker !== this.worker) return;
    if ('ready' in reply) {
      this.ready = true;
      if (this.sent.length > 0) this.armWatchdog();
      return;
    }
    const job = this.sent[0];
    if (!job || job.request.id !== reply.id) return; // cannot happen: the thread answers in order
    if ('objects' in reply) {
      for (const o of reply.objects) job.objects.push(o);
      // Progress: the file parsed, its objects are on their way.
      this.clearWatchdog();
      this.armWatchdog();
      // Ask for the next chunk on the next turn, so chunks never queue up within one.
      setImmediate(() => {
        if (worker === this.worker) worker.postMessage({ ack: reply.id } satisfies ParseAck);
      });
      return;
    }
    this.sent.shift();
    this.clearWatchdog();
    if (this.sent.length > 0 && this.ready) this.armWatchdog();
    // A refused file contributes nothing, even if chunks arrived before the refusal.
    job.resolve({ ...reply.done, objects: reply.done.type === 'parsed' ? job.objects : [] });
    this.pump();
  }

  /** The thread is stuck or gone: refuse the file it was on, and re-ask the others of a new one. */
  private replace(worker: Worker, reason: string): void {
    if (worker !== this.worker || this.closed) return;
    this.worker = undefined;
    this.clearWatchdog();
    void worker.terminate();
    const failed = this.sent.shift();
    this.waiting.unshift(...this.sent.splice(0).map((j) => ({ ...j, objects: [] })));
    failed?.resolve({ type: 'failed', hash: '', line: 1, message: reason, objects: [] });
    this.pump();
  }

  private armWatchdog(): void {
    const worker = this.worker;
    this.watchdog = setTimeout(() => {
      if (worker) this.replace(worker, `parsing took longer than LOCAL_PARSE_TIMEOUT_MS (${this.timeoutMs} ms)`);
    }, this.timeoutMs);
    this.watchdog.unref();
  }

  private clearWatchdog(): void {
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = undefined;
  }
}
