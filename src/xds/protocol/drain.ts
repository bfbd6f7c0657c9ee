// Watches every response write until the client has taken its bytes. A write that makes no
// progress for the stall timeout (the client stopped reading: its HTTP/2 window stays shut), or
// that is still not done at the drain deadline (a client reading a trickle), is cut: the stream is
// reset, which frees the bytes it held and any full-sync slot. So a client that does not read
// holds at most its own one response, and only for a bounded time. A response that holds a
// full-sync slot gives the slot up much earlier, after SLOT_STALL_RELEASE_MS without progress, so
// clients that stop reading together cannot keep every slot (and another node's sync) for the
// whole stall timeout; the response itself is kept until the stall cut (see FullSyncGate).

import type { Clock } from './debounce';
import type { CallTransport } from '../grpc/transport';

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
/**
 * A response holding a full-sync slot that wrote nothing for this long gives the slot to the next
 * waiting stream (it keeps its bytes and is still cut at RESPONSE_STALL_TIMEOUT_MS). A reading
 * client on an in-cluster link takes bytes every few milliseconds, and TCP's own retransmission
 * timeout (200 ms minimum, 1 s initial on Linux) fits within it, so a reading client rarely loses
 * its slot, and losing it costs nothing but one response outside the slot count. Each eight
 * clients that stop reading at the same moment then delay a new ztunnel by about this long (plus a
 * check period), not by the stall timeout.
 */
export const SLOT_STALL_RELEASE_MS = 1_000;

export interface FlowControlSettings {
  stallTimeoutMs: number;
  drainDeadlineMs: number;
  slotStallMs: number;
}

export const DEFAULT_FLOW_CONTROL: FlowControlSettings = {
  stallTimeoutMs: RESPONSE_STALL_TIMEOUT_MS,
  drainDeadlineMs: RESPONSE_DRAIN_DEADLINE_MS,
  slotStallMs: SLOT_STALL_RELEASE_MS,
};

/**
 * Why a write was cut, for the log line: 'crowded' is a slot holder that stalled while
 * MAX_STALLED_FULL_SYNCS stalled responses were already kept (it could not give its slot up).
 */
export type CutReason = 'stalled' | 'deadline' | 'crowded';

/**
 * Gives up the write's full-sync slot because it stalled; false when it cannot be kept without
 * its slot (too many stalled responses are kept already) and must be cut now.
 */
export type SlotStallHandler = () => boolean;

interface PendingWrite {
  transport: CallTransport | undefined;
  startedAt: number;
  lastBytes: number | undefined;
  lastProgressAt: number;
  onCut: (reason: CutReason) => void;
  /** Set while the write holds a full-sync slot; called (once) when it stalls for slotStallMs. */
  onSlotStall: SlotStallHandler | undefined;
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
  track(
    transport: CallTransport | undefined,
    onCut: (reason: CutReason) => void,
    onSlotStall?: SlotStallHandler,
  ): () => void {
    const now = this.clock.now();
    const w: PendingWrite = {
      transport,
      startedAt: now,
      lastBytes: transport?.bytesWritten(),
      lastProgressAt: now,
      onCut,
      onSlotStall,
    };
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

  /** The shortest time without progress that matters: the slot release or the stall cut. */
  private shortestStall(): number {
    return Math.min(this.settings.stallTimeoutMs, this.settings.slotStallMs);
  }

  private period(): number {
    return Math.max(1, Math.min(this.shortestStall(), this.settings.drainDeadlineMs) / CHECKS_PER_STALL);
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
    const lagged = now - this.armedAt > this.period() + this.shortestStall() / 2;
    for (const w of this.pending) {
      const bytes = w.transport?.bytesWritten();
      if (lagged || bytes !== w.lastBytes) {
        w.lastBytes = bytes;
        w.lastProgressAt = now;
      }
      // Without a transport to ask, only the deadline applies.
      const idle = w.transport !== undefined && bytes !== undefined ? now - w.lastProgressAt : 0;
      const stalled = idle >= this.settings.stallTimeoutMs;
      const overdue = now - w.startedAt >= this.settings.drainDeadlineMs;
      let crowded = false;
      if (w.onSlotStall && !stalled && !overdue && idle >= this.settings.slotStallMs) {
        const slotStall = w.onSlotStall;
        w.onSlotStall = undefined;
        crowded = !slotStall();
      }
      if (!stalled && !overdue && !crowded) continue;
      this.pending.delete(w);
      w.onCut(stalled ? 'stalled' : overdue ? 'deadline' : 'crowded');
    }
    this.arm();
  }
}
