// The ambient status controller: keeps ZtunnelAccepted and WaypointAccepted on
// AuthorizationPolicies, istio.io/WaypointBound on Services, ServiceEntries and WorkloadEntries,
// and istio.io/WaypointMissing and istio.io/VisibilityApplied on ServiceEntries equal to what the
// ambient index gave ztunnel. Store events mark objects (dirty.ts); after a short quiet spell the marked objects are
// merged one by one and written only when their conditions differ, at most STATUS_WRITE_QPS a
// second. Marks made while a batch is in flight join the queue once, however many events made them.

import { scopedLogger } from '../../log/logger';
import type { PolicyStatusFacts } from '../../ambient/policy-status';
import type { WaypointStatusFacts } from '../../ambient/waypoint-status';
import type { WaypointPolicyFacts } from '../../ambient/waypoint-policy-status';
import type { WorkloadWaypointFacts } from '../../ambient/workload-waypoint-status';
import { backoffDelay, type BackoffPolicy } from '../../store/kube/backoff';
import type { KubeObject, ObjectStore, StoreEvent } from '../../store/types';
import {
  CONDITION_TYPE,
  policyConditions,
  waypointConditions,
  waypointPolicyConditions,
  workloadEntryConditions,
  type DesiredCondition,
} from './conditions';
import { StatusDirtyTracker, isStatusKind, parseStatusKey, statusKey, type StatusKind } from './dirty';
import { mergeConditions } from './merge';
import { STATUS_WRITE_BURST, STATUS_WRITE_QPS, TokenBucket } from './rate-limit';
import type { StatusSink } from './sinks';

const log = scopedLogger('status');

/** Quiet spell that gathers a burst of events into one pass; as PILOT_DEBOUNCE_AFTER's default. */
export const STATUS_DEBOUNCE_MS = 100;
/** Objects merged between yields to the event loop, so a pass over 100k objects never blocks it. */
export const STATUS_YIELD_EVERY = 500;
/** Tries of one object's write before waiting for its next event (istiod's status queue: 5). */
export const STATUS_MAX_ATTEMPTS = 5;
/** Between those tries; the writer itself already retried each call with its own backoff. */
export const STATUS_RETRY_BACKOFF: BackoffPolicy = { initialMs: 1_000, maxMs: 30_000 };

/** What the ambient index tells us (AmbientIndex implements it). */
export interface StatusFacts {
  policyStatus(namespace: string, name: string): PolicyStatusFacts | undefined;
  waypointStatus(kind: 'Service' | 'ServiceEntry', namespace: string, name: string): WaypointStatusFacts | undefined;
  waypointPolicyStatus(namespace: string, name: string): WaypointPolicyFacts | undefined;
  workloadEntryWaypointStatus(namespace: string, name: string): WorkloadWaypointFacts | undefined;
}

/** The condition types this controller owns, per kind. */
export const OWNED_TYPES: Readonly<Record<StatusKind, readonly string[]>> = {
  AuthorizationPolicy: [CONDITION_TYPE.ztunnelAccepted, CONDITION_TYPE.waypointAccepted],
  Service: [CONDITION_TYPE.waypointBound],
  ServiceEntry: [CONDITION_TYPE.waypointBound, CONDITION_TYPE.waypointMissing, CONDITION_TYPE.visibilityApplied],
  WorkloadEntry: [CONDITION_TYPE.waypointBound],
};

/** The conditions of ours that apply to an object now. */
export function desiredConditions(kind: StatusKind, o: KubeObject, facts: StatusFacts): DesiredCondition[] {
  const ns = o.metadata.namespace ?? '';
  const name = o.metadata.name;
  switch (kind) {
    case 'AuthorizationPolicy':
      return [
        ...policyConditions(facts.policyStatus(ns, name)),
        ...waypointPolicyConditions(facts.waypointPolicyStatus(ns, name)),
      ];
    case 'WorkloadEntry':
      return workloadEntryConditions(facts.workloadEntryWaypointStatus(ns, name));
    default:
      return waypointConditions(facts.waypointStatus(kind, ns, name));
  }
}

export interface StatusControllerOptions {
  store: ObjectStore;
  facts: StatusFacts;
  sink: StatusSink;
  /** meshConfig changes re-check every ServiceEntry and AuthorizationPolicy (visibility, root namespace). */
  onMeshChange?: (listener: () => void) => () => void;
  rate?: { qps: number; burst: number };
  debounceMs?: number;
  retryBackoff?: BackoffPolicy;
  now?: () => Date;
}

export class AmbientStatusController {
  private readonly dirty = new Set<string>();
  private readonly tracker: StatusDirtyTracker;
  private readonly bucket: TokenBucket;
  /** resourceVersion each object had when we last wrote it: until the watch moves past it, there is nothing to do. */
  private readonly writtenFrom = new Map<string, string>();
  private readonly attempts = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Wakes the pass out of a rate-limit wait when the controller stops. */
  private readonly sleepers = new Set<() => void>();
  private readonly unsubscribe: (() => void)[] = [];
  private debounce: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private stopped = true;
  /**
   * One per leadership term, aborted on stop: a write still retrying when the term ends is
   * cancelled, so no write starts after the lease may have passed to another replica.
   */
  private cancel = new AbortController();
  /** Successful writes, for tests and the debug page. */
  writes = 0;

  constructor(private readonly opts: StatusControllerOptions) {
    this.tracker = new StatusDirtyTracker(opts.store);
    const rate = opts.rate ?? { qps: STATUS_WRITE_QPS, burst: STATUS_WRITE_BURST };
    this.bucket = new TokenBucket(rate.qps, rate.burst);
  }

  /** Starts watching and merges every object once (as istiod does when it gains leadership). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.cancel = new AbortController();
    this.unsubscribe.push(this.opts.store.subscribe((events) => this.onEvents(events)));
    if (this.opts.onMeshChange)
      this.unsubscribe.push(this.opts.onMeshChange(() => this.markWith((out) => this.tracker.meshChanged(out))));
    this.markWith((out) => this.tracker.all(out));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancel.abort();
    for (const u of this.unsubscribe.splice(0)) u();
    clearTimeout(this.debounce);
    this.debounce = undefined;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const wake of this.sleepers) wake();
    this.sleepers.clear();
    this.dirty.clear();
    await this.pass;
  }

  /** Resolves once nothing is marked and no pass is running (tests). */
  async idle(): Promise<void> {
    while (this.pass || this.debounce || this.dirty.size > 0) {
      await (this.pass ?? new Promise((resolve) => setTimeout(resolve, 5)));
    }
  }

  private onEvents(events: readonly StoreEvent[]): void {
    this.markWith((out) => {
      for (const e of events) {
        if (e.type === 'delete' && isStatusKind(e.kind)) {
          this.opts.sink.forget(e.kind, e.object);
          this.writtenFrom.delete(statusKey(e.kind, e.object));
        }
        this.tracker.mark(e, out);
      }
    });
  }

  private markWith(fill: (out: Set<string>) => void): void {
    if (this.stopped) return;
    fill(this.dirty);
    if (this.dirty.size > 0) this.schedule();
  }

  private schedule(): void {
    if (this.debounce || this.pass || this.stopped) return;
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      this.pass = this.runPass().finally(() => {
        this.pass = undefined;
        if (this.dirty.size > 0) this.schedule();
      });
    }, this.opts.debounceMs ?? STATUS_DEBOUNCE_MS);
  }

  private async runPass(): Promise<void> {
    let sinceYield = 0;
    while (!this.stopped) {
      const key = this.dirty.values().next().value;
      if (key === undefined) return;
      this.dirty.delete(key);
      try {
        await this.reconcile(key);
        this.attempts.delete(key);
      } catch (err) {
        this.retryLater(key, err);
      }
      if (++sinceYield >= STATUS_YIELD_EVERY) {
        sinceYield = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }

  /** The object and what it should carry now, or undefined when nothing needs writing. */
  private plan(key: string): { kind: StatusKind; object: KubeObject; conditions: unknown[] } | undefined {
    const ref = parseStatusKey(key);
    if (!ref) return undefined;
    const object = this.opts.store.get(ref.kind, ref.namespace || undefined, ref.name);
    if (!object) return undefined;
    const rv = object.metadata.resourceVersion;
    if (rv !== undefined && this.writtenFrom.get(key) === rv) return undefined;
    const desired = desiredConditions(ref.kind, object, this.opts.facts);
    const merged = mergeConditions(
      this.opts.sink.current(ref.kind, object),
      desired,
      OWNED_TYPES[ref.kind],
      (this.opts.now ?? (() => new Date()))(),
    );
    return merged.changed ? { kind: ref.kind, object, conditions: merged.conditions } : undefined;
  }

  private async reconcile(key: string): Promise<void> {
    let plan = this.plan(key);
    if (!plan) return;
    if (this.opts.sink.rateLimited) {
      for (let wait = this.bucket.tryTake(); wait > 0; wait = this.bucket.tryTake()) {
        await this.sleep(wait);
        if (this.stopped) return;
      }
      // The wait may have been long: merge again from what the store holds now.
      plan = this.plan(key);
      if (!plan) return;
    }
    const outcome = await this.opts.sink.write(plan.kind, plan.object, plan.conditions, this.cancel.signal);
    if (outcome !== 'written') {
      log.debug({ object: key, outcome }, 'status not written; waiting for the next event');
      return;
    }
    this.writes++;
    const rv = plan.object.metadata.resourceVersion;
    if (this.opts.sink.rateLimited && rv !== undefined) this.writtenFrom.set(key, rv);
    log.debug({ object: key }, 'status conditions written');
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(t);
        this.timers.delete(t);
        this.sleepers.delete(wake);
        resolve();
      };
      const t = setTimeout(wake, ms);
      this.timers.add(t);
      this.sleepers.add(wake);
    });
  }

  private retryLater(key: string, err: unknown): void {
    if (this.stopped) return;
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    if (attempt >= STATUS_MAX_ATTEMPTS) {
      this.attempts.delete(key);
      log.error({ object: key, err, attempts: attempt }, 'status write failed; giving up until the object changes');
      return;
    }
    this.attempts.set(key, attempt);
    const delay = backoffDelay(attempt, this.opts.retryBackoff ?? STATUS_RETRY_BACKOFF);
    log.warn({ object: key, err, attempt, delay }, 'status write failed; retrying');
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.markWith((out) => out.add(key));
    }, delay);
    this.timers.add(t);
  }
}
