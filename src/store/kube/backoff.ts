// Exponential backoff with jitter, shared by the watches and the writes, so many replicas that
// lost the API server at the same moment do not come back at the same moment.

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
}

/** Each delay is the exponential step times a random factor in [1 - JITTER, 1 + JITTER]. */
export const BACKOFF_JITTER = 0.2;

/** Delay before attempt `attempt` (1 = first retry). */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const step = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(step * (1 - BACKOFF_JITTER + 2 * BACKOFF_JITTER * random()));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
