// /live: whether the event loop still turns. A timer samples how late it fires; the process is
// live unless the loop has gone LIVENESS_MAX_LAG_MS without turning. That is a stuck process,
// not a slow one: a cold start that is still listing the cluster keeps the loop turning (the
// store's apply pacer yields every turn), so /live stays 200 while /ready is 503. The chart's
// livenessProbe asks /live and restarts the pod only after several failures in a row.

import { performance } from 'node:perf_hooks';

/** How often the loop's lag is sampled. */
export const LIVENESS_SAMPLE_MS = 1_000;

/**
 * A lag this long means the loop is stuck. The longest blocks the benches have measured (cold
 * start, a large manifest loading; BENCHMARKS.md) are tens of milliseconds, and the worst ever
 * seen, 7.7 s for a manifest load before it was split into turns, is under a third of this, so
 * only a loop that no longer turns fails.
 */
export const LIVENESS_MAX_LAG_MS = 30_000;

export interface LivenessStatus {
  live: boolean;
  /** The larger of the last sample's lag and how late the next sample already is, in ms. */
  lagMs: number;
}

export interface LivenessOptions {
  /** Monotonic milliseconds; tests pass their own. */
  now?: () => number;
  sampleMs?: number;
  maxLagMs?: number;
}

export class EventLoopLiveness {
  private readonly now: () => number;
  private readonly sampleMs: number;
  private readonly maxLagMs: number;
  private lastTickAt: number;
  private lastLagMs = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(opts: LivenessOptions = {}) {
    this.now = opts.now ?? (() => performance.now());
    this.sampleMs = opts.sampleMs ?? LIVENESS_SAMPLE_MS;
    this.maxLagMs = opts.maxLagMs ?? LIVENESS_MAX_LAG_MS;
    if (!(this.sampleMs > 0 && this.maxLagMs > this.sampleMs))
      throw new Error(`liveness: maxLagMs (${this.maxLagMs}) must exceed sampleMs (${this.sampleMs}) > 0`);
    this.lastTickAt = this.now();
  }

  /** Starts sampling; the timer does not keep the process alive. */
  start(): void {
    if (this.timer) return;
    this.lastTickAt = this.now();
    this.timer = setInterval(() => this.sample(), this.sampleMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One sample: how much later than asked the timer fired. Called by the timer; tests call it directly. */
  sample(): void {
    const at = this.now();
    this.lastLagMs = Math.max(0, at - this.lastTickAt - this.sampleMs);
    this.lastTickAt = at;
  }

  /**
   * Asked between samples, a loop that was blocked since the last one shows as a sample already
   * late: a request handled right after a long block, before the timer's turn, still sees it.
   */
  status(): LivenessStatus {
    const pending = this.now() - this.lastTickAt - this.sampleMs;
    const lagMs = Math.max(this.lastLagMs, pending, 0);
    return { live: lagMs <= this.maxLagMs, lagMs };
  }
}
