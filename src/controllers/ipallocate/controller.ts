// Keeps ServiceEntry status.addresses allocated (istiod's IP autoallocate controller), on the
// leader of `istio-ip-autoallocate` only. Once the store has synced, every entry the API server
// holds is listed (the store shows only those inside meshConfig discoverySelectors, and an entry
// outside them still carries its addresses), every address already in status or spec is claimed
// (so a new leader writes nothing for entries that have theirs), then each entry the store shows
// is decided oldest first and on every store event for it, one at a time. Nothing is allocated
// before that list has come back. A write whose `test` guard fails, that the API server refuses,
// or whose answer never came, is retried with backoff, at most IP_ALLOCATE_MAX_ATTEMPTS times per
// change of the entry; each retry first reads the entry back, and only what it does not carry is
// freed. An entry the store stops showing is read back too: freed only if it is gone.

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
  /** How long a freed address stays out of use; default IP_ALLOCATE_QUARANTINE_MS. */
  quarantineMs?: number;
  /** The quarantine's clock in ms; default Date.now. */
  now?: () => number;
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
  /** Writes that failed or never answered: the entry is read back before anything they took is freed. */
  private readonly unsettled = new Map<string, Plan>();
  /** Entries whose attempts ran out: left alone, even when an address comes free, until they change. */
  private readonly givenUp = new Set<string>();
  /** Set once every entry the API server holds has been claimed: nothing is decided before. */
  private ready = false;
  private running: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  private listTimer: NodeJS.Timeout | undefined;
  /** Plans the waiting entries again when the next freed address leaves quarantine. */
  private wakeTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly now: () => number;
  /**
   * Aborted on stop: a write still retrying when the leadership ends is cancelled, so no write
   * starts after the lock may have passed to another replica.
   */
  private readonly cancel = new AbortController();
  /** Status writes made, for metrics and tests. */
  writes = 0;

  constructor(private readonly opts: IpAutoallocateOptions) {
    this.now = opts.now ?? Date.now;
    this.allocator = new ServiceEntryAllocator(opts.prefixes, {
      ...(opts.quarantineMs !== undefined ? { quarantineMs: opts.quarantineMs } : {}),
      now: this.now,
    });
  }

  /** Starts after the store has synced; returns the stop function (for LeaderElector.runWhileLeader). */
  start(): () => Promise<void> {
    void this.opts.store.whenSynced().then(() => {
      if (this.stopped) return;
      // Events from here on queue their entries; they are decided once the list below is in.
      this.unsubscribe = this.opts.store.subscribe((events) => this.onEvents(events));
      this.listAll(1);
    });
    return () => this.stop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancel.abort();
    this.unsubscribe?.();
    clearTimeout(this.listTimer);
    clearTimeout(this.wakeTimer);
    for (const t of this.retryTimers.values()) clearTimeout(t);
    this.retryTimers.clear();
    this.queue.clear();
    await this.running;
  }

  /** Resolves when nothing is queued, running or waiting for a retry (tests). */
  async idle(): Promise<void> {
    while (this.running || this.queue.size > 0 || this.retryTimers.size > 0 || !this.ready) {
      await (this.running ?? new Promise((resolve) => setTimeout(resolve, 10)));
    }
  }

  /** Hosts without an address because their range is exhausted (a metric). */
  waitingHosts(): number {
    return this.allocator.waitingHosts();
  }

  /** Lists every entry the API server holds, retried with backoff until it succeeds or leadership ends. */
  private listAll(attempt: number): void {
    this.opts.writer.list(this.cancel.signal).then(
      (all) => {
        if (!this.stopped) this.warm(all);
      },
      (err: unknown) => {
        if (this.stopped) return;
        const delay = backoffDelay(attempt, this.opts.backoff ?? IP_ALLOCATE_BACKOFF);
        log.warn(
          { attempt, delay, err: (err as Error).message },
          'listing ServiceEntries failed; no address is allocated until every address in use is known',
        );
        this.listTimer = setTimeout(() => this.listAll(attempt + 1), delay);
        this.listTimer.unref();
      },
    );
  }

  /** Claims what every entry carries, the store's copy where it has one; then decides the store's entries. */
  private warm(all: readonly KubeObject[]): void {
    const visible = this.opts.store.list('ServiceEntry');
    const shown = new Set(visible.map(entryKey));
    const hidden = all.filter((se) => !shown.has(entryKey(se)));
    const keys = this.allocator.warm([...visible, ...hidden]);
    this.ready = true;
    log.info(
      { entries: visible.length, outsideDiscoverySelectors: hidden.length, ...this.allocator.inUse() },
      'IP auto-allocation started',
    );
    for (const key of keys) if (shown.has(key)) this.queue.add(key);
    if (this.queue.size > 0) this.running ??= this.drain();
  }

  private onEvents(events: readonly StoreEvent[]): void {
    for (const e of events) {
      if (e.kind !== 'ServiceEntry') continue;
      const key = entryKey(e.object);
      this.attempts.delete(key);
      this.givenUp.delete(key);
      if (e.type === 'delete') this.written.delete(key);
      this.enqueue(key);
    }
  }

  private enqueue(key: string): void {
    if (this.stopped) return;
    this.queue.add(key);
    if (this.ready) this.running ??= this.drain();
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
      this.scheduleWake();
    }
  }

  /**
   * Entries with hosts that wait for an address are planned again when one can be reused: now if
   * one already can, else when the next freed address of a range they wait on leaves quarantine.
   * Nothing is scheduled while nothing is freed; the release that frees one ends a drain, which
   * comes back here.
   */
  private scheduleWake(): void {
    clearTimeout(this.wakeTimer);
    this.wakeTimer = undefined;
    if (this.stopped) return;
    const waiting = () => this.allocator.waitingEntries().filter((k) => !this.givenUp.has(k));
    if (waiting().length === 0) return;
    const at = this.allocator.nextReuseAt();
    if (at === undefined) return;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = undefined;
        for (const key of waiting()) if (!this.retryTimers.has(key)) this.enqueue(key);
      },
      Math.max(0, at - this.now()),
    );
    this.wakeTimer.unref();
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
    let se = this.current(key);
    const unsettled = this.unsettled.get(key);
    if (unsettled || !se) {
      // After a write of unknown outcome, or when the store stops showing the entry, the API
      // server's copy decides what the entry holds: nothing it carries is freed.
      const slash = key.indexOf('/');
      let truth: KubeObject | undefined;
      try {
        truth = await this.opts.writer.read(key.slice(0, slash), key.slice(slash + 1), this.cancel.signal);
      } catch (err) {
        this.retry(key, err);
        return;
      }
      if (this.stopped) return;
      if (unsettled) {
        this.unsettled.delete(key);
        for (const other of this.allocator.settle(unsettled, truth)) this.enqueue(other);
      }
      if (!truth) {
        this.written.delete(key);
        this.allocator.release(key);
        return;
      }
      if (!se) {
        for (const other of this.allocator.hold(truth)) this.enqueue(other);
        log.debug({ serviceEntry: key }, 'ServiceEntry is outside discoverySelectors; its addresses stay held');
        return;
      }
      if (truth.metadata.resourceVersion !== se.metadata.resourceVersion)
        this.written.set(key, { from: se.metadata.resourceVersion, object: truth });
      se = truth;
    }
    const plan = this.allocator.plan(se);
    for (const other of plan.reassign) this.enqueue(other);
    if (plan.kind === 'none') return;
    try {
      this.writes++;
      const written = await this.opts.writer.write(se, plan.addresses, this.cancel.signal);
      if (!written) {
        this.allocator.settle(plan, undefined);
        return;
      }
      this.allocator.commit(plan);
      this.written.set(key, { from: se.metadata.resourceVersion, object: written });
      this.attempts.delete(key);
      log.info({ serviceEntry: key, addresses: plan.addresses.map((a) => a.value) }, describePlan(plan));
    } catch (err) {
      // The write may have landed even so (its answer lost or late): what it took stays held
      // until the entry is read back.
      this.unsettled.set(key, plan);
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
      this.givenUp.add(key);
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
