// Finding manifest files under a folder and telling whether one changed since it was last read.

import { promises as fs, Stats } from 'node:fs';
import * as path from 'node:path';

const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];

/** Folders deeper than this are not read; with the visited-folder check it bounds the walk. */
export const MAX_FOLDER_DEPTH = 16;

export function isManifestFile(name: string): boolean {
  const lower = name.toLowerCase();
  // Editors and Kubernetes ConfigMap mounts leave hidden files (".file.swp", "..data"); skip them.
  return !path.basename(name).startsWith('.') && MANIFEST_EXTENSIONS.some((ext) => lower.endsWith(ext));
}

/** Identity of a file's content as far as stat can tell; a change in any part means "read it again". */
export function statSignature(st: Stats): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

export interface FoundFile {
  /** Path relative to the root, with forward slashes; the name used in errors. */
  rel: string;
  abs: string;
  signature: string;
}

/** Lists manifest files under root recursively, sorted by relative path so load order is stable. */
export async function listManifestFiles(root: string): Promise<FoundFile[]> {
  const out: FoundFile[] = [];
  const rootStat = await fs.stat(root).catch(() => undefined);
  await walk(root, '', 0, out, new Set(rootStat ? [`${rootStat.dev}:${rootStat.ino}`] : []));
  return out.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

/** `visited` holds dev:ino of folders already walked, so a symlink back up is followed once at most. */
async function walk(root: string, relDir: string, depth: number, out: FoundFile[], visited: Set<string>): Promise<void> {
  if (depth > MAX_FOLDER_DEPTH) return;
  let entries: string[];
  try {
    entries = await fs.readdir(path.join(root, relDir));
  } catch (err) {
    // The folder vanished between the event and the scan; what is gone is simply not listed.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return;
    throw err;
  }
  for (const name of entries) {
    if (name.startsWith('.')) continue;
    const rel = relDir ? `${relDir}/${name}` : name;
    const abs = path.join(root, rel);
    let st: Stats;
    try {
      st = await fs.stat(abs);
    } catch {
      continue; // removed while scanning, or a dangling symlink
    }
    if (st.isDirectory()) {
      const id = `${st.dev}:${st.ino}`;
      if (visited.has(id)) continue;
      visited.add(id);
      await walk(root, rel, depth + 1, out, visited);
    } else if (st.isFile() && isManifestFile(name)) out.push({ rel, abs, signature: statSignature(st) });
  }
}
