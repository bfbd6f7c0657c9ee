// Applying a meshConfig layer on top of another, with istiod's rules (pkg/config/mesh
// ApplyMeshConfig):
// - top-level fields are replaced;
// - defaultConfig is merged field by field, recursively, so proxyMetadata keys are merged too;
// - defaultProviders is replaced as a whole;
// - extensionProviders are merged by name: a provider with a known name replaces that entry in
//   place, a new name is appended;
// - trustDomainAliases are the union of both layers, sorted.
// A field set to null in a layer counts as not set, as in istiod's JSON decoding.

import type { MeshOverlay } from './parse';
import type { ExtensionProvider, MeshConfig } from './types';

type Json = Record<string, unknown>;

const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function clone<T>(v: T): T {
  return structuredClone(v);
}

function deepMerge(base: Json, overlay: Json): Json {
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    if (value === null || value === undefined) continue;
    const prev = out[key];
    out[key] = isMap(prev) && isMap(value) ? deepMerge(prev, value) : clone(value);
  }
  return out;
}

function mergeProviders(
  base: readonly ExtensionProvider[],
  overlay: readonly ExtensionProvider[],
): ExtensionProvider[] {
  const out = base.map((p) => clone(p));
  for (const p of overlay) {
    const at = out.findIndex((e) => e.name === p.name);
    if (at >= 0) out[at] = clone(p);
    else out.push(clone(p));
  }
  return out;
}

/** Returns a new MeshConfig: `base` with `overlay` applied. Neither input is modified. */
export function applyMeshOverlay(base: MeshConfig, overlay: MeshOverlay): MeshConfig {
  const out = clone(base) as Json;
  for (const [key, value] of Object.entries(overlay)) {
    if (value === null || value === undefined) continue;
    switch (key) {
      case 'defaultConfig':
        out[key] = deepMerge(isMap(out[key]) ? out[key] : {}, value as Json);
        break;
      case 'extensionProviders':
        out[key] = mergeProviders((out[key] as ExtensionProvider[] | undefined) ?? [], value as ExtensionProvider[]);
        break;
      case 'trustDomainAliases':
        out[key] = [...new Set([...((out[key] as string[] | undefined) ?? []), ...(value as string[])])].sort();
        break;
      default:
        // defaultProviders included: a layer that sets it replaces the previous one as a whole.
        out[key] = clone(value);
    }
  }
  return out as MeshConfig;
}
