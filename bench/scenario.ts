// What a benchmark scenario reports. `npm run bench [name...]` runs scenarios from
// bench/scenarios/, prints one table and writes bench/results/latest.json.

export interface Measurement {
  /** What was measured, e.g. "CSRs per second (64 in flight, RSA-2048 root)". */
  metric: string;
  /** The median over the scenario's repeated runs. */
  value: number;
  unit: string;
  /** Values of each run, so the spread is visible. */
  runs?: number[];
  /** A reference measured in the same run (e.g. the raw crypto.sign rate) and value/reference. */
  reference?: { metric: string; value: number; ratio: number };
  /** The target from the issue, as text (e.g. "< 1 ms"), and whether it was met. */
  target?: string;
  met?: boolean;
}

export interface Scenario {
  name: string;
  description: string;
  run(): Promise<Measurement[]>;
}

/** Median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Percentile p (0..100) by nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** What a closed-loop load generator reports for one timed run. */
export interface LoadResult {
  ok: number;
  failed: number;
  firstError?: string;
  elapsedMs: number;
  latencies: number[];
}

/**
 * Latency percentiles of repeated runs. Like every figure, p50 and p99 are the median of each
 * run's own, so one run caught in a burst of noise on a shared machine does not decide them; the
 * p99 of all runs' latencies pooled is given too.
 */
export function latencySummary(runs: readonly LoadResult[]): {
  p50s: number[];
  p99s: number[];
  p50: number;
  p99: number;
  pooledP99: number;
} {
  const of = (p: number) => runs.map((r) => (r.latencies.length ? percentile(r.latencies, p) : NaN));
  const p50s = of(50);
  const p99s = of(99);
  const all = runs.flatMap((r) => r.latencies);
  return { p50s, p99s, p50: median(p50s), p99: median(p99s), pooledP99: all.length ? percentile(all, 99) : NaN };
}
