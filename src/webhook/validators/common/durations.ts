// google.protobuf.Duration in its JSON form ("1.5s", "-2s", "0.000001s"), and istiod's rules on
// durations in policies.

export const MAX_DURATION_SECONDS = 315_576_000_000;

const DURATION = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/;

/** Parses a JSON Duration into nanoseconds (a bigint, so nanosecond precision survives). */
export function parseProtoDuration(text: string): bigint | undefined {
  const m = DURATION.exec(text);
  if (!m) return undefined;
  const seconds = BigInt(m[2]!);
  if (seconds > BigInt(MAX_DURATION_SECONDS)) return undefined;
  const nanos = BigInt((m[3] ?? '').padEnd(9, '0'));
  const total = seconds * 1_000_000_000n + nanos;
  return m[1] ? -total : total;
}

export const NANOS_PER_MS = 1_000_000n;

export function durationFormatError(value: unknown): string | undefined {
  if (typeof value !== 'string' || parseProtoDuration(value) === undefined) {
    return `invalid duration ${JSON.stringify(value)}: expected seconds with an "s" suffix, e.g. "1.5s"`;
  }
  return undefined;
}

/** istiod's ValidateDuration: at least 1ms and whole milliseconds. */
export function durationRuleError(nanos: bigint): string | undefined {
  if (nanos < NANOS_PER_MS) return 'duration must be greater than 1ms';
  if (nanos % NANOS_PER_MS !== 0n) return 'only durations to ms precision are supported';
  return undefined;
}
