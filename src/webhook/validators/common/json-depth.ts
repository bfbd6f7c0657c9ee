// How deep a decoded JSON document nests, found without recursion (JSON.parse reads a document
// nested a million levels deep without complaint; a recursive walk over it would not survive).

import { at, clip, idx } from './report';

interface Level {
  value: object;
  /** 1 for the document itself. */
  depth: number;
  parent?: Level;
  key?: string | number;
}

function pathOf(level: Level): string {
  const keys: (string | number)[] = [];
  for (let l: Level | undefined = level; l?.key !== undefined; l = l.parent) keys.push(l.key);
  let path = '';
  for (const k of keys.reverse()) {
    path = typeof k === 'number' ? idx(path, k) : at(path, k);
  }
  return clip(path);
}

/**
 * The path (clipped to MAX_REPORTED_TEXT_LENGTH) of the first object or array nested more than
 * `limit` levels deep in `document`, or undefined when none is. Only objects and arrays count.
 */
export function tooDeep(document: unknown, limit: number): string | undefined {
  if (typeof document !== 'object' || document === null) return undefined;
  const todo: Level[] = [{ value: document, depth: 1 }];
  for (let level = todo.pop(); level !== undefined; level = todo.pop()) {
    if (level.depth > limit) return pathOf(level);
    const v = level.value;
    const keys: (string | number)[] = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
    for (const key of keys) {
      const child: unknown = (v as Record<string | number, unknown>)[key];
      if (typeof child === 'object' && child !== null)
        todo.push({ value: child, depth: level.depth + 1, parent: level, key });
    }
  }
  return undefined;
}
