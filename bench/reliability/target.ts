// What the driver needs from a fuzz target: run one input drawn from a seeded PRNG and say
// whether it was accepted or cleanly refused. A contract violation is thrown as FuzzFailure;
// any other exception escaping a target is a crash of the code under test.

import type { Rng } from './prng';

export type Verdict = 'accepted' | 'refused';

/** A broken rule (a 5xx, a differential mismatch, an unexpected state), as opposed to a crash. */
export class FuzzFailure extends Error {
  override name = 'FuzzFailure';
}

/** Filled by the target before it runs the code under test, so a failure can print its input. */
export interface CaseRecord {
  /** A printable form of the input (JSON, escaped bytes, base64 DER). */
  input: string;
  /** Time this input may take before it counts as a hang; SLOW_CASE_MS when unset. */
  budgetMs?: number;
}

export interface FuzzTarget {
  readonly name: string;
  /** What the target feeds and what it checks, for the report. */
  readonly describe: string;
  /** Runs one input. Returns the verdict; throws FuzzFailure for a broken rule. */
  run(rng: Rng, record: CaseRecord): Verdict | Promise<Verdict>;
  /** Counters the target keeps beyond accepted/refused (e.g. where it is stricter than llhttp). */
  readonly tally?: Map<string, number>;
  close?(): void | Promise<void>;
}

export function count(tally: Map<string, number>, key: string): void {
  tally.set(key, (tally.get(key) ?? 0) + 1);
}

/** Bytes as a one-line string: printable ASCII as is, everything else escaped. */
export function escapeBytes(buf: Uint8Array, max = 2000): string {
  let out = '';
  for (let i = 0; i < buf.length && out.length < max; i++) {
    const b = buf[i]!;
    if (b === 0x0d) out += '\\r';
    else if (b === 0x0a) out += '\\n';
    else if (b === 0x5c) out += '\\\\';
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += `\\x${b.toString(16).padStart(2, '0')}`;
  }
  return buf.length > 0 && out.length >= max ? `${out}… (${buf.length} bytes)` : out;
}
