// Watches every response write until the client has taken its bytes. A write that makes no
// progress for the stall timeout (the client stopped reading: its HTTP/2 window stays shut), or
// that is still not done at the drain deadline (a client reading a trickle), is cut: the stream is
// reset, which frees the bytes it held and any full-sync slot. So a client that does not read
// holds at most its own one response, and only for a bounded time.

import type { Clock } from './debounce';
import type { CallTransport } from './transport';

/**
 * A response whose connection wrote nothing for this long is cut. A client that reads at all
 * opens its window again within milliseconds; five seconds without a byte is a client that stopped
 * reading, and is also the longest a wedged client can hold a full-sync slot.
 */
export const RESPONSE_STALL_TIMEOUT_MS = 5_000;
/**
 * A response not drained after this long is cut even if it trickles: 30 s is a 17 MB full sync
 * (100k workloads) at under 0.6 MB/s, far below any in-cluster link.
 */
export const RESPONSE_DRAIN_DEADLINE_MS = 30_000;

export interface FlowControlSettings {
  stallTimeoutMs: number;
  drainDeadlineMs: number;
}

export const DEFAULT_FLOW_CONTROL: FlowControlSettings = {
  stallTimeoutMs: RESPONSE_STALL_TIMEOUT_MS,
  drainDeadlineMs: RESPONSE_DRAIN_DEADLINE_MS,
};

/** Why a write was cut, for the log line. */
export type CutReason = 'stalled' | 'deadline';

interface PendingWrite {
  transport: CallTransport | undefined;
  startedAt: number;
  lastBytes: number | undefined;
  lastProgressAt: number;
  onCut: (reason: CutReason) => void;
}

/** Checks are this many times more frequent than the stall timeout. */
const CHECKS_PER_STALL = 4;

export class DrainMonitor {
  private readonly pending = new Set<PendingWrite>();
  private timer: unknown;
  private armedAt = 0;
  private closed = false;

  constructor(
    readonly settings: FlowControlSettings,
    private readonly clock: Clock,
  ) {}

  /** Watches one write; call the returned function when its callback fires. */
  track(transport: CallTransport | undefined, onCut: (reason: CutReason) => void): () => void {
    const now = this.clock.now();
    const w: PendingWrite = { transport, startedAt: now, lastBytes: transport?.bytesWritten(), lastProgressAt: now, onCut };
    this.pending.add(w);
    this.arm();
    return () => this.pending.delete(w);
  }

  get size(): number {
    return this.pending.size;
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
  }

  private period(): number {
    return Math.max(1, Math.min(this.settings.stallTimeoutMs, this.settings.drainDeadlineMs) / CHECKS_PER_STALL);
  }

  private arm(): void {
    if (this.timer !== undefined || this.closed || this.pending.size === 0) return;
    this.armedAt = this.clock.now();
    this.timer = this.clock.setTimeout(() => this.check(), this.period());
  }

  /** One pass over the writes in flight (at most one per stream). */
  private check(): void {
    this.timer = undefined;
    const now = this.clock.now();
    // After a long event-loop stall nothing could be written meanwhile: restart every stall clock.
    const lagged = now - this.armedAt > this.period() + this.settings.stallTimeoutMs / 2;
    for (const w of this.pending) {
      const bytes = w.transport?.bytesWritten();
      if (lagged || bytes !== w.lastBytes) {
        w.lastBytes = bytes;
        w.lastProgressAt = now;
      }
      // Without a transport to ask, only the deadline applies.
      const stalled = w.transport !== undefined && bytes !== undefined && now - w.lastProgressAt >= this.settings.stallTimeoutMs;
      const overdue = now - w.startedAt >= this.settings.drainDeadlineMs;
      if (!stalled && !overdue) continue;
      this.pending.delete(w);
      w.onCut(stalled ? 'stalled' : 'deadline');
    }
    this.arm();
  }
}
