// A Duration field read from a spec: its JSON form must parse, and istiod's range rules apply.

import { durationFormatError, parseGoDuration } from './durations';
import { Report } from './report';

/** Returns nanoseconds, or undefined when unset or malformed (malformed is reported). */
export function durationField(r: Report, v: unknown, path: string): bigint | undefined {
  if (v === undefined || v === null) return undefined;
  // Parsed once: durationFormatError alone would parse it too.
  const nanos = typeof v === 'string' ? parseGoDuration(v) : undefined;
  if (nanos === undefined) {
    const err = durationFormatError(v);
    if (err) r.error(path, err);
  }
  return nanos;
}
