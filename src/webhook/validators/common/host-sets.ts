// Overlap and subset questions about whole lists of hosts, answered in O(n log n) instead of by
// comparing every pair. A host is a name (`a.example.com`) or a wildcard (`*.example.com`,
// `*-x.example.com`, `*`) that matches every name ending in what follows the `*`, character by
// character, as istiod's host.Name does.
//
// Written backwards, "ends with" becomes "starts with", and in a sorted list every string that
// starts with some key follows that key directly, in one run. One pass over the reversed,
// sorted keys with a stack of the wildcard keys that prefix the current one answers, for every
// host at once, which wildcards match it and which hosts a wildcard matches.

const isWildcard = (h: string) => h.startsWith('*');

/** istiod's host.Name.Matches for one pair: the two hosts overlap. The lists below agree with it. */
export function hostsOverlap(a: string, b: string): boolean {
  if (isWildcard(a) && isWildcard(b))
    return a.length < b.length ? b.slice(1).endsWith(a.slice(1)) : a.slice(1).endsWith(b.slice(1));
  if (isWildcard(a)) return b.endsWith(a.slice(1));
  if (isWildcard(b)) return a.endsWith(b.slice(1));
  return a === b;
}

/** istiod's host.Name.SubsetOf for one pair: every name `a` matches is matched by `b`. */
export function hostSubsetOf(a: string, b: string): boolean {
  if (isWildcard(a)) return isWildcard(b) && a.length >= b.length && a.slice(1).endsWith(b.slice(1));
  if (isWildcard(b)) return a.endsWith(b.slice(1));
  return a === b;
}

function reversed(s: string): string {
  return s.split('').reverse().join('');
}

/** The host, or a wildcard's suffix, written backwards. */
function keyOf(host: string): string {
  return reversed(isWildcard(host) ? host.slice(1) : host);
}

/** The hosts sharing one key, by index (lowest first). */
interface Group {
  indexes: number[];
  /** The indexes of the wildcards among them. */
  wildcards: number[];
  /** The lowest index of a wildcard in the group, or Infinity. */
  wildcardMin: number;
}

/**
 * Groups indexes by key and returns the distinct keys in code-unit order. Sorting the distinct
 * strings natively is several times faster than sorting entries with a comparator.
 */
function groupByKey(hosts: readonly string[]): { groups: Map<string, Group>; keys: string[] } {
  const groups = new Map<string, Group>();
  hosts.forEach((h, i) => {
    const key = keyOf(h);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { indexes: [], wildcards: [], wildcardMin: Infinity }));
    g.indexes.push(i);
    if (isWildcard(h)) {
      g.wildcards.push(i);
      g.wildcardMin = Math.min(g.wildcardMin, i);
    }
  });
  return { groups, keys: [...groups.keys()].sort() };
}

interface Frame {
  key: string;
  group: Group;
  /** The lowest index of a wildcard at this key or any key below it on the stack. */
  wildcardMin: number;
  /** The lowest index among hosts whose key strictly extends this one, seen so far. */
  extensionMin: number;
}

/**
 * For each host, the lowest index of another host in the list that overlaps it (istiod's
 * host.Name.Matches), or -1. Two hosts overlap when they are equal, or when one is a wildcard
 * whose suffix ends the other (the other's suffix, if it is a wildcard too).
 */
export function lowestOverlapping(hosts: readonly string[]): number[] {
  if (!hosts.some(isWildcard)) return lowestEqual(hosts);
  const { groups, keys } = groupByKey(hosts);
  // Infinity: no overlapping host found yet.
  const partner = new Array<number>(hosts.length).fill(Infinity);
  const stack: Frame[] = [];
  const pop = () => {
    const f = stack.pop();
    if (!f) return;
    // Wildcards at this key overlap every host whose key extends it.
    for (const i of f.group.wildcards) partner[i] = Math.min(partner[i] ?? Infinity, f.extensionMin);
    const below = stack.at(-1);
    if (below) below.extensionMin = Math.min(below.extensionMin, f.extensionMin);
  };
  for (const key of keys) {
    const group = groups.get(key);
    if (!group) continue; // keys are the map's own
    let top = stack.at(-1);
    while (top && !key.startsWith(top.key)) {
      pop();
      top = stack.at(-1);
    }
    // A group holds at least one host; an empty one (Infinity) would overlap nothing.
    const [lowest = Infinity, second = Infinity] = group.indexes;
    // Equal keys always overlap; wildcards on the stack match every key extending theirs.
    for (const i of group.indexes) partner[i] = Math.min(i === lowest ? second : lowest, top?.wildcardMin ?? Infinity);
    if (top) top.extensionMin = Math.min(top.extensionMin, lowest);
    if (group.wildcardMin < Infinity)
      stack.push({
        key,
        group,
        wildcardMin: Math.min(group.wildcardMin, top?.wildcardMin ?? Infinity),
        extensionMin: Infinity,
      });
  }
  while (stack.length > 0) pop();
  return partner.map((p) => (p === Infinity ? -1 : p));
}

/**
 * Without wildcards, overlapping is equality: a repeat points at the first of its name, the first
 * at the second.
 */
function lowestEqual(hosts: readonly string[]): number[] {
  const out = new Array<number>(hosts.length).fill(-1);
  const first = new Map<string, number>();
  hosts.forEach((h, i) => {
    const f = first.get(h);
    if (f === undefined) first.set(h, i);
    else {
      out[i] = f;
      if (out[f] === -1) out[f] = i;
    }
  });
  return out;
}

/**
 * For each candidate, whether it is a subset of some host (istiod's host.Name.SubsetOf): equal
 * to a name, or matched by a wildcard whose suffix ends the candidate (the candidate's suffix,
 * if the candidate is a wildcard; a name never contains a wildcard).
 */
export function subsetOfSome(candidates: readonly string[], hosts: readonly string[]): boolean[] {
  const names = new Set(hosts.filter((h) => !isWildcard(h)));
  const covered = candidates.map((c) => !isWildcard(c) && names.has(c));
  if (!hosts.some(isWildcard)) return covered;
  const patterns = new Set(hosts.filter(isWildcard).map(keyOf));
  const byKey = new Map<string, number[]>();
  candidates.forEach((c, i) => {
    const key = keyOf(c);
    const list = byKey.get(key);
    if (list) list.push(i);
    else byKey.set(key, [i]);
  });
  const keys = [...new Set([...patterns, ...byKey.keys()])].sort();
  // The wildcard suffixes (backwards) that prefix the current key, shortest at the bottom.
  const stack: string[] = [];
  for (const key of keys) {
    for (let top = stack.at(-1); top !== undefined && !key.startsWith(top); top = stack.at(-1)) stack.pop();
    if (patterns.has(key)) stack.push(key);
    if (stack.length > 0) for (const i of byKey.get(key) ?? []) covered[i] = true;
  }
  return covered;
}
