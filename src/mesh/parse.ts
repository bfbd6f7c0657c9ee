// meshConfig text (YAML or JSON) -> a plain overlay object, decoded against the MeshConfig schema
// (decode.ts): field types and enum names are checked as istiod's decoder checks them, label
// selectors as Kubernetes converts them. Unknown fields are accepted and kept, as istiod accepts
// them, and listed so the watcher can warn about each one once.

import { LineCounter, parseDocument } from 'yaml';
import { decodeLayer, isMap, typeName } from './decode';
import { MESH_CONFIG } from './schema';
import { meshSelectorIssues } from './selectors';
import type { MeshConfigIssue } from './types';
import { Issues } from './validate-common';
import { duplicateProviderWarnings } from './validate-providers';

/** A meshConfig larger than this is refused (a ConfigMap value is at most 1 MiB anyway). */
export const MAX_MESH_CONFIG_BYTES = 1024 * 1024;
/** YAML aliases a meshConfig may expand; more is a "billion laughs" document, not a config. */
export const MAX_MESH_YAML_ALIASES = 100;

/** One line per issue list: an error must fit the single line a bad start prints. */
const oneLine = (s: string): string => s.replace(/\s*\n\s*/g, ' ');

export class MeshConfigError extends Error {
  constructor(
    readonly source: string,
    readonly issues: readonly MeshConfigIssue[],
  ) {
    super(oneLine(`${source}: ${issues.map((i) => (i.field ? `${i.field}: ${i.message}` : i.message)).join('; ')}`));
    this.name = 'MeshConfigError';
  }
}

export type MeshOverlay = Record<string, unknown>;

export interface DecodedLayer {
  overlay: MeshOverlay;
  /** Field paths the schema does not know (kept in the overlay). */
  unknown: string[];
  /** Findings istiod would only warn about. */
  warnings: MeshConfigIssue[];
}

/** Parses and decodes one meshConfig layer; throws MeshConfigError naming every bad field. */
export function decodeMeshConfig(text: string, source: string): DecodedLayer {
  if (Buffer.byteLength(text) > MAX_MESH_CONFIG_BYTES) {
    throw new MeshConfigError(source, [{ field: '', message: `larger than ${MAX_MESH_CONFIG_BYTES} bytes` }]);
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const err = doc.errors[0];
  if (err)
    throw new MeshConfigError(source, [
      { field: '', message: `line ${lines.linePos(err.pos[0]).line}: ${err.message}` },
    ]);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_MESH_YAML_ALIASES });
  } catch (e) {
    throw new MeshConfigError(source, [{ field: '', message: (e as Error).message }]);
  }
  if (value === null || value === undefined) return { overlay: {}, unknown: [], warnings: [] };
  if (!isMap(value))
    throw new MeshConfigError(source, [
      { field: '', message: `expected a mapping of meshConfig fields, got ${typeName(value)}` },
    ]);

  const decoded = decodeLayer(MESH_CONFIG, value);
  const issues = decoded.issues;
  meshSelectorIssues(decoded.value, issues);
  if (issues.length > 0) throw new MeshConfigError(source, issues);
  const warnings = new Issues();
  duplicateProviderWarnings(decoded.value, warnings);
  return { overlay: decoded.value, unknown: decoded.unknown, warnings: warnings.list };
}

/** Parses one meshConfig layer. Empty text is an empty overlay (all defaults). */
export function parseMeshConfig(text: string, source: string): MeshOverlay {
  return decodeMeshConfig(text, source).overlay;
}
