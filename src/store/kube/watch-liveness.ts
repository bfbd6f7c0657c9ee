// Keeping watches alive and spread out. A watch asks the API server to end it after timeoutSeconds,
// a random value in [min, 2*min) as client-go's reflector picks it, so a dozen watches opened
// together do not all reopen (and relist on a 410) in the same instant. A watch that stays open
// but sends nothing (a proxy that lost the other side, an API server that stopped serving it)
// would never be noticed: the watchdog aborts a watch that has sent no event and no bookmark for
// its timeout plus a margin, and the caller opens it again.

/** client-go's minWatchTimeout: every watch asks for a timeout in [5 min, 10 min). */
export const MIN_WATCH_TIMEOUT_SECONDS = 300;

/**
 * Past the watch's own timeout, how long a silent watch is given before it is aborted. The API
 * server ends a watch at timeoutSeconds; the margin lets that clean end (or a late bookmark) win
 * over a slow or loaded API server, so only a watch that is really stuck is cut.
 */
export const WATCH_STALL_MARGIN_MS = 30_000;

/** timeoutSeconds for one watch: uniform in [min, 2*min), whole seconds as the API takes them. */
export function randomWatchTimeoutSeconds(
  minSeconds: number = MIN_WATCH_TIMEOUT_SECONDS,
  random: () => number = Math.random,
): number {
  return Math.min(2 * minSeconds - 1, Math.floor(minSeconds * (1 + random())));
}

/** Fires `onStall` when `touch()` has not been called for the window since `arm()`. */
export class StallWatchdog {
  private timer: NodeJS.Timeout | undefined;
  private windowMs = 0;

  constructor(private readonly onStall: (silentForMs: number) => void) {}

  /** Starts watching one watch: silent for `windowMs` means stalled. */
  arm(windowMs: number): void {
    this.windowMs = windowMs;
    this.touch();
  }

  /** Something arrived (an event or a bookmark): the window starts again. */
  touch(): void {
    if (this.windowMs <= 0) return;
    clearTimeout(this.timer);
    const windowMs = this.windowMs;
    this.timer = setTimeout(() => {
      this.windowMs = 0;
      this.onStall(windowMs);
    }, windowMs);
    this.timer.unref();
  }

  /** The watch ended (or was never opened): nothing to watch. */
  clear(): void {
    this.windowMs = 0;
    clearTimeout(this.timer);
  }
}
