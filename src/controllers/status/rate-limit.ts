// The status writer's rate limit: a token bucket shared by every status write of this replica, so
// a burst of changes (a namespace relabelled, a waypoint deleted, leadership gained over 10k
// objects) reaches the API server at a steady pace instead of all at once.

/**
 * Sustained status writes per second. client-go's default controller rate limiter (the one
 * istiod's controller queues use) allows 10 per second; the API server's default priority and
 * fairness budget for a controller is shared with its watches, so we do not ask for more.
 */
export const STATUS_WRITE_QPS = 10;
/** Writes allowed at once after a quiet spell: client-go's default bucket size. */
export const STATUS_WRITE_BURST = 100;

export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!(qps > 0)) throw new Error(`status write rate must be above 0 per second, got ${qps}`);
    if (!(burst >= 1)) throw new Error(`status write burst must be at least 1, got ${burst}`);
    this.tokens = burst;
    this.last = now();
  }

  /** Takes a token when one is there (returns 0); otherwise returns the milliseconds until one is. */
  tryTake(): number {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil(((1 - this.tokens) / this.qps) * 1000));
  }
}
