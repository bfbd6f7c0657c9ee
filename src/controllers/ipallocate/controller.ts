// Keeps ServiceEntry status.addresses allocated (istiod's IP autoallocate controller), on the
// leader of `istio-ip-autoallocate` only. Once the store has synced, every address already in
// status or spec is claimed (so a new leader writes nothing for entries that have theirs), then
// each entry is decided oldest first and on every store event for it, one at a time. A write
// whose `test` guard fails, or that the API server refuses, is retried from the store's fresh copy
// with backoff, at most IP_ALLOCATE_MAX_ATTEMPTS times per change of the entry.

import { scopedLogger } from '../../log/logger';
import { backoffDelay, type BackoffPolicy } from '../../store/kube/backoff';
import type { KubeObject, ObjectStore, StoreEvent } from '../../store/types';
import { ServiceEntryAllocator, type AllocatorPrefixes, type Plan } from './allocator';
import { entryKey } from './entries';
import { StaleStatusError, type AddressStatusWriter } from './status-writer';

const log = scopedLogger('ipallocate');

/** Attempts per entry change before giving up until the entry changes again (istiod's queue allows 5). */
export const IP_ALLOCATE_MAX_ATTEMPTS = 5;

/** Backoff between attempts for one entry: quick for a lost `test` race, capped for an API outage. */
export const IP_ALLOCATE_BACKOFF: BackoffPolicy = { initialMs: 100, maxMs: 10_000 };

export interface IpAutoallocateOptions {
  store: ObjectStore;
  writer: AddressStatusWriter;
  prefixes: AllocatorPrefixes;
  backoff?: BackoffPolicy;
  maxAttempts?: number;
}

interface Written {
  /** The resourceVersion the write was made against... */
  from: string | undefined;
  /** ...and the entry the API server answered with, newer than the store until the watch catches up. */
  object: KubeObject;
}

export class IpAutoallocateController {
  readonly allocator: ServiceEntryAllocator;
  private readonly queue = new Set<string>();
  private readonly attempts = new Map<string, number>();
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  private readonly written = new Map<string, Written>();
  private running: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  private stopped = false;
  /**
   * Aborted on stop: a write still retrying when the leadership ends is cancelled, so no write
   * starts after the lock may have passed to another replica.
   */
  private readonly cancel = new AbortController();
  /** Status writes made, for metrics and tests. */
  writes = 0;

  constructor(private readonly opts: IpAutoallocateOptions) {
    this.allocator = new ServiceEntryAllocator(opts.prefixes);
  }

  /** Starts after the store has synced; returns the stop function (for LeaderElector.runWhileLeader). */
  start(): () => Promise<void> {
    void this.opts.store.whenSynced().then(() => {
      if (this.stopped) return;
      // One synchronous block: no store event can fall between the list and the subscription.
      const keys = this.allocator.warm(this.opts.store.list('ServiceEntry'));
      this.unsubscribe = this.opts.store.subscribe((events) => this.onEvents(events));
      log.info({ entries: keys.length, ...this.allocator.inUse() }, 'IP auto-allocation started');
      for (const key of keys) this.enqueue(key);
    });
    return () => this.stop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancel.abort();
    this.unsubscribe?.();
    for (const t of this.retryTimers.values()) clearTimeout(t);
    this.retryTimers.clear();
    this.queue.clear();
    await this.running;
  }

  /** Resolves when nothing is queued, running or waiting for a retry (tests). */
  async idle(): Promise<void> {
    while (this.running || this.queue.size > 0 || this.retryTimers.size > 0) {
      await (this.running ?? new Promise((resolve) => setTimeout(resolve, 10)));
    }
  }

  private onEvents(events: readonly StoreEvent[]): void {
    for (const e of events) {
      if (e.kind !== 'ServiceEntry') continue;
      const key = entryKey(e.object);
      this.attempts.delete(key);
      if (e.type === 'delete') {
        this.written.delete(key);
        this.allocator.release(key);
      }
      this.enqueue(key);
    }
  }

  private enqueue(key: string): void {
    if (this.stopped) return;
    this.queue.add(key);
    this.running ??= this.drain();
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        const next = this.queue.values().next();
        if (next.done || this.stopped) return;
        this.queue.delete(next.value);
        await this.reconcile(next.value);
      }
    } finally {
      this.running = undefined;
    }
  }

  /** The freshest view of an entry: the store's, or the answer to our last write while the watch has not caught up. */
  private current(key: string): KubeObject | undefined {
    const slash = key.indexOf('/');
    const stored = this.opts.store.get('ServiceEntry', key.slice(0, slash), key.slice(slash + 1));
    const w = this.written.get(key);
    if (!stored || !w) return stored;
    if (stored.metadata.resourceVersion === w.from) return w.object;
    this.written.delete(key);
    return stored;
  }

  private async reconcile(key: string): Promise<void> {
    const se = this.current(key);
    if (!se) {
      this.allocator.release(key);
      return;
    }
    const plan = this.allocator.plan(se);
    for (const other of plan.reassign) this.enqueue(other);
    if (plan.kind === 'none') return;
    try {
      this.writes++;
      const written = await this.opts.writer.write(se, plan.addresses, this.cancel.signal);
      if (!written) {
        this.allocator.abandon(plan);
        return;
      }
      this.allocator.commit(plan);
      this.written.set(key, { from: se.metadata.resourceVersion, object: written });
      this.attempts.delete(key);
      log.info({ serviceEntry: key, addresses: plan.addresses.map((a) => a.value) }, describePlan(plan));
    } catch (err) {
      this.allocator.abandon(plan);
      this.retry(key, err);
    }
  }

  private retry(key: string, err: unknown): void {
    if (this.stopped) return;
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    const max = this.opts.maxAttempts ?? IP_ALLOCATE_MAX_ATTEMPTS;
    const stale = err instanceof StaleStatusError;
    if (attempt >= max) {
      this.attempts.delete(key);
      log.error(
        { serviceEntry: key, attempts: attempt, err: (err as Error).message },
        'giving up on status.addresses until the ServiceEntry changes again',
      );
      return;
    }
    this.attempts.set(key, attempt);
    const delay = backoffDelay(attempt, this.opts.backoff ?? IP_ALLOCATE_BACKOFF);
    log[stale ? 'debug' : 'warn'](
      { serviceEntry: key, attempt, delay, err: (err as Error).message },
      stale ? 'status.addresses changed under us; deciding again from fresh data' : 'writing status.addresses failed',
    );
    clearTimeout(this.retryTimers.get(key));
    const timer = setTimeout(() => {
      this.retryTimers.delete(key);
      this.enqueue(key);
    }, delay);
    timer.unref();
    this.retryTimers.set(key, timer);
  }
}

function describePlan(plan: Plan): string {
  return plan.kind === 'write' && plan.addresses.length === 0
    ? 'cleared status.addresses: the ServiceEntry no longer takes auto-allocated addresses'
    : 'wrote status.addresses';
}
