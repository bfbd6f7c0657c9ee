// Go-style durations ("100ms", "1h30m", "87600h"), because istiod's flags and env vars use
// time.Duration and operators copy values between the two.

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;

/** Parses a Go duration into milliseconds; throws with the reason when it is not one. */
export function parseDuration(text: string): number {
  const value = text.trim();
  if (value === '0') return 0;
  if (value === '') throw new Error('empty duration');
  let sign = 1;
  let pos = 0;
  if (value[0] === '-' || value[0] === '+') {
    sign = value[0] === '-' ? -1 : 1;
    pos = 1;
  }
  let total = 0;
  let parts = 0;
  while (pos < value.length) {
    PART.lastIndex = pos;
    const m = PART.exec(value);
    if (!m) {
      throw new Error(
        `invalid duration "${text}": expected a number and a unit (ns, us, ms, s, m, h), e.g. "10s" or "1h30m"`,
      );
    }
    const unitMs = UNIT_MS[m[2] ?? ''];
    // PART matches only the units UNIT_MS lists.
    if (unitMs === undefined) throw new Error(`invalid duration "${text}": unknown unit`);
    total += Number(m[1]) * unitMs;
    pos = PART.lastIndex;
    parts++;
  }
  if (parts === 0) throw new Error(`invalid duration "${text}"`);
  return sign * total;
}
