// Watches every folder under --configDir with its own non-recursive fs.watch (inotify on Linux).
//
// Node 20's `recursive: true` is not native on Linux: it watches each file by itself, so after an
// editor's atomic save (a new file renamed over the old one) it keeps watching the old, deleted
// inode, and later writes and the file's removal go unseen until a rescan. A folder's own watch
// reports every entry created, written, renamed in or out, or deleted, whatever its inode.

import { FSWatcher, watch } from 'node:fs';
import * as path from 'node:path';

/**
 * Folders watched at most. Each costs an inotify watch (a per-user kernel limit, 8,192 on older
 * systems) and a handle; a --configDir with more folders than this is a mistake, and the folders
 * past it are still read by the periodic rescan.
 */
export const MAX_WATCHED_FOLDERS = 1_000;

export interface FolderEvent {
  /** Path of the entry, relative to the root with forward slashes; undefined when the OS did not name it. */
  rel: string | undefined;
}

export class FolderWatcher {
  /** rel folder ('' for the root) -> its watch. */
  private readonly watches = new Map<string, FSWatcher>();
  private closed = false;

  constructor(
    private readonly root: string,
    private readonly onEvent: (event: FolderEvent) => void,
    private readonly onProblem: (problem: string, err?: unknown) => void,
  ) {}

  has(rel: string): boolean {
    return this.watches.has(rel);
  }

  /**
   * Watches exactly these folders (from a full listing): new ones are added, vanished ones closed.
   * Returns how many were added; what was written into them before their watch began is only
   * seen by listing them again.
   */
  sync(folders: readonly string[]): number {
    if (this.closed) return 0;
    const wanted = new Set(folders);
    for (const [rel, w] of this.watches) {
      if (wanted.has(rel)) continue;
      w.close();
      this.watches.delete(rel);
    }
    let skipped = 0;
    let added = 0;
    for (const rel of folders) {
      if (this.watches.has(rel)) continue;
      if (this.watches.size >= MAX_WATCHED_FOLDERS) {
        skipped++;
        continue;
      }
      if (this.add(rel)) added++;
    }
    if (skipped > 0)
      this.onProblem(
        `more than MAX_WATCHED_FOLDERS (${MAX_WATCHED_FOLDERS}) folders; ${skipped} are read only by the periodic rescan`,
      );
    return added;
  }

  close(): void {
    this.closed = true;
    for (const w of this.watches.values()) w.close();
    this.watches.clear();
  }

  private add(rel: string): boolean {
    let w: FSWatcher;
    try {
      w = watch(path.join(this.root, rel), (_type, name) => {
        const entry = name === null ? undefined : name.split('\\').join('/');
        this.onEvent({ rel: entry === undefined ? undefined : rel ? `${rel}/${entry}` : entry });
      });
    } catch (err) {
      // Gone between the listing and now; the event that removed it leads to a new listing.
      this.onEvent({ rel: rel || undefined });
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.onProblem(`cannot watch ${rel || '.'}`, err);
      return false;
    }
    w.on('error', (err) => {
      // A watched folder deleted or replaced: drop the watch and let a full listing decide.
      w.close();
      if (this.watches.get(rel) === w) this.watches.delete(rel);
      this.onEvent({ rel: undefined });
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && (err as NodeJS.ErrnoException).code !== 'EPERM')
        this.onProblem(`watching ${rel || '.'} failed`, err);
    });
    this.watches.set(rel, w);
    return true;
  }
}
