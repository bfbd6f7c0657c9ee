// The lock objects istiod's elections live in, read and written through KubeWriter: a ConfigMap
// carrying the record in an annotation (istiod's NewLeaderElection), or a Lease whose spec is the
// record and whose annotation holds the key (istiod's NewLeaseLeaderElection). Every update sends
// the resourceVersion that was read, so of two replicas writing at once one gets a 409; that is a
// lost round (undefined), never retried here: the election loop tries again a retry period later.

import type { ObjectMeta } from '../types';
import { unlessConflict, type KubeWriter, type ObjectRef, type WriteOptions } from './writes';
import {
  EMPTY_RECORD,
  LEADER_RECORD_ANNOTATION,
  leaseAnnotations,
  leaseSpecFromRecord,
  parseRecord,
  recordFromLease,
  rfc3339Micros,
  rfc3339Seconds,
  serializeRecord,
  type LeaderRecord,
  type LeaseSpec,
} from './leader-record';

export type LockKind = 'ConfigMap' | 'Lease';

/** A lock as last read: the record, what it looked like on the wire, and the object to update. */
export interface LockState {
  record: LeaderRecord;
  /** The record as stored; a change of this string is what "the holder renewed" means. */
  raw: string;
  object: LockObject;
}

/** A ConfigMap or a Lease as the API server returned it. */
export interface LockObject {
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface ResourceLock {
  readonly kind: LockKind;
  readonly describe: string;
  /** How this kind writes times: whole seconds in a ConfigMap record, microseconds in a Lease. */
  time(ms: number): string;
  /** The lock, or undefined when the object does not exist. Throws LeaderRecordError on a malformed record. */
  read(opts: WriteOptions): Promise<LockState | undefined>;
  /** Undefined when another replica created it first. */
  create(record: LeaderRecord, opts: WriteOptions): Promise<LockState | undefined>;
  /** Undefined when the object changed since `from` was read. */
  update(from: LockState, record: LeaderRecord, opts: WriteOptions): Promise<LockState | undefined>;
}

/**
 * What both lock kinds share: one object read and written through KubeWriter, a 409 on create or
 * update being a lost round. A kind says where it lives, how it writes times, how a record is read
 * from the object and how a record is written into a body.
 */
interface LockKindSpec {
  kind: LockKind;
  resource: Pick<ObjectRef, 'group' | 'version' | 'plural'>;
  /** How this kind writes times: whole seconds in a ConfigMap record, microseconds in a Lease. */
  time(ms: number): string;
}

const CONFIGMAP_LOCK: LockKindSpec = {
  kind: 'ConfigMap',
  resource: { group: '', version: 'v1', plural: 'configmaps' },
  time: rfc3339Seconds,
};
const LEASE_LOCK: LockKindSpec = {
  kind: 'Lease',
  resource: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases' },
  time: rfc3339Micros,
};

abstract class ObjectLock implements ResourceLock {
  readonly kind: LockKind;
  readonly describe: string;
  protected readonly ref: ObjectRef;

  constructor(
    private readonly writer: KubeWriter,
    private readonly spec: LockKindSpec,
    namespace: string,
    protected readonly name: string,
  ) {
    this.kind = spec.kind;
    this.ref = { ...spec.resource, namespace, name };
    this.describe = `${spec.resource.plural} ${namespace}/${name}`;
  }

  time(ms: number): string {
    return this.spec.time(ms);
  }
  protected abstract state(object: LockObject): LockState;
  /** The object to send: `base` is the metadata of a new object, or of the object as read. */
  protected abstract body(base: ObjectMeta, record: LeaderRecord, from?: LockObject): LockObject;

  async read(opts: WriteOptions): Promise<LockState | undefined> {
    const object = await this.writer.get<LockObject>(this.ref, opts);
    return object && this.state(object);
  }

  async create(record: LeaderRecord, opts: WriteOptions): Promise<LockState | undefined> {
    const body = this.body({ name: this.name, namespace: this.ref.namespace }, record);
    const created = await unlessConflict(this.writer.create<LockObject>(this.ref, body, opts));
    return created && this.state(created);
  }

  async update(from: LockState, record: LeaderRecord, opts: WriteOptions): Promise<LockState | undefined> {
    const body = this.body(from.object.metadata, record, from.object);
    const updated = await unlessConflict(this.writer.update<LockObject>(this.ref, body, opts));
    return updated && this.state(updated);
  }
}

class ConfigMapLock extends ObjectLock {
  protected state(object: LockObject): LockState {
    const raw = object.metadata.annotations?.[LEADER_RECORD_ANNOTATION];
    return { record: raw === undefined ? EMPTY_RECORD : parseRecord(raw), raw: raw ?? '', object };
  }

  protected body(base: ObjectMeta, record: LeaderRecord, from?: LockObject): LockObject {
    // Everything else on the ConfigMap (labels, data, other annotations) is kept as read.
    const metadata: ObjectMeta = {
      ...base,
      annotations: { ...base.annotations, [LEADER_RECORD_ANNOTATION]: serializeRecord(record) },
    };
    return from ? { ...from, metadata } : { apiVersion: 'v1', kind: 'ConfigMap', metadata };
  }
}

interface LeaseObject extends LockObject {
  spec?: LeaseSpec;
}

class LeaseLock extends ObjectLock {
  protected state(object: LeaseObject): LockState {
    const record = recordFromLease(object.spec, object.metadata.annotations);
    return { record, raw: JSON.stringify(record), object };
  }

  protected body(base: ObjectMeta, record: LeaderRecord): LeaseObject {
    const metadata = { ...base };
    const annotations = leaseAnnotations(base.annotations, record.holderKey);
    if (annotations) metadata.annotations = annotations;
    else delete metadata.annotations;
    return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec: leaseSpecFromRecord(record) };
  }
}

export function newLock(kind: LockKind, writer: KubeWriter, namespace: string, name: string): ResourceLock {
  return kind === 'Lease'
    ? new LeaseLock(writer, LEASE_LOCK, namespace, name)
    : new ConfigMapLock(writer, CONFIGMAP_LOCK, namespace, name);
}
