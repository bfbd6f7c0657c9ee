// Local mode's source: a folder of Kubernetes manifests stands in for the API server. Every
// reload re-lists the folder, re-reads files whose stat changed (or that a watch event named),
// and hands the store exactly the add/update/delete events an informer would have produced.

import { createHash } from 'node:crypto';
import { FSWatcher, promises as fs, watch } from 'node:fs';
import { scopedLogger } from '../../log/logger';
import type { ConfigSource, StoreWriter } from '../types';
import { listManifestFiles } from './files';
import { ManifestError, parseManifest, type ParsedObject } from './manifest';
import { diffStates, FileIssue, resolveOwnership, Stored } from './ownership';

const log = scopedLogger('local');

const issueKey = (i: FileIssue): string => `${i.file}:${i.line}:${i.message}`;

/** Quiet window that turns an editor's save (write, rename, chmod) into one reload. */
export const LOCAL_DEBOUNCE_MS = 75;
/** Longest a change waits while events keep arriving. */
export const LOCAL_DEBOUNCE_MAX_MS = 1000;
/** Safety net for missed watch events (network file systems, overflowed inotify queues). */
export const LOCAL_RESCAN_INTERVAL_MS = 30_000;

/** The sync part this source registers with the store; /ready lists it until the first load. */
export const LOCAL_SYNC_PART = 'local';

export interface ReloadStats {
  files: number;
  objects: number;
  /** Documents of kinds the store does not hold. */
  skipped: number;
  errors: number;
  events: { add: number; update: number; delete: number };
}

export interface LocalSourceOptions {
  dir: string;
  writer: StoreWriter;
  debounceMs?: number;
  /** Periodic full rescan; default LOCAL_RESCAN_INTERVAL_MS when watching, none otherwise. */
  rescanIntervalMs?: number;
  /** Watch the folder for changes (default true); tests of the initial load can turn it off. */
  watch?: boolean;
  now?: () => Date;
  /** Called after every reload; the metrics module counts from here. */
  onReload?: (stats: ReloadStats) => void;
}

interface FileState {
  order: number;
  signature: string;
  contentHash: string;
  /** The last successful parse; kept while the file is broken so its objects stay in place. */
  objects: readonly ParsedObject[];
  skipped: number;
  error?: FileIssue;
}

export class LocalSource implements ConfigSource {
  private readonly files = new Map<string, FileState>();
  private current = new Map<string, Stored>();
  private duplicates: FileIssue[] = [];
  private readonly reported = new Set<string>();
  private version = 0;
  private nextOrder = 0;
  private watcher: FSWatcher | undefined;
  private rescanTimer: NodeJS.Timeout | undefined;
  private debounceTimer: NodeJS.Timeout | undefined;
  private firstPendingAt = 0;
  private forced = new Set<string>();
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(private readonly opts: LocalSourceOptions) {}

  async start(): Promise<void> {
    const st = await fs.stat(this.opts.dir).catch(() => undefined);
    if (!st?.isDirectory()) throw new Error(`--configDir ${this.opts.dir}: not a readable folder`);
    this.opts.writer.expectSync(LOCAL_SYNC_PART);
    // Watch before the first read, so a file written during the initial load is not missed.
    if (this.opts.watch !== false) this.startWatching();
    await this.reload();
    this.opts.writer.markSynced(LOCAL_SYNC_PART);
    const every = this.opts.rescanIntervalMs ?? (this.opts.watch !== false ? LOCAL_RESCAN_INTERVAL_MS : undefined);
    if (every !== undefined && every > 0) {
      this.rescanTimer = setInterval(() => void this.reload(), every);
      this.rescanTimer.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watcher?.close();
    this.watcher = undefined;
    if (this.rescanTimer) clearInterval(this.rescanTimer);
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
    await this.running;
  }

  /** Problems per file (parse errors and ignored duplicates), for /debug and tests. */
  errors(): FileIssue[] {
    const parse = [...this.files.values()].flatMap((f) => (f.error ? [f.error] : []));
    return [...parse, ...this.duplicates].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
  }

  /** Re-reads the folder now; resolves when the store has the result. */
  rescan(): Promise<void> {
    return this.reload();
  }

  private startWatching(): void {
    try {
      this.watcher = watch(this.opts.dir, { recursive: true }, (_event, filename) => {
        if (filename) this.forced.add(String(filename).split('\\').join('/'));
        this.schedule();
      });
      this.watcher.on('error', (err) => log.warn({ err, dir: this.opts.dir }, 'watching the config folder failed; relying on periodic rescans'));
    } catch (err) {
      log.warn({ err, dir: this.opts.dir }, 'cannot watch the config folder; relying on periodic rescans');
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    const now = Date.now();
    if (!this.debounceTimer) this.firstPendingAt = now;
    else clearTimeout(this.debounceTimer);
    const waited = now - this.firstPendingAt;
    const delay = Math.max(0, Math.min(this.opts.debounceMs ?? LOCAL_DEBOUNCE_MS, LOCAL_DEBOUNCE_MAX_MS - waited));
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = undefined;
      void this.reload();
    }, delay);
  }

  /** Runs reloads one at a time; a request during a reload runs once more afterwards. */
  private reload(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.reloadOnce();
        } while (this.again && !this.stopped);
      } catch (err) {
        log.error({ err, dir: this.opts.dir }, 'reloading the config folder failed');
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  private async reloadOnce(): Promise<void> {
    const forced = this.forced;
    this.forced = new Set();
    if (!(await fs.stat(this.opts.dir).catch(() => undefined))?.isDirectory()) {
      // A vanished folder is more likely a mount hiccup than "delete everything": keep the state.
      this.reportOnce(`missing:${this.opts.dir}`, () => log.warn({ dir: this.opts.dir }, 'config folder is missing; keeping the objects loaded from it'));
      return;
    }
    const found = await listManifestFiles(this.opts.dir);
    const seen = new Set<string>();
    for (const f of found) {
      seen.add(f.rel);
      const state = this.files.get(f.rel);
      if (state && state.signature === f.signature && !forced.has(f.rel)) continue;
      let text: string;
      try {
        text = await fs.readFile(f.abs, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') seen.delete(f.rel);
        else this.fileFailed(f.rel, state, f.signature, '', { file: f.rel, line: 1, message: (err as Error).message });
        continue;
      }
      this.readFile(f.rel, state, f.signature, text);
    }
    for (const rel of [...this.files.keys()]) if (!seen.has(rel)) this.files.delete(rel);
    this.publish();
  }

  private readFile(rel: string, state: FileState | undefined, signature: string, text: string): void {
    const contentHash = createHash('sha256').update(text).digest('hex');
    if (state && state.contentHash === contentHash) {
      state.signature = signature;
      return;
    }
    try {
      const parsed = parseManifest(text, rel);
      for (const s of parsed.skipped) log.debug({ file: rel, line: s.line, apiVersion: s.apiVersion, kind: s.kind }, 'skipping a kind the store does not hold');
      this.files.set(rel, {
        order: state?.order ?? this.nextOrder++,
        signature,
        contentHash,
        objects: parsed.objects,
        skipped: parsed.skipped.length,
      });
      if (state?.error) log.info({ file: rel }, 'manifest file parses again');
    } catch (err) {
      if (!(err instanceof ManifestError)) throw err;
      this.fileFailed(rel, state, signature, contentHash, { file: err.file, line: err.line, message: err.reason });
    }
  }

  private fileFailed(rel: string, state: FileState | undefined, signature: string, contentHash: string, issue: FileIssue): void {
    // The objects the file held before stay; only the error is new.
    const next: FileState = state
      ? { ...state, signature, contentHash, error: issue }
      : { order: this.nextOrder++, signature, contentHash, objects: [], skipped: 0, error: issue };
    this.files.set(rel, next);
    this.reportOnce(issueKey(issue), () =>
      log.warn({ file: issue.file, line: issue.line }, `${issue.file}:${issue.line}: ${issue.message}; its previous objects are kept`),
    );
  }

  private publish(): void {
    const { desired, duplicates } = resolveOwnership([...this.files].map(([file, s]) => ({ file, order: s.order, objects: s.objects })));
    this.duplicates = duplicates;
    for (const d of duplicates) this.reportOnce(issueKey(d), () => log.warn({ file: d.file, line: d.line }, `${d.file}:${d.line}: ${d.message}`));
    // Forget problems that are gone, so one that comes back is reported again.
    const present = new Set(this.errors().map(issueKey));
    for (const key of this.reported) if (!present.has(key)) this.reported.delete(key);
    const now = this.opts.now ?? (() => new Date());
    const { next, changes, counts } = diffStates(
      this.current,
      desired,
      () => String(++this.version),
      () => now().toISOString(),
    );
    this.current = next;
    if (changes.length > 0) this.opts.writer.apply(changes);
    const stats: ReloadStats = {
      files: this.files.size,
      objects: next.size,
      skipped: [...this.files.values()].reduce((n, f) => n + f.skipped, 0),
      errors: this.errors().length,
      events: counts,
    };
    if (changes.length > 0) log.debug({ ...stats }, 'config folder reloaded');
    this.opts.onReload?.(stats);
  }

  /** Logs each distinct problem once, not on every rescan; a fixed problem may be reported again if it returns. */
  private reportOnce(key: string, report: () => void): void {
    if (this.reported.has(key)) return;
    this.reported.add(key);
    report();
  }
}
