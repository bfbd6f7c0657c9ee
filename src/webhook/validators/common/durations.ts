// Durations in specs. istiod decodes specs with the legacy jsonpb decoder, which reads a
// google.protobuf.Duration with Go's time.ParseDuration: "30ms", "5m", "1h30m" and "1.5s" all
// work. We keep nanoseconds as a bigint so the "whole milliseconds" rule is exact.

import { quote } from './fields';

/** Go's time.Duration is an int64 of nanoseconds. */
export const MAX_DURATION_NANOS = 9_223_372_036_854_775_807n;
export const NANOS_PER_MS = 1_000_000n;

const UNIT_NANOS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const PART = /(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/y;
/**
 * Fraction digits read; later ones are worth less than a nanosecond of an hour, and Go drops
 * them too. Keeps a million-digit fraction from costing a million-digit bigint.
 */
const FRACTION_DIGITS = 24;
/** A whole part with more significant digits than this is over Go's int64 nanoseconds. */
const WHOLE_DIGITS = 19;

/** Parses a Go duration into nanoseconds; undefined when it is not one. */
export function parseGoDuration(text: string): bigint | undefined {
  let pos = 0;
  let sign = 1n;
  if (text[0] === '-' || text[0] === '+') {
    sign = text[0] === '-' ? -1n : 1n;
    pos = 1;
  }
  if (text.slice(pos) === '0') return 0n;
  if (pos >= text.length) return undefined;
  let total = 0n;
  while (pos < text.length) {
    PART.lastIndex = pos;
    const m = PART.exec(text);
    if (!m || (m[1] === '' && (m[2] ?? '') === '')) return undefined;
    // PART only matches a unit UNIT_NANOS names.
    const unit = UNIT_NANOS[m[3] ?? ''];
    if (unit === undefined) return undefined;
    const digits = (m[1] ?? '').replace(/^0+/, '');
    if (digits.length > WHOLE_DIGITS) return undefined;
    const whole = BigInt(digits || '0') * unit;
    const fraction = (m[2] ?? '').slice(0, FRACTION_DIGITS);
    const frac = fraction ? (BigInt(fraction) * unit) / 10n ** BigInt(fraction.length) : 0n;
    total += whole + frac;
    if (total > MAX_DURATION_NANOS) return undefined;
    pos = PART.lastIndex;
  }
  return sign * total;
}

export function durationFormatError(value: unknown): string | undefined {
  if (typeof value !== 'string' || parseGoDuration(value) === undefined) {
    return `bad Duration: invalid duration ${quote(value)}, e.g. "1.5s", "30ms" or "1h30m"`;
  }
  return undefined;
}

/** istiod's ValidateDuration: at least 1ms and whole milliseconds. */
export function durationRuleError(nanos: bigint): string | undefined {
  if (nanos < NANOS_PER_MS) return 'duration must be greater than 1ms';
  if (nanos % NANOS_PER_MS !== 0n) return 'only durations to ms precision are supported';
  return undefined;
}
