// Layers -> the effective meshConfig: defaults < shared (optional) < primary, each layer parsed,
// applied and validated in turn, as istiod's mesh watcher does.

import { defaultMeshConfig } from './defaults';
import { applyMeshOverlay } from './merge';
import { MeshConfigError, parseMeshConfig } from './parse';
import type { MeshConfig } from './types';
import { validateMeshConfig } from './validate';

export interface MeshLayer {
  /** Where the text came from, for error messages: a file path or "ConfigMap istio-system/istio key mesh". */
  source: string;
  /** The layer's YAML/JSON; undefined when the source has nothing (e.g. the ConfigMap does not exist). */
  text: string | undefined;
}

/** Applies one layer on top of `base`; throws MeshConfigError naming the fields when it is invalid. */
export function applyMeshLayer(base: MeshConfig, layer: MeshLayer): MeshConfig {
  if (layer.text === undefined) return base;
  const next = applyMeshOverlay(base, parseMeshConfig(layer.text, layer.source));
  const issues = validateMeshConfig(next);
  if (issues.length > 0) throw new MeshConfigError(layer.source, issues);
  return next;
}

export type MeshBuild =
  { ok: true; mesh: MeshConfig; skipped: MeshConfigError[] } | { ok: false; error: MeshConfigError };

/**
 * Builds the effective meshConfig from the layers in order. With a single layer, an invalid
 * layer is a failure (the caller keeps its last good config). With several, an invalid layer is
 * skipped and the others still apply: istiod behaves the same (meshwatcher/collection.go).
 */
export function buildMeshConfig(layers: readonly MeshLayer[]): MeshBuild {
  let mesh = defaultMeshConfig();
  const skipped: MeshConfigError[] = [];
  for (const layer of layers) {
    try {
      mesh = applyMeshLayer(mesh, layer);
    } catch (err) {
      if (!(err instanceof MeshConfigError)) throw err;
      if (layers.length === 1) return { ok: false, error: err };
      skipped.push(err);
    }
  }
  return { ok: true, mesh, skipped };
}
