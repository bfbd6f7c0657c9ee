// Coalesces change sets into pushes without making a lone change wait: if nothing was pushed
// during the last `after` ms, a change goes out at once (with everything merged before it).
// Changes arriving within that window are merged and go out once no change has arrived for
// `after` ms, or `max` ms after the first of them at the latest. Under steady churn this pushes
// about once per `after` ms. (istiod always waits for a quiet window, so every change costs it
// `after`, and steady churn can hold its pushes back until `max`.)

import type { ChangeSet } from '../../contract/xds-resources';

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    // A pending push must not keep a finished process alive.
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** What one push carries: changed names per type (latest state is read at send time). */
export interface PushRequest {
  changes: Map<string, Set<string>>;
  /** Every subscribed resource is resent (meshConfig changed). */
  full: boolean;
  /** When the oldest merged change happened (clock ms), for convergence time. */
  eventAt: number;
}

export interface DebounceSettings {
  /** PILOT_DEBOUNCE_AFTER, ms. */
  after: number;
  /** PILOT_DEBOUNCE_MAX, ms. */
  max: number;
}

export class PushDebouncer {
  private pending: PushRequest | undefined;
  private firstPendingAt = 0;
  private lastChangeAt = 0;
  private lastPushAt = Number.NEGATIVE_INFINITY;
  private timer: unknown;
  private closed = false;

  constructor(
    private readonly settings: DebounceSettings,
    private readonly push: (request: PushRequest) => void,
    private readonly clock: Clock = realClock,
  ) {}

  /** A batch of change sets from the cache. */
  changed(changes: readonly ChangeSet[]): void {
    const req = this.merge(false);
    for (const c of changes) {
      let names = req.changes.get(c.typeUrl);
      if (!names) req.changes.set(c.typeUrl, (names = new Set()));
      for (const n of c.updated) names.add(n);
      for (const n of c.removed) names.add(n);
    }
    this.schedule();
  }

  /** Everything must be resent (e.g. meshConfig changed). */
  fullPush(): void {
    this.merge(true);
    this.schedule();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = undefined;
  }

  private merge(full: boolean): PushRequest {
    const now = this.clock.now();
    if (!this.pending) {
      this.pending = { changes: new Map(), full: false, eventAt: now };
      this.firstPendingAt = now;
    }
    this.pending.full ||= full;
    this.lastChangeAt = now;
    return this.pending;
  }

  private schedule(): void {
    if (this.closed) return;
    const now = this.clock.now();
    if (now - this.lastPushAt >= this.settings.after) {
      if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
      this.timer = undefined;
      this.flush(now);
      return;
    }
    this.arm(now);
  }

  private arm(now: number): void {
    if (this.timer !== undefined) return;
    const due = Math.min(this.lastChangeAt + this.settings.after, this.firstPendingAt + this.settings.max);
    this.timer = this.clock.setTimeout(() => this.fire(), Math.max(0, due - now));
  }

  private fire(): void {
    this.timer = undefined;
    if (this.closed || !this.pending) return;
    const now = this.clock.now();
    const quiet = now - this.lastChangeAt >= this.settings.after;
    const overdue = now - this.firstPendingAt >= this.settings.max;
    if (quiet || overdue) this.flush(now);
    else this.arm(now);
  }

  private flush(now: number): void {
    const req = this.pending;
    this.pending = undefined;
    if (!req) return;
    this.lastPushAt = now;
    this.push(req);
  }
}
