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
  if (isWildcard(a) && isWildcard(b)) return a.length < b.length ? b.slice(1).endsWith(a.slice(1)) : a.slice(1).endsWith(b.slice(1));
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

interface Entry {
  /** The host, or a wildcard's suffix, written backwards. */
  key: string;
  index: number;
  wildcard: boolean;
}

function reversed(s: string): string {
  return s.split('').reverse().join('');
}

function entry(host: string, index: number): Entry {
  const wildcard = isWildcard(host);
  return { key: reversed(wildcard ? host.slice(1) : host), index, wildcard };
}

const byKey = (a: Entry, b: Entry) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.index - b.index);

interface Frame {
  key: string;
  /** Where this key's run of equal entries sits in the sorted list. */
  from: number;
  to: number;
  /** The lowest index of a wildcard at this key or any key below it on the stack. */
  wildcardMin: number;
  /** The lowest index among entries whose key strictly extends this one, seen so far. */
  extensionMin: number;
}

/**
 * For each host, the lowest index of another host in the list that overlaps it (istiod's
 * host.Name.Matches), or -1. Two hosts overlap when they are equal, or when one is a wildcard
 * whose suffix ends the other (the other's suffix, if it is a wildcard too).
 */
export function lowestOverlapping(hosts: readonly string[]): number[] {
  const sorted = hosts.map(entry).sort(byKey);
  const partner = new Array<number>(hosts.length).fill(Infinity);
  const stack: Frame[] = [];
  const pop = () => {
    const f = stack.pop()!;
    // Wildcards at this key overlap every host whose key extends it.
    for (let i = f.from; i < f.to; i++) if (sorted[i]!.wildcard) partner[sorted[i]!.index] = Math.min(partner[sorted[i]!.index]!, f.extensionMin);
    const below = stack[stack.length - 1];
    if (below) below.extensionMin = Math.min(below.extensionMin, f.extensionMin);
  };
  for (let from = 0; from < sorted.length; ) {
    const key = sorted[from]!.key;
    let to = from + 1;
    while (to < sorted.length && sorted[to]!.key === key) to++;
    while (stack.length > 0 && !key.startsWith(stack[stack.length - 1]!.key)) pop();
    const top = stack[stack.length - 1];
    // Sorted by index within a run: the first two are the lowest.
    const lowest = sorted[from]!.index;
    const second = to - from > 1 ? sorted[from + 1]!.index : Infinity;
    let wildcardHere = Infinity;
    for (let i = from; i < to; i++) {
      const e = sorted[i]!;
      if (e.wildcard) wildcardHere = Math.min(wildcardHere, e.index);
      // Equal keys always overlap; wildcards on the stack match every key extending theirs.
      partner[e.index] = Math.min(e.index === lowest ? second : lowest, top?.wildcardMin ?? Infinity);
    }
    if (top) top.extensionMin = Math.min(top.extensionMin, lowest);
    if (wildcardHere < Infinity) stack.push({ key, from, to, wildcardMin: Math.min(wildcardHere, top?.wildcardMin ?? Infinity), extensionMin: Infinity });
    from = to;
  }
  while (stack.length > 0) pop();
  return partner.map((p) => (p === Infinity ? -1 : p));
}

/**
 * For each candidate, whether it is a subset of some host (istiod's host.Name.SubsetOf): equal
 * to a name, or matched by a wildcard whose suffix ends the candidate (the candidate's suffix,
 * if the candidate is a wildcard; a name never contains a wildcard).
 */
export function subsetOfSome(candidates: readonly string[], hosts: readonly string[]): boolean[] {
  const names = new Set(hosts.filter((h) => !isWildcard(h)));
  // Wildcard hosts get indexes below every candidate so that at an equal key they come first.
  const patterns = hosts.filter(isWildcard).map((h) => entry(h, -1));
  const sorted = [...patterns, ...candidates.map(entry)].sort(byKey);
  const covered = candidates.map((c) => !isWildcard(c) && names.has(c));
  const stack: string[] = [];
  for (const e of sorted) {
    while (stack.length > 0 && !e.key.startsWith(stack[stack.length - 1]!)) stack.pop();
    if (e.index < 0) {
      if (stack[stack.length - 1] !== e.key) stack.push(e.key);
    } else if (stack.length > 0) covered[e.index] = true;
  }
  return covered;
}
