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

/** What one walk of the folder found. */
export interface Listing {
  /** Manifest files, sorted by relative path so load order is stable. */
  files: FoundFile[];
  /** Every folder walked, '' for the root; the watcher watches exactly these. */
  folders: string[];
}

/** Entries stat'ed at once during a walk: enough to hide the thread-pool round trips, few enough to share it. */
const STAT_CONCURRENCY = 32;

/** Lists manifest files (and the folders holding them) under root recursively. */
export async function listManifestFiles(root: string): Promise<Listing> {
  const out: Listing = { files: [], folders: [] };
  const rootStat = await fs.stat(root).catch(() => undefined);
  await walk(root, '', 0, out, new Set(rootStat ? [`${rootStat.dev}:${rootStat.ino}`] : []));
  out.files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return out;
}

/** `visited` holds dev:ino of folders already walked, so a symlink back up is followed once at most. */
async function walk(root: string, relDir: string, depth: number, out: Listing, visited: Set<string>): Promise<void> {
  if (depth > MAX_FOLDER_DEPTH) return;
  let entries: string[];
  try {
    entries = await fs.readdir(path.join(root, relDir));
  } catch (err) {
    // The folder vanished between the event and the scan; what is gone is simply not listed.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return;
    throw err;
  }
  out.folders.push(relDir);
  const names = entries.filter((name) => !name.startsWith('.'));
  const subfolders: string[] = [];
  for (let i = 0; i < names.length; i += STAT_CONCURRENCY) {
    const batch = names.slice(i, i + STAT_CONCURRENCY);
    const stats = await Promise.all(batch.map((name) => fs.stat(path.join(root, relDir, name)).catch(() => undefined)));
    batch.forEach((name, j) => {
      const st = stats[j]; // undefined: removed while scanning, or a dangling symlink
      const rel = relDir ? `${relDir}/${name}` : name;
      if (st?.isDirectory()) {
        const id = `${st.dev}:${st.ino}`;
        if (visited.has(id)) return;
        visited.add(id);
        subfolders.push(rel);
      } else if (st?.isFile() && isManifestFile(name))
        out.files.push({ rel, abs: path.join(root, rel), signature: statSignature(st) });
    });
  }
  for (const rel of subfolders) await walk(root, rel, depth + 1, out, visited);
}
