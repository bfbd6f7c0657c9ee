// Structural mutations of a JSON tree: drop, duplicate, swap, deepen, widen, retype fields, put
// boundary numbers and strings in them, or graft a subtree from another valid input. Each call
// applies one to a handful of mutations to a copy; the seeds stay untouched.

import type { Rng } from './prng';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Container = Json[] | { [key: string]: Json };

/** Deepest level the mutator descends to when it picks a place to mutate (the inputs may be deeper). */
const MAX_PICK_DEPTH = 48;
/** Most nodes considered when picking a place; larger trees are sampled from their first nodes. */
const MAX_PICK_NODES = 4000;
/** Nesting depths a "deepen" mutation adds: usually modest, now and then far beyond any sane manifest. */
export const DEEPEN_LEVELS = [2, 8, 64] as const;
export const DEEPEN_LEVELS_EXTREME = [200, 1000, 5000] as const;
/** Copies a "widen" mutation makes of one element; the extreme ones are the duplicate checks' worst case. */
export const WIDEN_COPIES = [2, 3, 16, 100] as const;
export const WIDEN_COPIES_EXTREME = [1000, 5000, 10000] as const;

export const BOUNDARY_NUMBERS: readonly number[] = [
  0,
  -0,
  1,
  -1,
  0.5,
  1.5,
  255,
  256,
  1023,
  1024,
  65535,
  65536,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  2 ** 32,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  1e21,
  1e308,
  -1e308,
  5e-324,
];

export function boundaryStrings(rng: Rng): string {
  switch (rng.int(22)) {
    case 0:
      return '';
    case 1:
      return ' ';
    case 2:
      return '*';
    case 3:
      return '.';
    case 4:
      return '..';
    case 5:
      return '/';
    case 6:
      return '~';
    case 7:
      return 'a'.repeat(rng.scale([63, 64, 253, 254, 255, 256, 1024], [65536, 1_000_000]));
    case 8:
      return '\u0000';
    case 9:
      return '\ud800';
    case 10:
      return 'é\u200b\ufeff';
    case 11:
      return '(a+)+$';
    case 12:
      return '[';
    case 13:
      return '*.*.*';
    case 14:
      return '0x10';
    case 15:
      return '-1';
    case 16:
      return '1e999';
    case 17:
      return 'spiffe://cluster.local/ns/a/sa/b';
    case 18:
      return 'type.googleapis.com/' + 'x'.repeat(rng.size(300));
    case 19:
      return '10.0.0.1/33';
    case 20:
      return '::ffff:1.2.3.4';
    default:
      return 'x'.repeat(rng.size(1024));
  }
}

function randomScalar(rng: Rng): Json {
  switch (rng.int(6)) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick(BOUNDARY_NUMBERS);
    case 3:
      return boundaryStrings(rng);
    case 4:
      return [];
    default:
      return {};
  }
}

interface Slot {
  parent: Container;
  key: string | number;
  depth: number;
}

/** Places in the tree (parent and key), collected iteratively and bounded in depth and count. */
function slots(root: Json): Slot[] {
  const out: Slot[] = [];
  const stack: { node: Json; depth: number }[] = [{ node: root, depth: 0 }];
  while (stack.length > 0 && out.length < MAX_PICK_NODES) {
    const { node, depth } = stack.pop()!;
    if (node === null || typeof node !== 'object' || depth >= MAX_PICK_DEPTH) continue;
    const keys: (string | number)[] = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
    for (const key of keys) {
      out.push({ parent: node, key, depth });
      stack.push({ node: (node as Record<string | number, Json>)[key]!, depth: depth + 1 });
    }
  }
  return out;
}

const get = (s: Slot): Json => (s.parent as Record<string | number, Json>)[s.key]!;
const set = (s: Slot, v: Json): void => void ((s.parent as Record<string | number, Json>)[s.key] = v);

/** A deep copy that does not recurse (the inputs may nest thousands of levels). */
export function cloneJson(value: Json): Json {
  if (value === null || typeof value !== 'object') return value;
  const root: Container = Array.isArray(value) ? [] : {};
  const stack: [Container, Container][] = [[value, root]];
  while (stack.length > 0) {
    const [src, dst] = stack.pop()!;
    for (const [k, v] of Object.entries(src)) {
      let copy: Json = v;
      if (v !== null && typeof v === 'object') {
        copy = Array.isArray(v) ? [] : {};
        stack.push([v, copy]);
      }
      if (Array.isArray(dst)) dst.push(copy);
      else dst[k] = copy;
    }
  }
  return root;
}

function deepen(rng: Rng, value: Json): Json {
  const levels = rng.scale(DEEPEN_LEVELS, DEEPEN_LEVELS_EXTREME);
  const asArray = rng.chance(0.3);
  const key = rng.chance(0.5) ? 'value' : rng.pick(['a', '@type', 'fields', 'items', 'spec']);
  let v = value;
  for (let i = 0; i < levels; i++) v = asArray ? [v] : { [key]: v };
  return v;
}

/** Applies one mutation somewhere in `root` (in place) and returns the new root. */
function mutateOnce(rng: Rng, root: Json, donors: readonly Json[]): Json {
  const all = slots(root);
  if (all.length === 0) return rng.chance(0.5) ? randomScalar(rng) : deepen(rng, root);
  const s = rng.pick(all);
  const value = get(s);
  switch (rng.int(11)) {
    case 0: // drop
      if (Array.isArray(s.parent)) s.parent.splice(s.key as number, 1);
      else Reflect.deleteProperty(s.parent, s.key);
      break;
    case 1: // duplicate: an array element once more, an object field under a near name
      if (Array.isArray(s.parent)) s.parent.splice(s.key as number, 0, cloneJson(value));
      else s.parent[rng.chance(0.5) ? `${String(s.key)}_` : String(s.key).toUpperCase()] = cloneJson(value);
      break;
    case 2: {
      // swap with a sibling
      const keys: (string | number)[] = Array.isArray(s.parent) ? s.parent.map((_, i) => i) : Object.keys(s.parent);
      const other = rng.pick(keys);
      const tmp = (s.parent as Record<string | number, Json>)[other]!;
      (s.parent as Record<string | number, Json>)[other] = value;
      set(s, tmp);
      break;
    }
    case 3:
      set(s, deepen(rng, value));
      break;
    case 4: // widen: many copies of one element, the duplicate checks' worst case
      if (Array.isArray(value) && value.length > 0) {
        const one = value[rng.int(value.length)]!;
        const n = rng.scale(WIDEN_COPIES, WIDEN_COPIES_EXTREME);
        for (let i = 0; i < n; i++) value.push(rng.chance(0.8) ? one : cloneJson(one));
      } else {
        set(
          s,
          Array.from({ length: rng.scale(WIDEN_COPIES, WIDEN_COPIES_EXTREME) }, () => value),
        );
      }
      break;
    case 5: // type change: wrap a scalar, flatten a container
      set(
        s,
        value !== null && typeof value === 'object'
          ? Array.isArray(value)
            ? (value[0] ?? null)
            : (Object.keys(value)[0] ?? '')
          : rng.chance(0.5)
            ? [value]
            : { value },
      );
      break;
    case 6:
      set(s, rng.pick(BOUNDARY_NUMBERS));
      break;
    case 7:
      set(s, boundaryStrings(rng));
      break;
    case 8:
      set(s, randomScalar(rng));
      break;
    case 9: {
      // graft a subtree of another valid input
      const donor = rng.pick(donors);
      const donorSlots = slots(donor);
      set(s, donorSlots.length > 0 ? cloneJson(get(rng.pick(donorSlots))) : cloneJson(donor));
      break;
    }
    default: // a new field with a boundary value
      if (Array.isArray(value)) value.push(randomScalar(rng));
      else if (value !== null && typeof value === 'object')
        value[rng.pick(['name', 'namespace', 'hosts', 'port', 'value', '@type', boundaryStrings(rng)])] =
          randomScalar(rng);
      else set(s, boundaryStrings(rng));
  }
  return root;
}

/** Deepest tree a mutation may produce: beyond every limit under test, within what JSON.stringify can write. */
export const MAX_TREE_DEPTH = 6000;

/** Depth of a tree, measured iteratively. */
export function depthOf(value: Json): number {
  let max = 0;
  const stack: [Json, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    max = Math.max(max, d);
    if (v !== null && typeof v === 'object') for (const c of Object.values(v)) stack.push([c, d + 1]);
  }
  return max;
}

/** A mutated copy of `seed`: one to `max` structural mutations, no deeper than MAX_TREE_DEPTH. */
export function mutateJson(rng: Rng, seed: Json, donors: readonly Json[], max = 4): Json {
  for (let attempt = 0; attempt < 4; attempt++) {
    let root = cloneJson(seed);
    const n = 1 + rng.int(max);
    for (let i = 0; i < n; i++) root = mutateOnce(rng, root, donors);
    if (depthOf(root) <= MAX_TREE_DEPTH) return root;
  }
  return cloneJson(seed);
}

/** Byte-level noise on serialized text, for inputs the tree mutations cannot express. */
export function mutateText(rng: Rng, text: string): string {
  if (text.length === 0) return boundaryStrings(rng);
  const at = rng.int(text.length);
  switch (rng.int(6)) {
    case 0:
      return text.slice(0, at); // truncated
    case 1:
      return text.slice(0, at) + text.slice(at + 1 + rng.int(16));
    case 2:
      return (
        text.slice(0, at) +
        rng.pick(['{', '}', '[', ']', '"', ',', ':', '\\', '\u0000', '1e999', '-0', '123456789012345678901234567890']) +
        text.slice(at)
      );
    case 3:
      return text.slice(0, at) + String.fromCharCode(rng.int(0x110)) + text.slice(at + 1);
    case 4:
      return text + text.slice(at);
    default:
      return '['.repeat(rng.scale(DEEPEN_LEVELS, DEEPEN_LEVELS_EXTREME)) + text;
  }
}

/**
 * JSON text of a tree of any depth. JSON.stringify recurses and overflows V8's stack near 5,000
 * levels, which is exactly the depth the inputs must reach, so the writer keeps its own stack.
 */
export function toJsonText(value: Json): string {
  const out: string[] = [];
  type Frame = { close: string; items: [string | undefined, Json][]; i: number };
  const open = (v: Json): Frame | undefined => {
    if (v === null || typeof v !== 'object') {
      out.push(JSON.stringify(v));
      return undefined;
    }
    if (Array.isArray(v)) {
      out.push('[');
      return { close: ']', items: v.map((x) => [undefined, x]), i: 0 };
    }
    out.push('{');
    return { close: '}', items: Object.entries(v), i: 0 };
  };
  const stack: Frame[] = [];
  const first = open(value);
  if (first) stack.push(first);
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.i >= top.items.length) {
      out.push(top.close);
      stack.pop();
      continue;
    }
    const [key, v] = top.items[top.i]!;
    if (top.i > 0) out.push(',');
    top.i++;
    if (key !== undefined) out.push(JSON.stringify(key), ':');
    const child = open(v);
    if (child) stack.push(child);
  }
  return out.join('');
}
