// The test API server's "etcd": objects per resource, one global resourceVersion counter, and a
// bounded event history that watches resume from. Compaction and restarts make old
// resourceVersions unusable, as they are on a real cluster.

import { randomUUID } from 'node:crypto';

export type Json = Record<string, unknown>;
export interface Meta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  generation?: number;
  generateName?: string;
  labels?: Record<string, string>;
  [field: string]: unknown;
}
export interface StoredObject extends Json {
  metadata: Meta;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoredEvent {
  rv: number;
  type: WatchEventType;
  resource: string;
  object: StoredObject;
  /** The object before a MODIFIED event, so watchers with selectors can tell ADDED/DELETED. */
  old?: StoredObject;
}

/** Events kept for watches that resume; older resourceVersions get 410 Gone. */
export const HISTORY_LIMIT = 10_000;
/** How far resourceVersions jump on restart, so no new version equals an old one. */
export const RESTART_RV_JUMP = 1_000_000;

function objectKey(meta: Meta): string {
  return meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
}

export function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export class Storage {
  private rv = 100;
  private readonly tables = new Map<string, Map<string, StoredObject>>();
  /** Keys per resource in list order, rebuilt only after a key is added or removed. */
  private readonly sortedKeys = new Map<string, string[]>();
  private history: StoredEvent[] = [];
  /** Watches and continue tokens from before this resourceVersion are expired. */
  private compactedRv = 0;
  private readonly listeners = new Set<(event: StoredEvent) => void>();

  currentRv(): number {
    return this.rv;
  }

  oldestUsableRv(): number {
    return this.compactedRv;
  }

  onEvent(listener: (event: StoredEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private table(resource: string): Map<string, StoredObject> {
    let t = this.tables.get(resource);
    if (!t) this.tables.set(resource, (t = new Map<string, StoredObject>()));
    return t;
  }

  get(resource: string, namespace: string | undefined, name: string): StoredObject | undefined {
    const o = this.table(resource).get(namespace ? `${namespace}/${name}` : name);
    return o ? structuredClone(o) : undefined;
  }

  /** Objects of a resource sorted by namespace/name, the order list pages follow. */
  list(resource: string): StoredObject[] {
    return [...this.table(resource).entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => structuredClone(o));
  }

  /**
   * One list page: up to `limit` objects (0: all) after key `after` that `include` accepts, in
   * list order, and whether more follow. Only the page is copied, so paging through a large
   * table costs each object once, as on a real API server.
   */
  page(
    resource: string,
    after: string,
    limit: number,
    include: (o: StoredObject) => boolean,
  ): { items: StoredObject[]; more: boolean; remaining: number } {
    const table = this.table(resource);
    let keys = this.sortedKeys.get(resource);
    if (!keys) this.sortedKeys.set(resource, (keys = [...table.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))));
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((keys[mid] as string) <= after) lo = mid + 1;
      else hi = mid;
    }
    const items: StoredObject[] = [];
    let i = lo;
    for (; i < keys.length; i++) {
      const o = table.get(keys[i] as string);
      if (!o || !include(o)) continue;
      if (limit > 0 && items.length === limit) break;
      items.push(structuredClone(o));
    }
    let remaining = 0;
    for (; i < keys.length; i++) {
      const o = table.get(keys[i] as string);
      if (o && include(o)) remaining++;
    }
    return { items, more: remaining > 0, remaining };
  }

  keyOf(object: StoredObject): string {
    return objectKey(object.metadata);
  }

  /** Assigns what the server owns (uid, creationTimestamp, generation) to a new object. */
  prepareCreate(object: StoredObject): StoredObject {
    const meta = object.metadata;
    if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomUUID().slice(0, 5)}`;
    meta.uid = randomUUID();
    meta.creationTimestamp = nowTimestamp();
    meta.generation = 1;
    delete meta.resourceVersion;
    return object;
  }

  /** Stores a new or changed object under the next resourceVersion and tells the watchers. */
  write(resource: string, object: StoredObject, type: 'ADDED' | 'MODIFIED'): StoredObject {
    const table = this.table(resource);
    const key = objectKey(object.metadata);
    const old = table.get(key);
    if (!old) this.sortedKeys.delete(resource);
    const rv = ++this.rv;
    const stored = structuredClone(object);
    stored.metadata.resourceVersion = String(rv);
    table.set(key, stored);
    this.record({ rv, type, resource, object: stored, ...(old ? { old } : {}) });
    return structuredClone(stored);
  }

  remove(resource: string, namespace: string | undefined, name: string): StoredObject | undefined {
    const table = this.table(resource);
    const key = namespace ? `${namespace}/${name}` : name;
    const old = table.get(key);
    if (!old) return undefined;
    table.delete(key);
    this.sortedKeys.delete(resource);
    const rv = ++this.rv;
    const gone = structuredClone(old);
    gone.metadata.resourceVersion = String(rv);
    this.record({ rv, type: 'DELETED', resource, object: gone });
    return structuredClone(gone);
  }

  private record(event: StoredEvent): void {
    this.history.push(event);
    if (this.history.length > HISTORY_LIMIT) {
      const dropped = this.history.splice(0, this.history.length - HISTORY_LIMIT);
      this.compactedRv = dropped[dropped.length - 1]!.rv;
    }
    for (const l of this.listeners) l(event);
  }

  /** Events after `rv`, or undefined when some of them were compacted away (410 Gone). */
  eventsSince(rv: number): StoredEvent[] | undefined {
    if (rv < this.compactedRv) return undefined;
    return this.history.filter((e) => e.rv > rv);
  }

  /** Forgets the history: every resourceVersion older than now is expired. */
  compact(): void {
    this.history = [];
    this.compactedRv = this.rv;
  }

  /** A restored etcd: same objects, new resourceVersions, no history. */
  restart(): void {
    this.rv += RESTART_RV_JUMP;
    for (const table of this.tables.values()) {
      for (const object of table.values()) object.metadata.resourceVersion = String(++this.rv);
    }
    this.compact();
  }

  resources(): string[] {
    return [...this.tables.keys()];
  }
}
