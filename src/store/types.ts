// The object store: typed Kubernetes objects, indexes, and change events. Every component reads
// the cluster (or the local folder) only through this interface.

import type { KindId } from './kinds';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  generateName?: string;
}

/** A Kubernetes object as JSON. Typed views of spec/status live with the code that reads them. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: unknown;
  data?: Record<string, string>;
  [field: string]: unknown;
}

export type EventType = 'add' | 'update' | 'delete';

export interface StoreEvent {
  type: EventType;
  kind: KindId;
  /** The new object; for a delete, the last state seen. */
  object: KubeObject;
  /** The previous object, for updates. */
  old?: KubeObject;
}

/** Receives events in batches: one batch per informer event or per changed file. */
export type StoreListener = (events: readonly StoreEvent[]) => void;

/** Computes index keys of an object; an object may have any number of keys. */
export type IndexFunction = (object: KubeObject) => readonly string[];

export interface ObjectStore {
  get(kind: KindId, namespace: string | undefined, name: string): KubeObject | undefined;
  /** Objects of a kind, in one namespace when given. */
  list(kind: KindId, namespace?: string): KubeObject[];
  /** Registers an index; objects already in the store are indexed at once. Names are per kind. */
  addIndex(kind: KindId, name: string, fn: IndexFunction): void;
  byIndex(kind: KindId, name: string, key: string): KubeObject[];
  /**
   * The objects under an index key without copying them: the hot derivations look up several keys
   * per pod, most of them empty, and a copy per lookup was a tenth of a 100k-pod build. Iterate it
   * at once; a store write while iterating changes what it yields.
   */
  indexed(kind: KindId, name: string, key: string): Iterable<KubeObject>;
  /** Registers an index by label pairs (label-index.ts); objects already in the store are filed at once. */
  addLabelIndex(kind: KindId, name: string, fn: LabelIndexFunction): void;
  /** A registered label index, read live (it follows every write). */
  labelIndex(kind: KindId, name: string): LabelIndexView;
  /** Returns an unsubscribe function. Listeners run synchronously after each batch is applied. */
  subscribe(listener: StoreListener): () => void;
  /** True once every source has delivered its initial state. */
  hasSynced(): boolean;
  whenSynced(): Promise<void>;
}

/** The writing side, used only by sources. */
export interface StoreWriter {
  /** Adds or updates objects of a kind and emits one batch. */
  upsert(kind: KindId, objects: readonly KubeObject[]): void;
  /** Deletes objects by namespace/name and emits one batch. */
  remove(kind: KindId, objects: readonly KubeObject[]): void;
  /** Replaces every object of a kind (an informer re-list); emits the difference as one batch. */
  replace(kind: KindId, objects: readonly KubeObject[]): void;
  /** Applies a mixed batch (one changed file may add, update and delete). */
  apply(changes: readonly { kind: KindId; object: KubeObject; deleted?: boolean }[]): void;
  /** Marks one named part of the initial load as done; the store is synced when all parts are. */
  expectSync(part: string): void;
  markSynced(part: string): void;
}

/** A source of objects: the local folder or a Kubernetes cluster. */
export interface ConfigSource {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export function keyOf(object: KubeObject): string {
  return objectKey(object.metadata.namespace, object.metadata.name);
}

// ---- label indexes (label-index.ts) ----

/** Where an object is filed in a label index. */
export interface LabelFiling {
  /** Usually the namespace. */
  scope: string;
  /** Each pair is one entry (a pod's labels, a Service's selector). */
  labels?: Readonly<Record<string, string>> | undefined;
  /** Filed as selecting everything in its scope (an empty, present selector). */
  all?: boolean;
}

/** Computes an object's filing; undefined when it is not in the index. */
export type LabelIndexFunction = (object: KubeObject) => LabelFiling | undefined;

/** The reading side of a label index. */
export interface LabelIndexView {
  /** Objects filed under the pair key=value in `scope`. */
  withLabel(scope: string, key: string, value: string): Iterable<KubeObject>;
  /** Objects filed as selecting everything in `scope`. */
  selectingAll(scope: string): Iterable<KubeObject>;
  /** Whether anything is filed in `scope` (a lookup can stop here). */
  hasScope(scope: string): boolean;
  /** Every scope something is filed in. */
  scopes(): Iterable<string>;
}
