// Local mode (--configDir): how convergence grows with the number of files, and how long the
// event loop is held while an 8 MB manifest loads.
//
// Convergence: a LocalSource watches an empty folder while a worker thread writes N ConfigMap
// files as fast as it can (as `cp -r` or a generator script would); the time is from the first
// write until the store holds all N. The 4k/1k ratio shows whether the cost per file grows with
// the folder (linear convergence gives 4; the issue allows 5).
//
// Stall: an 8 MB multi-document YAML of pods is renamed into a watched folder; the longest
// event-loop delay (perf_hooks.monitorEventLoopDelay at 1 ms resolution) is taken from the
// rename until the store holds every pod.

import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { LocalSource } from '../../src/store/local/local-source';
import { MemoryStore } from '../../src/store/memory-store';
import { median, type Measurement, type Scenario } from '../scenario';

const SIZES = [1000, 2000, 4000] as const;
const RUNS = 3;
/** Far longer than any run: everything measured comes through the watcher. */
const NO_RESCAN_MS = 3_600_000;
const BIG_MANIFEST_BYTES = 7.9e6;

const WRITER_SOURCE = `
const { parentPort, workerData: { dir, n } } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
for (let i = 0; i < n; i++) {
  fs.writeFileSync(path.join(dir, 'cm-' + i + '.yaml'), 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: cm-' + i + '\\n  namespace: bench\\ndata:\\n  value: "' + i + '"\\n');
}
parentPort.postMessage(performance.timeOrigin + performance.now());
`;

/** Resolves when the store holds `n` objects of `kind`, counted from its events (not by listing). */
function whenHolding(store: MemoryStore, kind: 'ConfigMap' | 'Pod', n: number): Promise<void> {
  let count = store.list(kind).length;
  return new Promise((resolve) => {
    if (count >= n) {
      resolve();
      return;
    }
    const off = store.subscribe((batch) => {
      for (const e of batch) if (e.kind === kind) count += e.type === 'add' ? 1 : e.type === 'delete' ? -1 : 0;
      if (count < n) return;
      off();
      resolve();
    });
  });
}

interface Convergence {
  /** From the first write until the store holds all n. */
  totalMs: number;
  /** From the last write until then: the source's own share. */
  afterLastWriteMs: number;
}

async function convergence(n: number): Promise<Convergence> {
  const dir = mkdtempSync(path.join(tmpdir(), 'istiod-ts-bench-local-'));
  const store = new MemoryStore();
  const source = new LocalSource({ dir, writer: store, rescanIntervalMs: NO_RESCAN_MS });
  try {
    await source.start();
    const done = whenHolding(store, 'ConfigMap', n);
    const started = performance.now();
    const writer = new Worker(WRITER_SOURCE, { eval: true, workerData: { dir, n } });
    const lastWrite = new Promise<number>((resolve) =>
      writer.once('message', (at: number) => resolve(at - performance.timeOrigin)),
    );
    await done;
    const end = performance.now();
    const last = await lastWrite;
    await writer.terminate();
    return { totalMs: end - started, afterLastWriteMs: end - last };
  } finally {
    await source.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** About `bytes` of multi-document YAML: pods of ~1 KB each, as the hostile-input test uses. */
function podsManifest(bytes: number): { text: string; pods: number } {
  const pad = 'x'.repeat(600);
  const docs: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes - 1100; i++) {
    const doc = `apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-${i}\n  namespace: ns-${i % 50}\n  labels: {app: app-${i % 100}}\n  annotations: {note: "${pad}"}\nspec:\n  nodeName: node-${i % 20}\n  serviceAccountName: sa-${i % 10}\n  containers:\n  - name: app\n    image: registry.example/app:1.0\n    ports: [{containerPort: 8080}]\nstatus:\n  podIP: 10.0.${(i >> 8) & 255}.${i & 255}\n  phase: Running\n---\n`;
    docs.push(doc);
    size += doc.length;
  }
  return { text: docs.join(''), pods: docs.length };
}

/** Time for start() to load n files already in the folder. */
async function coldStart(n: number): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), 'istiod-ts-bench-local-'));
  for (let i = 0; i < n; i++)
    writeFileSync(
      path.join(dir, `cm-${i}.yaml`),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\n  namespace: bench\n`,
    );
  const store = new MemoryStore();
  const source = new LocalSource({ dir, writer: store, watch: false });
  try {
    const started = performance.now();
    await source.start();
    return performance.now() - started;
  } finally {
    await source.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function bigManifestStall(text: string, pods: number): Promise<{ stallMs: number; loadMs: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'istiod-ts-bench-local-'));
  const outside = mkdtempSync(path.join(tmpdir(), 'istiod-ts-bench-staging-'));
  const store = new MemoryStore();
  const source = new LocalSource({ dir, writer: store, rescanIntervalMs: NO_RESCAN_MS });
  try {
    await source.start();
    // Written outside the watched folder first: the bench's own 8 MB write is not the source's stall.
    writeFileSync(path.join(outside, 'big.yaml'), text);
    const done = whenHolding(store, 'Pod', pods);
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const started = performance.now();
    renameSync(path.join(outside, 'big.yaml'), path.join(dir, 'big.yaml'));
    await done;
    const loadMs = performance.now() - started;
    delay.disable();
    return { stallMs: delay.max / 1e6, loadMs };
  } finally {
    await source.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  }
}

const scenario: Scenario = {
  name: 'local',
  description: `local mode: convergence of ${SIZES.join('/')} files written into a watched --configDir, and the event-loop stall while an 8 MB manifest loads`,
  async run() {
    const out: Measurement[] = [];
    const medians = new Map<number, number>();
    await convergence(200); // warm-up: JIT, the parser thread's first start
    const starts = new Map<number, number>();
    for (const n of SIZES) {
      const runs: Convergence[] = [];
      for (let r = 0; r < RUNS; r++) runs.push(await convergence(n));
      const totals = runs.map((c) => c.totalMs);
      const afterLast = runs.map((c) => c.afterLastWriteMs);
      medians.set(n, median(totals));
      out.push({
        metric: `folder convergence, ${n} files written into a watched folder (first write to all in the store)`,
        value: median(totals),
        unit: 'ms',
        runs: totals,
      });
      out.push({
        metric: `  of which after the last write (${n} files)`,
        value: median(afterLast),
        unit: 'ms',
        runs: afterLast,
      });
    }
    // The sizes are SIZES' first and last.
    const ratio = medians.get(4000)! / medians.get(1000)!;
    out.push({ metric: 'convergence 4k files / 1k files', value: ratio, unit: 'x', target: '<= 5', met: ratio <= 5 });
    for (const n of SIZES) {
      const runs: number[] = [];
      for (let r = 0; r < RUNS; r++) runs.push(await coldStart(n));
      starts.set(n, median(runs));
      out.push({ metric: `start() with ${n} files already in the folder`, value: median(runs), unit: 'ms', runs });
    }
    out.push({ metric: 'start() 4k files / 1k files', value: starts.get(4000)! / starts.get(1000)!, unit: 'x' });

    const { text, pods } = podsManifest(BIG_MANIFEST_BYTES);
    const stalls: number[] = [];
    const loads: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const { stallMs, loadMs } = await bigManifestStall(text, pods);
      stalls.push(stallMs);
      loads.push(loadMs);
    }
    const mb = (Buffer.byteLength(text) / 1e6).toFixed(1);
    out.push({
      metric: `longest event-loop stall while a ${mb} MB manifest (${pods} pods) loads`,
      value: median(stalls),
      unit: 'ms',
      runs: stalls,
      target: '< 100 ms',
      met: median(stalls) < 100,
    });
    out.push({
      metric: `time until the store holds all ${pods} pods of the ${mb} MB manifest`,
      value: median(loads),
      unit: 'ms',
      runs: loads,
    });
    return out;
  },
};

export default scenario;
