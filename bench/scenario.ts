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
