// Writes manifests into a folder as local mode and istiod's fake server read them: one multi-document
// YAML file per kind, in a fixed order, and a digest of the folder so a golden can name its input.

import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import type { Manifest } from './generate';

/** Documents per file: well under local mode's MAX_MANIFEST_OBJECTS and its 8 MiB per file. */
export const OBJECTS_PER_FILE = 5000;

export function writeMesh(dir: string, manifests: readonly Manifest[]): string[] {
  mkdirSync(dir, { recursive: true });
  const byKind = new Map<string, Manifest[]>();
  for (const m of manifests) {
    let list = byKind.get(m.kind);
    if (!list) byKind.set(m.kind, (list = []));
    list.push(m);
  }
  const files: string[] = [];
  for (const [kind, list] of byKind) {
    // Local mode reads at most MAX_MANIFEST_OBJECTS documents (and 8 MiB) from one file.
    const chunks = Math.ceil(list.length / OBJECTS_PER_FILE);
    for (let c = 0; c < chunks; c++) {
      const name = chunks === 1 ? kind.toLowerCase() : `${kind.toLowerCase()}-${String(c).padStart(3, '0')}`;
      const file = path.join(dir, `${name}.yaml`);
      const part = list.slice(c * OBJECTS_PER_FILE, (c + 1) * OBJECTS_PER_FILE);
      writeFileSync(file, part.map((m) => stringify(m, { lineWidth: 0 })).join('---\n'));
      files.push(file);
    }
  }
  return files;
}

/** sha256 over the folder's manifest files, by name then content, as the goldens record it. */
export function folderDigest(dir: string): string {
  const hash = createHash('sha256');
  const names = readdirSync(dir)
    .filter((n) => /\.(ya?ml|json)$/.test(n))
    .sort();
  for (const name of names) {
    hash.update(`${name}\n`);
    hash.update(readFileSync(path.join(dir, name)));
    hash.update('\n');
  }
  return hash.digest('hex');
}
