// JSON with object keys sorted at every level, so equal values compare equal whatever order
// their keys were written in. Small values (every VirtualService match) are written by a plain
// recursive walk that builds one string; a value nested deeper than CANONICAL_RECURSION_DEPTH is
// written again with an explicit stack: it may be a user's unknown field nested thousands of
// levels deep, which recursion would not survive.

import { isObject } from './fields';

/**
 * Deepest nesting the recursive writer follows before handing the whole value to the stack-based
 * one. Real matches nest 3-4 levels; the bound keeps recursion far from the stack limit.
 */
export const CANONICAL_RECURSION_DEPTH = 64;

type Work = { text: string } | { value: unknown };

/** A primitive as JSON; undefined (and anything else JSON has no form for) as null. */
function primitive(v: unknown): string {
  // JSON.stringify returns undefined for undefined, whatever the lib types say.
  const text = JSON.stringify(v) as string | undefined;
  return text ?? 'null';
}

/** Object.keys in sorted order; most objects' keys already are, and are not sorted again. */
function sortedKeys(v: object): string[] {
  const keys = Object.keys(v);
  for (let i = 1; i < keys.length; i++) {
    if ((keys[i - 1] as string) > (keys[i] as string)) return keys.sort();
  }
  return keys;
}

/** The canonical text of `v`, or undefined when it nests deeper than `budget` more levels. */
function writeShallow(v: unknown, budget: number, omit: string | undefined): string | undefined {
  if (typeof v !== 'object' || v === null) return primitive(v);
  if (budget === 0) return undefined;
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      const item = writeShallow(v[i], budget - 1, undefined);
      if (item === undefined) return undefined;
      out += i === 0 ? item : `,${item}`;
    }
    return `${out}]`;
  }
  const o = v as Record<string, unknown>;
  let out = '{';
  let first = true;
  for (const key of sortedKeys(o)) {
    if (key === omit) continue;
    const item = writeShallow(o[key], budget - 1, undefined);
    if (item === undefined) return undefined;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${item}`;
    first = false;
  }
  return `${out}}`;
}

/** The canonical text of any value, however deep, with its own stack instead of recursion. */
export function canonicalJsonDeep(value: unknown): string {
  const out: string[] = [];
  // Items are pushed in reverse so that they pop in the order they are written.
  const pending: Work[] = [{ value }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    if ('text' in item) {
      out.push(item.text);
      continue;
    }
    const v = item.value;
    if (Array.isArray(v)) {
      pending.push({ text: ']' });
      for (let i = v.length - 1; i >= 0; i--) {
        pending.push({ value: v[i] });
        if (i > 0) pending.push({ text: ',' });
      }
      pending.push({ text: '[' });
    } else if (isObject(v)) {
      // Last key first, so the first pops first.
      const keys = Object.keys(v).sort().reverse();
      pending.push({ text: '}' });
      keys.forEach((key, i) => {
        pending.push({ value: v[key] });
        pending.push({ text: `${i < keys.length - 1 ? ',' : ''}${JSON.stringify(key)}:` });
      });
      pending.push({ text: '{' });
    } else {
      out.push(primitive(v));
    }
  }
  return out.join('');
}

/**
 * The canonical text of `value`. With `omitKey`, that key of a top-level object is left out, as
 * if the object were copied without it.
 */
export function canonicalJson(value: unknown, omitKey?: string): string {
  const text = writeShallow(value, CANONICAL_RECURSION_DEPTH, omitKey);
  if (text !== undefined) return text;
  if (omitKey === undefined || !isObject(value) || !Object.hasOwn(value, omitKey)) return canonicalJsonDeep(value);
  const { [omitKey]: _omitted, ...rest } = value;
  return canonicalJsonDeep(rest);
}
