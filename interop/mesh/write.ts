// Writes manifests into a folder as local mode and istiod's fake server read them: one multi-document
// YAML file per kind, in a fixed order, and a digest of the folder so a golden can name its input.

import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import type { Manifest } from './generate';

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
    const file = path.join(dir, `${kind.toLowerCase()}.yaml`);
    writeFileSync(file, list.map((m) => stringify(m, { lineWidth: 0 })).join('---\n'));
    files.push(file);
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
