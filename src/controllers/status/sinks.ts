// Where merged conditions go. In Kubernetes mode: the object's status subresource, through the one
// writer, with a JSON patch whose `test` op fails (422) if another writer changed the conditions
// since our informer saw them; the watch then brings the new state and the object is merged again.
// In local mode there is no API server: the conditions are kept in memory for /debug/status.

import { KINDS } from '../../store/kinds';
import { KubeApiError } from '../../store/kube/client';
import { isConflict, isNotFound, type JsonPatchOp, type KubeWriter } from '../../store/kube/writes';
import type { KubeObject } from '../../store/types';
import type { StatusKind } from './dirty';

/** written: stored. stale: someone else changed the object first. gone: it was deleted. */
export type WriteOutcome = 'written' | 'stale' | 'gone';

export interface StatusSink {
  /** Kubernetes writes are rate-limited; memory writes are free. */
  readonly rateLimited: boolean;
  /** The object's status.conditions as this sink knows them. */
  current(kind: StatusKind, o: KubeObject): unknown;
  /** `signal` cancels the write and its retries (the leadership it was made under has ended). */
  write(kind: StatusKind, o: KubeObject, conditions: unknown[], signal?: AbortSignal): Promise<WriteOutcome>;
  /** The object was deleted. */
  forget(kind: StatusKind, o: KubeObject): void;
}

const isFields = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The JSON patch for the status subresource: replace the conditions we read, guarded by a `test`
 * of them, so only status.conditions changes and other status fields (ServiceEntry addresses) are
 * never overwritten. Without a list to test, the resourceVersion is the guard.
 */
export function statusPatch(o: KubeObject, conditions: readonly unknown[]): JsonPatchOp[] {
  const status: unknown = o.status;
  const existing = isFields(status) ? status['conditions'] : undefined;
  if (Array.isArray(existing)) {
    const guard: JsonPatchOp = { op: 'test', path: '/status/conditions', value: existing };
    return conditions.length > 0
      ? [guard, { op: 'replace', path: '/status/conditions', value: conditions }]
      : [guard, { op: 'remove', path: '/status/conditions' }];
  }
  const guard: JsonPatchOp = { op: 'test', path: '/metadata/resourceVersion', value: o.metadata.resourceVersion };
  if (isFields(status)) return [guard, { op: 'add', path: '/status/conditions', value: conditions }];
  return [guard, { op: 'add', path: '/status', value: { conditions } }];
}

export class KubeStatusSink implements StatusSink {
  readonly rateLimited = true;

  constructor(private readonly writer: KubeWriter) {}

  current(_kind: StatusKind, o: KubeObject): unknown {
    const status: unknown = o.status;
    return isFields(status) ? status['conditions'] : undefined;
  }

  async write(kind: StatusKind, o: KubeObject, conditions: unknown[], signal?: AbortSignal): Promise<WriteOutcome> {
    const info = KINDS[kind];
    const ref = {
      group: info.group,
      version: info.version,
      plural: info.plural,
      namespace: o.metadata.namespace ?? '',
      name: o.metadata.name,
    };
    try {
      await this.writer.patch(
        ref,
        { type: 'json', ops: statusPatch(o, conditions) },
        { status: true, ...(signal ? { signal } : {}) },
      );
      return 'written';
    } catch (err) {
      if (isNotFound(err)) return 'gone';
      // 422: a `test` op failed; 409: a resourceVersion precondition. Either way the watch brings news.
      if (isConflict(err) || (err instanceof KubeApiError && err.status === 422)) return 'stale';
      throw err;
    }
  }

  forget(): void {
    // The API server dropped the object and its status with it.
  }
}

/** Local mode: the conditions each object would carry, for /debug/status. */
export class MemoryStatusSink implements StatusSink {
  readonly rateLimited = false;
  private readonly conditions = new Map<string, unknown[]>();

  private key(kind: StatusKind, o: KubeObject): string {
    return `${kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  }

  current(kind: StatusKind, o: KubeObject): unknown {
    const status: unknown = o.status;
    return this.conditions.get(this.key(kind, o)) ?? (isFields(status) ? status['conditions'] : undefined);
  }

  write(kind: StatusKind, o: KubeObject, conditions: unknown[]): Promise<WriteOutcome> {
    this.conditions.set(this.key(kind, o), conditions);
    return Promise.resolve('written');
  }

  forget(kind: StatusKind, o: KubeObject): void {
    this.conditions.delete(this.key(kind, o));
  }
}
