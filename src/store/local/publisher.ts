// Turns the objects whose owner may have changed into the informer-equivalent events, with
// resourceVersions, and hands them to the store in slices: the cost of a reload is the size of
// what changed, and no reload holds the event loop for long, however many objects it carries.

import { performance } from 'node:perf_hooks';
import type { StoreWriter } from '../types';
import { Change, OwnershipIndex, Stored, storedForm } from './ownership';

/**
 * Longest stretch of publishing work between two yields to the event loop. Well under the
 * 100 ms stall the hardening issue allows, and long enough that yielding costs little.
 */
export const LOCAL_SLICE_MS = 10;

/**
 * Changes per store batch. The store's subscribers (the ambient index) work per batch; 500 pods
 * keep one batch to a few milliseconds there, while a small edit still arrives as one batch.
 */
export const LOCAL_APPLY_BATCH = 500;

export interface PublishCounts {
  add: number;
  update: number;
  delete: number;
}

/** Resolves on the next turn of the event loop once LOCAL_SLICE_MS have passed since the last one. */
export class Slicer {
  private since = performance.now();

  async pause(): Promise<void> {
    if (performance.now() - this.since < LOCAL_SLICE_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

export class Publisher {
  readonly index = new OwnershipIndex();
  /** What the store holds from this source, by object id. */
  private readonly current = new Map<string, Stored>();
  private version = 0;

  constructor(
    private readonly writer: StoreWriter,
    private readonly now: () => Date,
  ) {}

  get size(): number {
    return this.current.size;
  }

  /** Publishes every dirty id; `stopped` ends it early (the source is shutting down). */
  async publish(slicer: Slicer, stopped: () => boolean): Promise<PublishCounts> {
    const counts: PublishCounts = { add: 0, update: 0, delete: 0 };
    const deletes: Change[] = [];
    const upserts: Change[] = [];
    const dirty = [...this.index.dirty];
    this.index.dirty.clear();
    const nextVersion = () => String(++this.version);
    const now = () => this.now().toISOString();
    for (const id of dirty) {
      await slicer.pause();
      const want = this.index.resolve(id);
      const cur = this.current.get(id);
      if (!want) {
        if (!cur) continue;
        this.current.delete(id);
        deletes.push({ kind: cur.kind, object: cur.stored, deleted: true });
        counts.delete++;
      } else if (cur && cur.fingerprint === want.fingerprint) {
        // The same object, perhaps now from another file: no event, the stored form stays.
        this.current.set(id, { ...want, stored: cur.stored });
      } else {
        const stored = storedForm(want, cur, nextVersion, now);
        this.current.set(id, { ...want, stored });
        upserts.push({ kind: want.kind, object: stored });
        if (cur) counts.update++;
        else counts.add++;
      }
    }
    const changes = [...deletes, ...upserts];
    for (let i = 0; i < changes.length && !stopped(); i += LOCAL_APPLY_BATCH) {
      if (i > 0) await slicer.pause();
      this.writer.apply(changes.slice(i, i + LOCAL_APPLY_BATCH));
    }
    return counts;
  }
}
