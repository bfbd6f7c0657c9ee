// One election: the loop that acquires, renews, loses and releases one lock, with client-go's
// timing. A follower polls every retry period with jitter; a lock is free when it has no holder,
// when this replica has not seen its record change for a lease duration (the local monotonic
// clock, so clock skew between replicas does not matter), or when istiod's revision priority lets
// this replica take it. The leader renews every retry period and, when it has not renewed for the
// renew deadline, stops its controllers before the lock can expire for the others. Seeing another
// holder in the record stops them at once. Stopping releases the lock by clearing the holder.

import { performance } from 'node:perf_hooks';
import { scopedLogger } from '../../log/logger';
import type { DefaultRevisionSource } from './leader-default-revision';
import type { LockState, ResourceLock } from './leader-lock';
import {
  claimRecord,
  decide,
  holderKeyOf,
  keyEvicts,
  LeaderRecordError,
  releaseRecord,
  type LockDecision,
} from './leader-record';
import { isTransient } from './api-errors';
import type { WriteOptions } from './writes';

const log = scopedLogger('leader');

export interface LeaderTiming {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/** Followers poll at retryPeriod * (1 + random * ACQUIRE_JITTER), as client-go's JitterFactor. */
export const ACQUIRE_JITTER = 1.2;

export type StopFn = () => void | Promise<void>;

export interface ElectionParams {
  name: string;
  lock: ResourceLock;
  identity: string;
  /** This replica's revision: the holder key it writes and the rank it claims. */
  revision: string;
  /**
   * True when the lock lives in a remote cluster this replica manages from outside it (the root
   * certificates of an EXTERNAL_ISTIOD remote): the key gets istiod's '^' prefix, and the replica
   * never outranks a control plane of its own revision running in that cluster.
   */
  remote?: boolean;
  timing: LeaderTiming;
  defaultRevision: DefaultRevisionSource;
}

const monotonicMs = (): number => performance.now();

/**
 * The limit on one lock call (read, create, update): the renew deadline. client-go sets no limit of
 * its own on a lock call; it bounds a whole renewal by the renew deadline, since a call that takes
 * longer cannot keep the lease anyway. The retry period (the old limit) is far too short for a slow
 * but working API server: at istiod's 7.5 s and 6 s per call no replica held a lock.
 */
export function lockCallTimeoutMs(timing: LeaderTiming): number {
  return timing.renewDeadlineMs;
}

/** Consecutive transient failures (timeouts, 5xx, connection errors) before they are a warning: one is routine. */
export const LOCK_FAILURES_BEFORE_WARNING = 2;

export class Election {
  private readonly runs: (() => StopFn)[] = [];
  private stops: StopFn[] = [];
  leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private inflight: Promise<void> | undefined;
  private observedRaw: string | undefined;
  private observedAtMs = 0;
  private last: LockState | undefined;
  private lastProblem = '';
  private transientFailures = 0;

  constructor(private readonly p: ElectionParams) {}

  /** One try per call: the retry period is the retry loop; see lockCallTimeoutMs for the limit. */
  private get callOptions(): WriteOptions {
    return { timeoutMs: lockCallTimeoutMs(this.p.timing), maxAttempts: 1 };
  }

  add(run: () => StopFn): void {
    this.runs.push(run);
    if (this.leading) this.startOne(run);
  }

  start(): void {
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.inflight = this.tick().finally(() => (this.inflight = undefined));
    }, ms);
  }

  private async tick(): Promise<void> {
    let ok = false;
    const startedMs = monotonicMs();
    try {
      ok = await this.tryAcquireOrRenew();
      this.lastProblem = '';
      this.transientFailures = 0;
    } catch (err) {
      this.report(err);
    }
    if (this.stopped) return;
    if (ok && !this.leading) this.becomeLeader();
    if (ok) this.armDeadline();
    if (this.leading) {
      // Renewals are a retry period apart from start to start, so a slow API server's time per try
      // does not add to the gap the renew deadline measures.
      this.schedule(Math.max(0, this.p.timing.retryPeriodMs - (monotonicMs() - startedMs)));
      return;
    }
    this.schedule(this.p.timing.retryPeriodMs * (1 + Math.random() * ACQUIRE_JITTER));
  }

  /**
   * A malformed record or a refusal (403, 422) is an operator's problem worth one warning per
   * distinct message. An overloaded or unreachable API server is retried quietly at first; once it
   * fails LOCK_FAILURES_BEFORE_WARNING times in a row it is a warning too (once per distinct
   * error), since no replica may be leading.
   */
  private report(err: unknown): void {
    const message = (err as Error).message;
    if (!(err instanceof LeaderRecordError) && isTransient(err)) {
      this.transientFailures++;
      if (this.transientFailures < LOCK_FAILURES_BEFORE_WARNING || message === this.lastProblem) {
        log.debug({ lock: this.p.lock.describe, err: message }, 'lock acquire/renew failed');
        return;
      }
      log.warn(
        { lock: this.p.lock.describe, problem: message, failures: this.transientFailures },
        'lock acquire/renew keeps failing; retrying',
      );
      this.lastProblem = message;
      return;
    }
    if (message !== this.lastProblem)
      log.warn(
        { lock: this.p.lock.describe, problem: message },
        err instanceof LeaderRecordError
          ? 'the lock holds a leader-election record that cannot be read; not taking it'
          : 'the API server refused a lock read or write',
      );
    this.lastProblem = message;
  }

  /** Restarted on every renewal: firing means no renewal for the renew deadline. */
  private armDeadline(): void {
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => {
      log.warn(
        { lock: this.p.lock.describe, renewDeadlineMs: this.p.timing.renewDeadlineMs },
        'could not renew the lock in time; stopping controllers',
      );
      void this.loseLeadership();
    }, this.p.timing.renewDeadlineMs);
  }

  private becomeLeader(): void {
    this.leading = true;
    log.info({ lock: this.p.lock.describe, identity: this.p.identity }, 'leader election lock obtained');
    for (const run of this.runs) this.startOne(run);
  }

  private startOne(run: () => StopFn): void {
    try {
      this.stops.push(run());
    } catch (err) {
      log.error({ lock: this.p.lock.describe, err }, 'controller failed to start');
    }
  }

  private async loseLeadership(): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    clearTimeout(this.deadline);
    log.info({ lock: this.p.lock.describe }, 'leader election lock lost');
    for (const stop of this.stops.splice(0).reverse()) {
      try {
        await stop();
      } catch (err) {
        log.error({ lock: this.p.lock.describe, err }, 'controller failed to stop');
      }
    }
  }

  /** A record seen for the first time restarts the holder's lease on our clock; our own writes always do. */
  private observe(state: LockState, written: boolean): void {
    if (written || state.raw !== this.observedRaw) {
      this.observedRaw = state.raw;
      this.observedAtMs = monotonicMs();
    }
    this.last = state;
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { lock, identity, revision, timing } = this.p;
    const remote = this.p.remote ?? false;
    const claim = {
      identity,
      key: holderKeyOf(revision, remote),
      leaseDurationMs: timing.leaseDurationMs,
      time: (ms: number) => lock.time(ms),
    };
    const current = await lock.read(this.callOptions);
    if (!current) {
      // A 409 means another replica created it first: not an error, just not ours.
      const created = await lock.create(
        claimRecord(undefined, 'acquire', { ...claim, nowMs: Date.now() }),
        this.callOptions,
      );
      if (created) this.observe(created, true);
      return created !== undefined;
    }
    this.observe(current, false);
    const holder = current.record.holderIdentity;
    const contested = holder !== '' && holder !== identity;
    const defaultRevision = contested ? await this.p.defaultRevision.current() : '';
    const decision: LockDecision = decide({
      record: current.record,
      identity,
      observedAtMs: this.observedAtMs,
      nowMs: monotonicMs(),
      leaseDurationMs: timing.leaseDurationMs,
      evicts: (key) => keyEvicts(key, revision, defaultRevision, remote),
    });
    if (decision === 'held') {
      // Another replica wrote itself in (a higher-priority revision took the lock): our
      // controllers must not keep writing beside it until the renew deadline.
      if (this.leading) {
        log.info({ lock: lock.describe, holder, holderKey: current.record.holderKey }, 'the lock was taken over');
        await this.loseLeadership();
      }
      return false;
    }
    if (decision === 'steal')
      log.info(
        { lock: lock.describe, holder, holderKey: current.record.holderKey, defaultRevision },
        'taking the lock from a lower-priority revision',
      );
    const next = claimRecord(current.record, decision, { ...claim, nowMs: Date.now() });
    const updated = await lock.update(current, next, this.callOptions);
    if (updated) this.observe(updated, true);
    return updated !== undefined;
  }

  /** Stops trying, stops the controllers, and releases the lock if this replica holds it. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inflight;
    const wasLeading = this.leading;
    await this.loseLeadership();
    const last = this.last;
    if (!wasLeading || last?.record.holderIdentity !== this.p.identity) return;
    try {
      const released = await this.p.lock.update(
        last,
        releaseRecord(last.record, Date.now(), (ms) => this.p.lock.time(ms)),
        this.callOptions,
      );
      if (released) log.info({ lock: this.p.lock.describe }, 'lock released');
      else log.info({ lock: this.p.lock.describe }, 'lock changed before it could be released; left as it is');
    } catch (err) {
      log.warn(
        { lock: this.p.lock.describe, err: (err as Error).message },
        'could not release the lock; it expires on its own',
      );
    }
  }
}
