// How deep a parsed manifest nests. Canonical JSON, cloning and slimming walk objects
// recursively, so a document nested thousands of levels deep used to overflow the call stack in
// whichever ran first; manifests past MAX_MANIFEST_DEPTH are refused before any of them runs.

/**
 * True when mappings and lists in `value` nest deeper than `limit` (a top-level mapping is level
 * 1). Iterative, so it is safe on any input; each node is visited once per path to it, and YAML
 * aliases (the only way to share nodes) are already bounded by MAX_YAML_ALIAS_COUNT.
 */
export function exceedsDepth(value: unknown, limit: number): boolean {
  const pending: { node: object; depth: number }[] = [];
  if (value !== null && typeof value === 'object') pending.push({ node: value, depth: 1 });
  for (let top = pending.pop(); top; top = pending.pop()) {
    if (top.depth > limit) return true;
    const children: unknown[] = Array.isArray(top.node) ? top.node : Object.values(top.node);
    for (const child of children)
      if (child !== null && typeof child === 'object') pending.push({ node: child, depth: top.depth + 1 });
  }
  return false;
}
