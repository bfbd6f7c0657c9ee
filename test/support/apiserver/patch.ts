// The patch formats the API server accepts: JSON merge patch (RFC 7386), strategic merge patch
// (treated as a merge patch, which is what it is for maps and for lists without merge keys), and
// JSON patch (RFC 6902).

export class PatchError extends Error {}

type Json = unknown;

function isObject(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const out: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) Reflect.deleteProperty(out, key);
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new PatchError(`invalid JSON pointer "${path}"`);
  return path
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

interface JsonPatchOp {
  op: string;
  path: string;
  value?: Json;
  from?: string;
}

function sameJson(a: Json, b: Json): boolean {
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return a === b;
}

export function jsonPatch(target: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw new PatchError('a JSON patch must be an array of operations');
  let doc: Json = structuredClone(target);
  for (const raw of ops as JsonPatchOp[]) {
    const parts = pointer(raw.path);
    const last = parts.pop();
    let parent: Json = doc;
    for (const p of parts) {
      parent = Array.isArray(parent) ? parent[Number(p)] : isObject(parent) ? parent[p] : undefined;
      if (parent === undefined) throw new PatchError(`path ${raw.path} does not exist`);
    }
    if (last === undefined) {
      if (raw.op === 'replace' || raw.op === 'add') doc = raw.value;
      continue;
    }
    const container = parent as Record<string, Json> | Json[];
    switch (raw.op) {
      case 'add':
        if (Array.isArray(container)) container.splice(last === '-' ? container.length : Number(last), 0, raw.value);
        else container[last] = raw.value;
        break;
      case 'replace':
        // As the API server's json-patch (v4): a missing key of an object is set, a missing index is an error.
        if (!Array.isArray(container)) container[last] = raw.value;
        else if (Number(last) < container.length) container[Number(last)] = raw.value;
        else throw new PatchError(`replace: path ${raw.path} does not exist`);
        break;
      case 'remove':
        if (Array.isArray(container)) container.splice(Number(last), 1);
        else if (last in container) Reflect.deleteProperty(container, last);
        else throw new PatchError(`remove: path ${raw.path} does not exist`);
        break;
      case 'test': {
        // As the API server's json-patch (v4): a missing key reads as null, and values compare as
        // JSON (key order does not matter).
        const actual = Array.isArray(container) ? container[Number(last)] : container[last];
        if (!sameJson(actual ?? null, raw.value ?? null)) throw new PatchError(`test failed at ${raw.path}`);
        break;
      }
      default:
        throw new PatchError(`unsupported JSON patch op "${raw.op}"`);
    }
  }
  return doc;
}

export const PATCH_TYPES = {
  'application/merge-patch+json': mergePatch,
  'application/strategic-merge-patch+json': mergePatch,
  'application/json-patch+json': jsonPatch,
} as const;
