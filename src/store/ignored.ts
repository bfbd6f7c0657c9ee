// Objects the server was given but does not act on: kinds it does not use, and (fed by their
// converters) objects it cannot convert. Nothing is dropped in silence: each object is reported
// once per identity and reason, as a log line, a counter, and an entry /debug/ignored lists, until
// its reporter clears it (the object changed, went away, or is used again). A report with the
// same key and reason is not repeated; a new reason is a new report.
//
// Reporters: the local-mode folder source (kinds the server does not use). Others call report()
// and clear() with their own kind, "namespace/name" and reason.

import { Counter, Gauge, type Registry } from 'prom-client';
import type { DebugRegistry } from '../contract/host';
import { scopedLogger } from '../log/logger';

const log = scopedLogger('ignored');

/**
 * Entries kept for /debug/ignored. One per ignored object: a folder that is mostly unused kinds
 * (a whole Helm chart rendered into --configDir) stays well below it, and past it a report is still
 * logged and counted, only not listed, so memory does not grow with the folder.
 */
export const MAX_IGNORED_OBJECTS = 10_000;
/** Entries one /debug/ignored response lists (sorted); `total` says how many there are. */
export const MAX_IGNORED_LISTED = 500;

/** Where an ignored object was found, when it came from a file. */
export interface IgnoredSource {
  file: string;
  line?: number;
}

export interface IgnoredObject {
  key: string;
  kind: string;
  /** "namespace/name", or "name" for cluster-scoped objects and objects without a namespace. */
  name: string;
  reason: string;
  source?: IgnoredSource;
  /** When it was first reported with this reason (ISO 8601). */
  since: string;
}

/** The identity of an ignored object: its kind and name, and the file it is in when there is one. */
export function ignoredKey(kind: string, name: string, source?: IgnoredSource): string {
  return source ? `${kind} ${name} @${source.file}` : `${kind} ${name}`;
}

export interface IgnoredObjectsOptions {
  /** Registers istiod_ts_ignored_objects_total and istiod_ts_ignored_objects here. */
  metrics?: Registry;
  now?: () => Date;
}

export interface IgnoredListing {
  total: number;
  /** Reports logged and counted but not kept, past MAX_IGNORED_OBJECTS. */
  notListed: number;
  objects: IgnoredObject[];
}

export class IgnoredObjects {
  private readonly entries = new Map<string, IgnoredObject>();
  private notListed = 0;
  private readonly reports: Counter | undefined;
  private readonly current: Gauge | undefined;
  private readonly now: () => Date;

  constructor(opts: IgnoredObjectsOptions = {}) {
    this.now = opts.now ?? (() => new Date());
    if (opts.metrics) {
      this.reports = new Counter({
        name: 'istiod_ts_ignored_objects_total',
        help: 'Objects reported as ignored (a kind the server does not use, or an object it cannot convert), once per object and reason',
        registers: [opts.metrics],
      });
      this.current = new Gauge({
        name: 'istiod_ts_ignored_objects',
        help: 'Objects currently listed as ignored on /debug/ignored',
        registers: [opts.metrics],
        collect: () => this.current?.set(this.entries.size),
      });
    }
  }

  /**
   * Reports an object the server ignores; returns its key for clear(). Logs and counts only
   * when the object is new here or its reason changed.
   */
  report(kind: string, name: string, reason: string, source?: IgnoredSource): string {
    const key = ignoredKey(kind, name, source);
    const known = this.entries.get(key);
    if (known?.reason === reason) {
      if (source?.line !== undefined) known.source = source;
      return key;
    }
    const at = source ? `${source.file}${source.line !== undefined ? `:${source.line}` : ''}: ` : '';
    log.warn({ kind, name, reason, ...(source ?? {}) }, `${at}${kind} ${name} ignored: ${reason}`);
    this.reports?.inc();
    const entry: IgnoredObject = {
      key,
      kind,
      name,
      reason,
      since: this.now().toISOString(),
      ...(source ? { source } : {}),
    };
    if (known || this.entries.size < MAX_IGNORED_OBJECTS) this.entries.set(key, entry);
    else this.notListed++;
    return key;
  }

  /** The object is no longer ignored (gone, changed, or now used); a later report logs again. */
  clear(key: string): boolean {
    return this.entries.delete(key);
  }

  /** Entries sorted by kind, name and file; at most `limit` of them. */
  list(limit = MAX_IGNORED_LISTED): IgnoredListing {
    const all = [...this.entries.values()].sort((a, b) =>
      a.kind !== b.kind ? (a.kind < b.kind ? -1 : 1) : a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
    );
    return { total: all.length, notListed: this.notListed, objects: all.slice(0, Math.max(0, limit)) };
  }
}

/** /debug/ignored: the entries, sorted, at most MAX_IGNORED_LISTED, with the total. */
export function registerIgnoredDebug(debug: DebugRegistry, ignored: IgnoredObjects): void {
  debug.add(
    'ignored',
    `objects the server does not act on (kinds it does not use, objects it cannot convert): kind, namespace/name, reason, file:line; at most ${MAX_IGNORED_LISTED}, with the total`,
    () => ({ body: ignored.list() }),
  );
}
