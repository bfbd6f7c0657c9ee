// The in-memory implementation of the store, shared by both sources. Objects are kept per kind
// and per namespace so that list(kind, ns) never scans other namespaces, and registered indexes
// are maintained on every write so lookups such as "pods on node N with service account S" are
// one map access.

import { KindId } from './kinds';
import { LabelIndex } from './label-index';
import { scopedLogger } from '../log/logger';
import {
  IndexFunction,
  LabelIndexFunction,
  LabelIndexView,
  KubeObject,
  ObjectStore,
  StoreEvent,
  StoreListener,
  StoreWriter,
  keyOf,
  objectKey,
} from './types';

const log = scopedLogger('store');

/**
 * An index and a label index are given back the object they filed to unfile it, and unfile it
 * from where their function puts it: index functions are pure functions of the object (the store
 * replaces objects, it never changes one it holds). A map per index of what each object was filed
 * under cost a 100k-pod cold start a 100k-entry map per index and ~1/3 of filing each pod.
 */
interface Index {
  fn: IndexFunction;
  /** index key -> object key -> object */
  entries: Map<string, Map<string, KubeObject>>;
}

class KindTable {
  readonly objects = new Map<string, KubeObject>();
  /** namespace ('' for cluster-scoped) -> object key -> object */
  readonly byNamespace = new Map<string, Map<string, KubeObject>>();
  readonly indexes = new Map<string, Index>();
  readonly labelIndexes = new Map<string, LabelIndex>();

  /** Stores `object` under `key`; `previous` is the object held under it until now. */
  set(key: string, object: KubeObject, previous: KubeObject | undefined): void {
    const ns = object.metadata.namespace ?? '';
    this.objects.set(key, object);
    // An object's namespace is part of its key: an update stays in the same namespace map.
    let inNs = this.byNamespace.get(ns);
    if (!inNs) this.byNamespace.set(ns, (inNs = new Map<string, KubeObject>()));
    inNs.set(key, object);
    for (const index of this.indexes.values()) {
      if (previous) unfileFromIndex(index, key, previous);
      fileNew(index, key, object);
    }
    for (const index of this.labelIndexes.values()) index.file(object, previous);
  }

  delete(key: string, object: KubeObject): void {
    const ns = object.metadata.namespace ?? '';
    this.objects.delete(key);
    const inNs = this.byNamespace.get(ns);
    inNs?.delete(key);
    if (inNs && inNs.size === 0) this.byNamespace.delete(ns);
    for (const index of this.indexes.values()) unfileFromIndex(index, key, object);
    for (const index of this.labelIndexes.values()) index.unfile(object);
  }
}

/** Unfiles the object held under `key` from the index keys its index function gives for it. */
function unfileFromIndex(index: Index, key: string, object: KubeObject): void {
  for (const k of index.fn(object)) {
    const bucket = index.entries.get(k);
    bucket?.delete(key);
    if (bucket && bucket.size === 0) index.entries.delete(k);
  }
}

/** Files an object the index does not hold yet. */
function fileNew(index: Index, key: string, object: KubeObject): void {
  // Index functions read client objects, and a hostile one can make them return a number
  // (nodeName: 123): it is a key like any other, the same when the object is unfiled.
  const keys = index.fn(object);
  for (const k of keys) {
    let bucket = index.entries.get(k);
    if (!bucket) index.entries.set(k, (bucket = new Map<string, KubeObject>()));
    bucket.set(key, object);
  }
}

/** What an index key with no objects yields (shared: nothing can be added to it). */
const NOTHING: readonly KubeObject[] = [];

/** Same resourceVersion means the same object: informer resyncs and re-lists are not changes. */
function unchanged(old: KubeObject, next: KubeObject): boolean {
  const a = old.metadata.resourceVersion;
  return a !== undefined && a !== '' && a === next.metadata.resourceVersion && old.metadata.uid === next.metadata.uid;
}

export class MemoryStore implements ObjectStore, StoreWriter {
  private readonly tables = new Map<KindId, KindTable>();
  private readonly listeners = new Set<StoreListener>();
  private readonly pendingSync = new Set<string>();
  private expectedAny = false;
  private syncWaiters: (() => void)[] = [];

  private table(kind: KindId): KindTable {
    let t = this.tables.get(kind);
    if (!t) this.tables.set(kind, (t = new KindTable()));
    return t;
  }

  get(kind: KindId, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.tables.get(kind)?.objects.get(objectKey(namespace, name));
  }

  list(kind: KindId, namespace?: string): KubeObject[] {
    const t = this.tables.get(kind);
    if (!t) return [];
    if (namespace === undefined) return [...t.objects.values()];
    return [...(t.byNamespace.get(namespace)?.values() ?? [])];
  }

  count(kind: KindId): number {
    return this.tables.get(kind)?.objects.size ?? 0;
  }

  addIndex(kind: KindId, name: string, fn: IndexFunction): void {
    const t = this.table(kind);
    if (t.indexes.has(name)) throw new Error(`index "${name}" on ${kind} is already registered`);
    const index: Index = { fn, entries: new Map() };
    // forEach: a for-of over entries() made a [key, value] array per object (100k at a cold start).
    // A new index holds nothing: no object needs unfiling first.
    t.objects.forEach((object, key) => fileNew(index, key, object));
    t.indexes.set(name, index);
  }

  addLabelIndex(kind: KindId, name: string, fn: LabelIndexFunction): void {
    const t = this.table(kind);
    if (t.labelIndexes.has(name)) throw new Error(`label index "${name}" on ${kind} is already registered`);
    const index = new LabelIndex(fn);
    t.objects.forEach((object) => index.fileNew(object));
    t.labelIndexes.set(name, index);
  }

  labelIndex(kind: KindId, name: string): LabelIndexView {
    const index = this.tables.get(kind)?.labelIndexes.get(name);
    if (!index) throw new Error(`no label index "${name}" on ${kind}`);
    return index;
  }

  byIndex(kind: KindId, name: string, key: string): KubeObject[] {
    return [...this.indexed(kind, name, key)];
  }

  indexed(kind: KindId, name: string, key: string): Iterable<KubeObject> {
    const index = this.tables.get(kind)?.indexes.get(name);
    if (!index) throw new Error(`no index "${name}" on ${kind}`);
    return index.entries.get(key)?.values() ?? NOTHING;
  }

  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  hasSynced(): boolean {
    return this.expectedAny && this.pendingSync.size === 0;
  }

  whenSynced(): Promise<void> {
    if (this.hasSynced()) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /** Parts of the initial load still missing; /ready lists them. */
  unsyncedParts(): string[] {
    return [...this.pendingSync].sort();
  }

  expectSync(part: string): void {
    this.expectedAny = true;
    this.pendingSync.add(part);
  }

  markSynced(part: string): void {
    this.pendingSync.delete(part);
    if (this.hasSynced()) {
      const waiters = this.syncWaiters;
      this.syncWaiters = [];
      for (const w of waiters) w();
    }
  }

  upsert(kind: KindId, objects: readonly KubeObject[]): void {
    this.apply(objects.map((object) => ({ kind, object })));
  }

  remove(kind: KindId, objects: readonly KubeObject[]): void {
    this.apply(objects.map((object) => ({ kind, object, deleted: true })));
  }

  replace(kind: KindId, objects: readonly KubeObject[]): void {
    const t = this.table(kind);
    const incoming = new Set(objects.map(keyOf));
    const changes: { kind: KindId; object: KubeObject; deleted?: boolean }[] = [];
    for (const [key, object] of t.objects) if (!incoming.has(key)) changes.push({ kind, object, deleted: true });
    for (const object of objects) changes.push({ kind, object });
    this.apply(changes);
  }

  apply(changes: readonly { kind: KindId; object: KubeObject; deleted?: boolean }[]): void {
    const events: StoreEvent[] = [];
    for (const { kind, object, deleted } of changes) {
      const t = this.table(kind);
      const key = keyOf(object);
      const old = t.objects.get(key);
      if (deleted) {
        if (!old) continue;
        t.delete(key, old);
        events.push({ type: 'delete', kind, object: old });
      } else if (!old) {
        t.set(key, object, undefined);
        events.push({ type: 'add', kind, object });
      } else if (!unchanged(old, object)) {
        t.set(key, object, old);
        events.push({ type: 'update', kind, object, old });
      }
    }
    if (events.length > 0) this.emit(events);
  }

  private emit(events: readonly StoreEvent[]): void {
    // A snapshot: a listener subscribed while this batch is delivered must not hear a batch that
    // was applied before it subscribed (a live Set iteration would visit it).
    for (const listener of [...this.listeners]) {
      try {
        listener(events);
      } catch (err) {
        // One broken consumer must not stop the others or the source feeding the store.
        log.error({ err }, 'store listener failed');
      }
    }
  }
}
