// A field-by-field difference of two plain JSON values, each difference named by its path
// (`workload.services["ns/host"].ports[0].targetPort`), so a report says what differs and where.

export interface Difference {
  path: string;
  ours: unknown;
  theirs: unknown;
}

/** How deep a value may nest before the walk stops and reports the subtree as one difference. */
export const MAX_DIFF_DEPTH = 64;
/** Differences collected before the walk stops: a report of thousands helps nobody. */
export const MAX_DIFFERENCES = 1000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const childPath = (path: string, key: string) =>
  /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? (path ? `${path}.${key}` : key) : `${path}[${JSON.stringify(key)}]`;

export function diff(ours: unknown, theirs: unknown, path = '', out: Difference[] = [], depth = 0): Difference[] {
  if (out.length >= MAX_DIFFERENCES) return out;
  if (Object.is(ours, theirs)) return out;
  if (depth >= MAX_DIFF_DEPTH) {
    if (JSON.stringify(ours) !== JSON.stringify(theirs)) out.push({ path, ours, theirs });
    return out;
  }
  if (Array.isArray(ours) && Array.isArray(theirs)) {
    const n = Math.max(ours.length, theirs.length);
    for (let i = 0; i < n; i++) diff(ours[i], theirs[i], `${path}[${i}]`, out, depth + 1);
    return out;
  }
  if (isObject(ours) && isObject(theirs)) {
    const keys = new Set([...Object.keys(ours), ...Object.keys(theirs)]);
    for (const key of [...keys].sort()) diff(ours[key], theirs[key], childPath(path, key), out, depth + 1);
    return out;
  }
  out.push({ path, ours, theirs });
  return out;
}

export function renderDifferences(differences: readonly Difference[]): string {
  const show = (v: unknown) => (v === undefined ? '(absent)' : JSON.stringify(v));
  return differences.map((d) => `${d.path || '(root)'}: ours ${show(d.ours)}, theirs ${show(d.theirs)}`).join('\n');
}
