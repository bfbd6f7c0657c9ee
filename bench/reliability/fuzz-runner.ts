// Runs fuzz targets: each case gets its own PRNG seeded from (run seed, target, case index), its
// outcome is counted, and every failure keeps what it takes to replay it alone. Memory is read
// after a forced GC once the targets are warm and again at the end.

import { caseSeed, Rng } from './prng';
import { CaseRecord, FuzzFailure, FuzzTarget } from './target';
import { collectGarbage } from './gc';

/** Longest one input may take before it counts as a hang (a quadratic or exponential path). */
export const SLOW_CASE_MS = 2000;
/** Heap growth (after GC, from the end of warm-up to the end of the run) that counts as a leak. */
export const MAX_HEAP_GROWTH_BYTES = 64 * 1024 * 1024;
/** Failures kept in full per target; the rest are only counted. */
export const MAX_FAILURES_KEPT = 20;
/** How much of a failing input a report prints. */
export const FAILURE_INPUT_CHARS = 600;
/** Inputs per target run (with another seed) before the heap is first read. */
const WARM_UP_INPUTS = 500;
/** Inputs run between yields to the event loop (asynchronous targets need it to progress). */
const YIELD_EVERY = 200;

export interface Failure {
  target: string;
  seed: number;
  caseIndex: number;
  kind: 'failure' | 'crash' | 'slow';
  message: string;
  input: string;
}

export interface TargetStats {
  target: string;
  inputs: number;
  accepted: number;
  refused: number;
  failures: number;
  ms: number;
  slowestMs: number;
  /** Heap after GC once this target's inputs are done (targets run one after another). */
  heapAfterMiB: number;
  tally: Record<string, number>;
}

export interface FuzzReport {
  seed: number;
  targets: TargetStats[];
  failures: Failure[];
  heap: { warmMiB: number; endMiB: number; growthMiB: number; bounded: boolean };
}

export interface FuzzOptions {
  seed: number;
  /** Inputs per target, by name (every target in the run has an entry). */
  inputs: ReadonlyMap<string, number>;
  /** Run only this case index (replay). */
  onlyCase?: number;
  /** Called for each failure as it happens. */
  onFailure?: (f: Failure) => void;
  /** Called every few thousand inputs. */
  onProgress?: (target: string, done: number, total: number) => void;
}

/** The innermost frames of the code under test (src/), else of anything, for a crash report. */
function where(e: Partial<Error> | null | undefined): string {
  const frames = (e?.stack ?? '').split('\n').filter((l) => l.trimStart().startsWith('at '));
  const ours = frames.filter((l) => l.includes('/src/'));
  const shown = (ours.length > 0 ? ours : frames).slice(0, 3).map((l) =>
    l
      .trim()
      .replace(/^at /, '')
      .replace(/\(?\/.*\/(src|bench|node_modules)\//, '($1/'),
  );
  return shown.length > 0 ? ` [at ${shown.join(' < ')}]` : '';
}

const mib = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

export function replayCommand(f: Pick<Failure, 'target' | 'seed' | 'caseIndex'>): string {
  return `npm run fuzz -- --target ${f.target} --seed ${f.seed} --case ${f.caseIndex}`;
}

export function formatFailure(f: Failure): string {
  const input =
    f.input.length > FAILURE_INPUT_CHARS
      ? `${f.input.slice(0, FAILURE_INPUT_CHARS)}… (${f.input.length} chars)`
      : f.input;
  return `FAIL [${f.kind}] ${f.target} seed=${f.seed} case=${f.caseIndex}: ${f.message}\n  replay: ${replayCommand(f)}\n  input: ${input}`;
}

async function runTarget(target: FuzzTarget, opts: FuzzOptions, failures: Failure[]): Promise<TargetStats> {
  const stats: TargetStats = {
    target: target.name,
    inputs: 0,
    accepted: 0,
    refused: 0,
    failures: 0,
    ms: 0,
    slowestMs: 0,
    heapAfterMiB: 0,
    tally: {},
  };
  const first = opts.onlyCase ?? 0;
  const end = opts.onlyCase !== undefined ? opts.onlyCase + 1 : (opts.inputs.get(target.name) ?? 0);
  const started = performance.now();
  let kept = 0;
  for (let i = first; i < end; i++) {
    const record: CaseRecord = { input: '' };
    const t0 = performance.now();
    let failure: Omit<Failure, 'target' | 'seed' | 'caseIndex' | 'input'> | undefined;
    try {
      const out = target.run(new Rng(caseSeed(opts.seed, target.name, i)), record);
      const verdict = typeof out === 'string' ? out : await out;
      if (verdict === 'accepted') stats.accepted++;
      else stats.refused++;
    } catch (err) {
      // Anything can be thrown: read name, message and stack only when present.
      const e = err as Partial<Error> | null | undefined;
      failure =
        err instanceof FuzzFailure
          ? { kind: 'failure', message: err.message }
          : { kind: 'crash', message: `${e?.name ?? 'thrown'}: ${String(e?.message ?? err).slice(0, 300)}${where(e)}` };
    }
    const ms = performance.now() - t0;
    const budget = Math.max(SLOW_CASE_MS, record.budgetMs ?? 0);
    if (!failure && ms > budget)
      failure = { kind: 'slow', message: `took ${Math.round(ms)} ms (limit ${Math.round(budget)} ms)` };
    stats.slowestMs = Math.max(stats.slowestMs, ms);
    stats.inputs++;
    if (failure) {
      stats.failures++;
      // Kept failures hold a cut of the input (a replay prints it whole): a run must not hold megabytes per failure.
      const input = opts.onlyCase !== undefined ? record.input : record.input.slice(0, FAILURE_INPUT_CHARS * 2);
      const f: Failure = { target: target.name, seed: opts.seed, caseIndex: i, input, ...failure };
      if (kept++ < MAX_FAILURES_KEPT) failures.push(f);
      opts.onFailure?.(f);
    }
    if ((i + 1) % YIELD_EVERY === 0) await new Promise((r) => setImmediate(r));
    if ((i + 1) % 10000 === 0) opts.onProgress?.(target.name, i + 1 - first, end - first);
  }
  stats.ms = performance.now() - started;
  if (target.tally) stats.tally = Object.fromEntries([...target.tally].sort((a, b) => b[1] - a[1]));
  return stats;
}

/** Runs every target for its share of inputs (after a warm-up of each), then measures the heap. */
export async function runFuzz(targets: readonly FuzzTarget[], opts: FuzzOptions): Promise<FuzzReport> {
  const failures: Failure[] = [];
  // Warm-up: a few hundred inputs per target with another seed, so code, caches and pools
  // exist before the heap is read; growth after that is what a long run would keep growing.
  if (opts.onlyCase === undefined) {
    for (const t of targets)
      await runTarget(
        t,
        {
          seed: opts.seed ^ 0x5eed,
          inputs: new Map([[t.name, Math.min(WARM_UP_INPUTS, opts.inputs.get(t.name) ?? 0)]]),
        },
        [],
      );
    for (const t of targets) t.tally?.clear();
  }
  const warm = await collectGarbage();
  const stats: TargetStats[] = [];
  for (const t of targets) {
    const s = await runTarget(t, opts, failures);
    s.heapAfterMiB = mib(await collectGarbage());
    stats.push(s);
  }
  const endHeap = await collectGarbage();
  const growth = endHeap - warm;
  return {
    seed: opts.seed,
    targets: stats,
    failures,
    heap: {
      warmMiB: mib(warm),
      endMiB: mib(endHeap),
      growthMiB: mib(growth),
      bounded: growth <= MAX_HEAP_GROWTH_BYTES,
    },
  };
}
