// A key-order-independent rendering of JSON, so reordering fields in a file is not a change.
// Recursive: callers pass values whose depth is bounded (manifests are refused past
// MAX_MANIFEST_DEPTH before they get here).

import { createHash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  // JSON has no undefined, functions or symbols (JSON.stringify would give undefined, whatever its type says).
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return 'null';
  return JSON.stringify(value);
}

/** A short digest of canonicalJson(value): equal for equal objects, kept instead of the text. */
export function fingerprintOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('base64');
}
