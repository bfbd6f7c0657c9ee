// Typed reads of a spec decoded from JSON, with the decoding rules istiod gets from protobuf's
// JSON mapping: null means unset, an empty list or map is indistinguishable from an unset one,
// integers may be written as strings, enums by name or number. A value of the wrong type is an
// error at its path (istiod rejects it while decoding, before validation).

import type { EnumType } from './enum-types';
import { idx, Report } from './report';

export type JsonObject = { [k: string]: unknown };

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function obj(r: Report, v: unknown, path: string): JsonObject | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) {
    r.error(path, `must be an object, got ${describe(v)}`);
    return undefined;
  }
  return v;
}

/**
 * A message field istiod requires: obj's read, plus `nullMessage` at `path` when it is unset (a
 * value of another type gets obj's type error as well).
 */
export function required(r: Report, v: unknown, path: string, nullMessage: string): JsonObject | undefined {
  const o = obj(r, v, path);
  if (!o) r.error(path, nullMessage);
  return o;
}

/** Visits each entry of a repeated message field; a null entry gets `nullMessage` at its index (see required). */
export function eachMessage(
  r: Report,
  v: unknown,
  path: string,
  nullMessage: string,
  visit: (entry: JsonObject, entryPath: string, index: number) => void,
): void {
  list(r, v, path)?.forEach((item, i) => {
    const p = idx(path, i);
    const entry = required(r, item, p, nullMessage);
    if (entry) visit(entry, p, i);
  });
}

/**
 * Visits each entry of a list already read with `list`: a null entry gets `nullMessage` at its
 * index, an entry of another type obj's type error alone.
 */
export function eachListedMessage(
  r: Report,
  items: readonly unknown[] | undefined,
  path: string,
  nullMessage: string,
  visit: (entry: JsonObject, entryPath: string) => void,
): void {
  items?.forEach((item, i) => {
    const p = idx(path, i);
    if (!isObject(item)) {
      if (item === null) r.error(p, nullMessage);
      else obj(r, item, p);
      return;
    }
    visit(item, p);
  });
}

/** A repeated field; empty decodes to unset, as in protobuf. Null elements are kept as null. */
export function list(r: Report, v: unknown, path: string): unknown[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) {
    r.error(path, `must be a list, got ${describe(v)}`);
    return undefined;
  }
  return v.length === 0 ? undefined : v;
}

export function str(r: Report, v: unknown, path: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') {
    r.error(path, `must be a string, got ${describe(v)}`);
    return undefined;
  }
  return v;
}

/** A repeated string field; a non-string element is an error and is left out. */
export function strList(r: Report, v: unknown, path: string): string[] | undefined {
  const items = list(r, v, path);
  if (!items) return undefined;
  const out: string[] = [];
  items.forEach((item, i) => {
    if (typeof item === 'string') out.push(item);
    else r.error(`${path}[${i}]`, `must be a string, got ${describe(item)}`);
  });
  return out;
}

export interface IntRange {
  min: number;
  max: number;
}

export const INT32: IntRange = { min: -2147483648, max: 2147483647 };
export const UINT32: IntRange = { min: 0, max: 4294967295 };

/** An integer field (int32/uint32 in the proto); protobuf JSON also accepts it as a string. */
export function int(r: Report, v: unknown, path: string, range: IntRange = INT32): number | undefined {
  if (v === undefined || v === null) return undefined;
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) n = Number(v.trim());
  else {
    r.error(path, `must be an integer, got ${describe(v)}`);
    return undefined;
  }
  if (!Number.isInteger(n) || n < range.min || n > range.max) {
    r.error(path, `must be an integer in ${range.min}..${range.max}, got ${String(v)}`);
    return undefined;
  }
  return n;
}

/** A double/float field. */
export function num(r: Report, v: unknown, path: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  r.error(path, `must be a number, got ${describe(v)}`);
  return undefined;
}

export function bool(r: Report, v: unknown, path: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') {
    r.error(path, `must be true or false, got ${describe(v)}`);
    return undefined;
  }
  return v;
}

/** A google.protobuf.BoolValue/UInt32Value wrapper: the bare value, or null for unset. */
export const wrappedBool = bool;

/**
 * An enum field, by name or by number. Returns the name; unset returns the first (zero) value,
 * which is what protobuf reads for a missing enum. A number the enum does not name is refused
 * here (the decoder would pass it on, but no validator has a rule for it).
 */
export function enumOf<T extends string>(r: Report, v: unknown, path: string, type: EnumType<T>): T {
  const values = type.values;
  if (v === undefined || v === null) return values[0];
  const named = typeof v === 'number' && Number.isInteger(v) && v >= 0 ? values[v] : undefined;
  if (named !== undefined) return named;
  if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as T;
  r.error(path, `unknown value ${quote(v)} for enum ${type.fullName}`);
  return values[0];
}

/** A map<string,string>; empty decodes to unset. */
export function strMap(r: Report, v: unknown, path: string): Record<string, string> | undefined {
  const o = obj(r, v, path);
  if (!o) return undefined;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(o)) {
    if (typeof val === 'string') out[k] = val;
    else r.error(`${path}[${JSON.stringify(k)}]`, `must be a string, got ${describe(val)}`);
  }
  return Object.keys(out).length === 0 && Object.keys(o).length === 0 ? undefined : out;
}

/**
 * A user value as a message shows it: strings and numbers as JSON writes them, lists and
 * objects by their kind only. Never recursive, so a value nested thousands of levels deep (which
 * JSON.stringify and String would overflow the stack on) is as cheap to show as any other.
 */
export function quote(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'object' && v !== null) return Array.isArray(v) ? 'a list' : 'an object';
  return String(v);
}

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  // A number, boolean or undefined here, which quote() writes as String() does.
  return `${typeof v} ${quote(v)}`;
}
