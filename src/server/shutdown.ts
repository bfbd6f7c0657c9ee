// Graceful shutdown under one deadline (--shutdownDuration). Every part starts draining at once:
// listeners stop accepting and send GOAWAY, components end their streams, in-flight requests get
// their answers. Whatever is still open at the deadline is closed by force. A forced close is the
// designed end of a drain that a client dragged out (a request sent half-way, a stream that does
// not read), not a failure: the caller still exits 0.

import type { Logger } from '../log/logger';

/** One part of the server that has to stop. */
export interface ShutdownPart {
  /** For logs: which parts were still open at the deadline. */
  name: string;
  /**
   * Starts stopping gracefully. A part that stops at once returns nothing; one that takes time
   * returns a promise that settles once nothing of it is left.
   */
  drain(): unknown;
  /** Closes what is left at once; called only when drain has not finished by the deadline. */
  force?(): void;
}

export interface DrainResult {
  /** Names of the parts that were still draining at the deadline and were forced. */
  forced: string[];
}

/**
 * Starts every part's drain in the order given (so listeners can stop accepting before
 * components end their streams) without waiting for one before starting the next, then waits
 * for all of them up to `deadlineMs`. A drain that throws is logged and counts as finished.
 */
export async function drainWithin(
  parts: readonly ShutdownPart[],
  deadlineMs: number,
  log: Logger,
): Promise<DrainResult> {
  const pending = new Set<ShutdownPart>(parts);
  const drained = parts.map(async (part) => {
    try {
      await part.drain();
    } catch (err) {
      log.warn({ err, part: part.name }, 'shutdown step failed');
    } finally {
      pending.delete(part);
    }
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadlineMs)));
  try {
    await Promise.race([Promise.all(drained), deadline]);
  } finally {
    clearTimeout(timer);
  }
  const forced = [...pending];
  if (forced.length === 0) return { forced: [] };
  log.warn({ deadlineMs, open: forced.map((p) => p.name) }, 'shutdown deadline reached; closing what is left');
  for (const part of forced) {
    try {
      part.force?.();
    } catch (err) {
      log.warn({ err, part: part.name }, 'forced close failed');
    }
  }
  return { forced: forced.map((p) => p.name) };
}
