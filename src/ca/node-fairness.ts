// The CA's per-node fair queue wired to metrics and logs: denials are counted by reason at once,
// and summarised once per interval (one log line, and a gauge for the most refused nodes only),
// never one line or one metric series per call or per node.

import { scopedLogger } from '../log/logger';
import { FairnessDenial, FairnessDenialReason, NodeFairQueue, SLOTS_PER_WORKER } from './signing/fair-queue';
import type { CaMetrics } from './metrics';

const log = scopedLogger('ca');

/** Denials are summarised in one log line at most this often. */
export const DENIAL_LOG_INTERVAL_MS = 10_000;
/** Nodes named in the interval log line and the top-nodes gauge: the culprits, not a census. */
export const TOP_DENIED_NODES = 5;
/** Distinct nodes counted per interval; a flood of distinct caller identities cannot grow it further. */
export const DENIAL_TRACKED_NODES = 1000;

export interface NodeFairnessOptions {
  metrics: CaMetrics;
  /** Signing workers; slots are SLOTS_PER_WORKER each. */
  workers: number;
  /** Overrides the slot count (tests). */
  slots?: number;
  /** CA_NODE_RATE_LIMIT; 0 is off. */
  ratePerSecond: number;
  queueLimit?: number;
  logIntervalMs?: number;
}

export interface NodeFairness {
  queue: NodeFairQueue;
  stop(): void;
}

export function createNodeFairness(o: NodeFairnessOptions): NodeFairness {
  let counts = new Map<string, Record<FairnessDenialReason, number>>();
  let totals = { queue_full: 0, rate_limited: 0 };
  let timer: NodeJS.Timeout | undefined;
  const intervalMs = o.logIntervalMs ?? DENIAL_LOG_INTERVAL_MS;

  const report = () => {
    timer = undefined;
    const top = [...counts].sort((a, b) => total(b[1]) - total(a[1])).slice(0, TOP_DENIED_NODES);
    o.metrics.topDeniedNodes.reset();
    for (const [node, c] of top) {
      for (const reason of ['queue_full', 'rate_limited'] as const)
        if (c[reason] > 0) o.metrics.topDeniedNodes.set({ node, reason }, c[reason]);
    }
    log.warn(
      {
        intervalMs,
        denied: totals,
        nodes: counts.size >= DENIAL_TRACKED_NODES ? `${DENIAL_TRACKED_NODES}+` : counts.size,
        top: top.map(([node, c]) => ({ node, ...c })),
      },
      'certificate requests refused by per-node fairness (RESOURCE_EXHAUSTED)',
    );
    counts = new Map();
    totals = { queue_full: 0, rate_limited: 0 };
    // The next denial starts the next interval; a quiet CA keeps no timer.
  };

  const onDenied = (d: FairnessDenial) => {
    o.metrics.fairnessDenials.inc({ reason: d.reason });
    totals[d.reason]++;
    let c = counts.get(d.node);
    if (!c && counts.size < DENIAL_TRACKED_NODES) counts.set(d.node, (c = { queue_full: 0, rate_limited: 0 }));
    if (c) c[d.reason]++;
    timer ??= setTimeout(report, intervalMs).unref();
  };

  const queue = new NodeFairQueue({
    slots: o.slots ?? Math.max(1, o.workers) * SLOTS_PER_WORKER,
    ratePerSecond: o.ratePerSecond,
    ...(o.queueLimit !== undefined ? { queueLimit: o.queueLimit } : {}),
    onDenied,
    onWait: (ms) => o.metrics.queueWait.observe(ms / 1000),
  });
  return {
    queue,
    stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

function total(c: Record<FairnessDenialReason, number>): number {
  return c.queue_full + c.rate_limited;
}
