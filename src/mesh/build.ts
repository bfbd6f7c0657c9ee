// Layers -> the effective meshConfig: defaults < shared (optional) < primary, each layer parsed,
// applied and validated in turn, as istiod's mesh watcher does.

import { defaultMeshConfig } from './defaults';
import { applyMeshOverlay } from './merge';
import { decodeMeshConfig, MeshConfigError } from './parse';
import type { MeshConfig, MeshConfigIssue } from './types';
import { checkMeshConfig } from './validate';

export interface MeshLayer {
  /** Where the text came from, for error messages: a file path or "ConfigMap istio-system/istio key mesh". */
  source: string;
  /** The layer's YAML/JSON; undefined when the source has nothing (e.g. the ConfigMap does not exist). */
  text: string | undefined;
}

/** What a layer that applied still has to say: istiod's warnings, and fields this version does not know. */
export interface LayerNotes {
  warnings: (MeshConfigIssue & { source: string })[];
  unknown: { source: string; field: string }[];
}

/**
 * Applies one layer on top of `base`; throws MeshConfigError naming the fields when it is invalid.
 * Warnings and unknown fields of a layer that applies go to `notes`.
 */
export function applyMeshLayer(base: MeshConfig, layer: MeshLayer, notes?: LayerNotes): MeshConfig {
  if (layer.text === undefined) return base;
  const decoded = decodeMeshConfig(layer.text, layer.source);
  const next = applyMeshOverlay(base, decoded.overlay);
  const { errors, warnings } = checkMeshConfig(next);
  if (errors.length > 0) throw new MeshConfigError(layer.source, errors);
  if (notes) {
    for (const w of [...decoded.warnings, ...warnings]) notes.warnings.push({ ...w, source: layer.source });
    for (const field of decoded.unknown) notes.unknown.push({ source: layer.source, field });
  }
  return next;
}

export type MeshBuild = (
  { ok: true; mesh: MeshConfig; skipped: MeshConfigError[] } | { ok: false; error: MeshConfigError }
) & {
  notes: LayerNotes;
  /** Whether any layer had text (false: every source is empty, so the defaults are what applies). */
  fromSource: boolean;
};

/**
 * Builds the effective meshConfig from the layers in order. With a single layer, an invalid
 * layer is a failure (the caller keeps its last good config). With several, an invalid layer is
 * skipped and the others still apply: istiod behaves the same (meshwatcher/collection.go).
 */
export function buildMeshConfig(layers: readonly MeshLayer[]): MeshBuild {
  let mesh = defaultMeshConfig();
  const skipped: MeshConfigError[] = [];
  const notes: LayerNotes = { warnings: [], unknown: [] };
  let fromSource = false;
  for (const layer of layers) {
    try {
      mesh = applyMeshLayer(mesh, layer, notes);
      if (layer.text !== undefined) fromSource = true;
    } catch (err) {
      if (!(err instanceof MeshConfigError)) throw err;
      if (layers.length === 1) return { ok: false, error: err, notes, fromSource };
      skipped.push(err);
    }
  }
  return { ok: true, mesh, skipped, notes, fromSource };
}
