// Local mode's source: a folder of Kubernetes manifests stands in for the API server. Each folder
// is watched on its own (see folder-watcher.ts); a change re-reads only the files the watcher
// named, while the start, the periodic rescan and any change to a folder re-list everything.
// Files are read and parsed on a worker thread (parser-thread.ts), and the store gets exactly the
// add/update/delete events an informer would have produced (publisher.ts).

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { scopedLogger } from '../../log/logger';
import type { ConfigSource, StoreWriter } from '../types';
import { FoundFile, isManifestFile, listManifestFiles, statSignature } from './files';
import { FolderWatcher } from './folder-watcher';
import type { FileIssue } from './ownership';
import { ManifestParser, type ParseOutcome } from './parser-thread';
import { Publisher, Slicer } from './publisher';
import type { IgnoredObjects } from '../ignored';
import { UnusedKindsReporter } from './unused-kinds';

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
  /** The parser thread; tests of its limits pass one with short ones. */
  parser?: ManifestParser;
  /** Where objects of kinds the server does not use are reported (unused-kinds.ts). */
  ignored?: IgnoredObjects;
}

interface FileState {
  /** Load order: the file loaded first keeps an object defined twice. */
  order: number;
  signature: string;
  contentHash: string;
  skipped: number;
}

export class LocalSource implements ConfigSource {
  private readonly files = new Map<string, FileState>();
  /** Files that cannot be loaded now, with why; their last good objects stay in the store. */
  private readonly failed = new Map<string, FileIssue>();
  private readonly publisher: Publisher;
  private readonly parser: ManifestParser;
  private readonly reported = new Set<string>();
  private readonly unused: UnusedKindsReporter | undefined;
  private skipped = 0;
  private nextOrder = 0;
  private watcher: FolderWatcher | undefined;
  private rescanTimer: NodeJS.Timeout | undefined;
  private debounceTimer: NodeJS.Timeout | undefined;
  private firstPendingAt = 0;
  /** Paths the watcher named since the last reload, and whether something needs a full listing. */
  private pending = new Set<string>();
  private pendingFull = true;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(private readonly opts: LocalSourceOptions) {
    this.publisher = new Publisher(opts.writer, opts.now ?? (() => new Date()));
    this.parser = opts.parser ?? new ManifestParser();
    this.unused = opts.ignored ? new UnusedKindsReporter(opts.ignored) : undefined;
  }

  async start(): Promise<void> {
    const st = await fs.stat(this.opts.dir).catch(() => undefined);
    if (!st?.isDirectory()) throw new Error(`--configDir ${this.opts.dir}: not a readable folder`);
    this.opts.writer.expectSync(LOCAL_SYNC_PART);
    if (this.opts.watch !== false) {
      this.watcher = new FolderWatcher(
        this.opts.dir,
        (e) => this.onWatchEvent(e.rel),
        (problem, err) =>
          this.reportOnce(`watch:${problem}`, () =>
            log.warn({ err, dir: this.opts.dir }, `${problem}; relying on periodic rescans`),
          ),
      );
      // Watch the root before the first read, so a file written during the initial load is not missed.
      this.watcher.sync(['']);
    }
    await this.reload();
    this.opts.writer.markSynced(LOCAL_SYNC_PART);
    const every = this.opts.rescanIntervalMs ?? (this.opts.watch !== false ? LOCAL_RESCAN_INTERVAL_MS : undefined);
    if (every !== undefined && every > 0) {
      this.rescanTimer = setInterval(() => void this.rescan(), every);
      this.rescanTimer.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watcher?.close();
    this.watcher = undefined;
    if (this.rescanTimer) clearInterval(this.rescanTimer);
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
    await this.parser.close();
    await this.running;
  }

  /**
   * Files that cannot be loaded (parse errors and files past a limit, with file, line and reason)
   * and ignored duplicates; /debug/localconfig lists these.
   */
  errors(): FileIssue[] {
    return [...this.failed.values(), ...this.publisher.index.duplicates()].sort((a, b) =>
      a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line,
    );
  }

  /** Re-lists and re-reads the folder now; resolves when the store has the result. */
  rescan(): Promise<void> {
    this.pendingFull = true;
    return this.reload();
  }

  private onWatchEvent(rel: string | undefined): void {
    if (rel === undefined) this.pendingFull = true;
    else this.pending.add(rel);
    this.schedule();
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
        } while (this.runAgain());
      } catch (err) {
        log.error({ err, dir: this.opts.dir }, 'reloading the config folder failed');
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** Whether a reload was asked for while one ran (reload() sets `again` during the await). */
  private runAgain(): boolean {
    return this.again && !this.stopped;
  }

  private async reloadOnce(): Promise<void> {
    const named = this.pending;
    this.pending = new Set();
    let full = this.pendingFull;
    this.pendingFull = false;
    if (!(await fs.stat(this.opts.dir).catch(() => undefined))?.isDirectory()) {
      // A vanished folder is more likely a mount hiccup than "delete everything": keep the state.
      this.reportOnce(`missing:${this.opts.dir}`, () =>
        log.warn({ dir: this.opts.dir }, 'config folder is missing; keeping the objects loaded from it'),
      );
      return;
    }
    let toRead: FoundFile[] = [];
    const gone: string[] = [];
    if (!full) {
      for (const rel of named) {
        const what = await this.classify(rel);
        if (what === 'full') full = true;
        else if (what === 'gone') gone.push(rel);
        else if (what) toRead.push(what);
        if (full) break;
      }
    }
    if (full) {
      gone.length = 0;
      const listing = await listManifestFiles(this.opts.dir);
      // Files written into a folder before its watch began are found by listing it once more.
      if (this.watcher && this.watcher.sync(listing.folders) > 0) this.onWatchEvent(undefined);
      const listed = new Set(listing.files.map((f) => f.rel));
      for (const rel of this.files.keys()) if (!listed.has(rel)) gone.push(rel);
      toRead = listing.files.filter((f) => named.has(f.rel) || this.files.get(f.rel)?.signature !== f.signature);
    }
    // All files go to the thread at once; results are taken in order, so load order stays stable.
    const outcomes = toRead.map((f) => ({
      f,
      outcome: this.parser.parse(f.rel, f.abs, this.files.get(f.rel)?.contentHash),
    }));
    const slicer = new Slicer();
    for (const { f, outcome } of outcomes) await this.apply(f, await outcome, slicer);
    for (const rel of gone) this.forget(rel);
    if (this.stopped) return;
    await this.publish(slicer);
  }

  /** What a watch event on `rel` asks for: read one file, drop one, list everything, or nothing. */
  private async classify(rel: string): Promise<FoundFile | 'gone' | 'full' | undefined> {
    const abs = path.join(this.opts.dir, rel);
    const name = path.posix.basename(rel);
    if (name.startsWith('.')) {
      // Editors' temporary files are hidden and ignored; but a ConfigMap volume swaps its hidden
      // "..data" symlink, which changes what every file in it points at.
      const st = await fs.lstat(abs).catch(() => undefined);
      return st && (st.isSymbolicLink() || st.isDirectory()) ? 'full' : undefined;
    }
    const st = await fs.stat(abs).catch(() => undefined);
    if (!st) return this.files.has(rel) ? 'gone' : this.watcher?.has(rel) ? 'full' : undefined;
    if (st.isDirectory() || this.watcher?.has(rel)) return 'full';
    return st.isFile() && isManifestFile(name) ? { rel, abs, signature: statSignature(st) } : undefined;
  }

  private async apply(f: FoundFile, outcome: ParseOutcome, slicer: Slicer): Promise<void> {
    const state = this.files.get(f.rel);
    switch (outcome.type) {
      case 'stopped':
        return;
      case 'missing':
        this.forget(f.rel);
        return;
      case 'unchanged':
        if (state) state.signature = f.signature;
        return;
      case 'parsed': {
        const order = state?.order ?? this.nextOrder++;
        this.skipped += outcome.skipped.length - (state?.skipped ?? 0);
        this.files.set(f.rel, {
          order,
          signature: f.signature,
          contentHash: outcome.hash,
          skipped: outcome.skipped.length,
        });
        await this.publisher.index.setFileInSlices(
          f.rel,
          order,
          outcome.objects,
          (o) => o.fingerprint,
          () => slicer.pause(),
        );
        if (this.unused) this.unused.fileParsed(f.rel, outcome.skipped, outcome.objects);
        else
          for (const s of outcome.skipped)
            log.debug(
              { file: f.rel, line: s.line, apiVersion: s.apiVersion, kind: s.kind },
              'skipping a kind the store does not hold',
            );
        if (this.failed.delete(f.rel)) log.info({ file: f.rel }, 'manifest file loads again');
        return;
      }
      case 'failed': {
        // The objects the file held before stay; only the error is new.
        const issue: FileIssue = { file: f.rel, line: outcome.line, message: outcome.message };
        this.files.set(f.rel, {
          order: state?.order ?? this.nextOrder++,
          signature: f.signature,
          contentHash: outcome.hash,
          skipped: state?.skipped ?? 0,
        });
        this.failed.set(f.rel, issue);
        this.reportOnce(issueKey(issue), () =>
          log.warn(
            { file: issue.file, line: issue.line },
            `${issue.file}:${issue.line}: ${issue.message}; its previous objects are kept`,
          ),
        );
        return;
      }
    }
  }

  private forget(rel: string): void {
    const state = this.files.get(rel);
    if (!state) return;
    this.files.delete(rel);
    this.failed.delete(rel);
    this.unused?.fileGone(rel);
    this.skipped -= state.skipped;
    this.publisher.index.setFile(rel, state.order, []);
  }

  private async publish(slicer: Slicer): Promise<void> {
    const events = await this.publisher.publish(slicer, () => this.stopped);
    const duplicates = this.publisher.index.duplicates();
    for (const d of duplicates)
      this.reportOnce(issueKey(d), () => log.warn({ file: d.file, line: d.line }, `${d.file}:${d.line}: ${d.message}`));
    // Forget problems that are gone, so one that comes back is reported again.
    const present = new Set([...this.failed.values(), ...duplicates].map(issueKey));
    for (const key of this.reported)
      if (!present.has(key) && !key.startsWith('watch:') && !key.startsWith('missing:')) this.reported.delete(key);
    const stats: ReloadStats = {
      files: this.files.size,
      objects: this.publisher.size,
      skipped: this.skipped,
      errors: this.failed.size + this.publisher.index.duplicatesCount(),
      events,
    };
    if (events.add + events.update + events.delete > 0) log.debug({ ...stats }, 'config folder reloaded');
    this.opts.onReload?.(stats);
  }

  /** Logs each distinct problem once, not on every rescan; a fixed problem may be reported again if it returns. */
  private reportOnce(key: string, report: () => void): void {
    if (this.reported.has(key)) return;
    this.reported.add(key);
    report();
  }
}
