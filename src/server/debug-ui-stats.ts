// /debug/ui/stats: what the status page needs and no other JSON page has - certificates issued and
// refused per minute, refusals by reason, and the push latency histogram. It only reads the values
// the CA and xDS server already record in the Prometheus registry; it defines no metric.

import type { Registry } from 'prom-client';
import type { DebugRegistry, DebugResponse, OnShutdown } from '../contract/host';

/** How often the counters are sampled: a per-minute series needs a few samples per minute. */
export const UI_STATS_SAMPLE_MS = 10_000;

/** Minutes of per-minute history kept: a quarter hour shows a trend and bounds the memory to 15 entries. */
export const UI_STATS_WINDOW_MINUTES = 15;

const MINUTE_MS = 60_000;

/** Certificates signed (istiod's name). */
export const ISSUED_METRIC = 'citadel_server_success_cert_issuance_count';

/**
 * Refused CSRs, each with the label that says why. Authentication failures already include the
 * node-authorization denials (the CA counts both there), so that breakdown is not added twice.
 */
export const DENIAL_METRICS: readonly { metric: string; label: string; source: string }[] = [
  { metric: 'citadel_server_authentication_failure_count', label: 'reason', source: 'authentication' },
  { metric: 'citadel_server_csr_throttled_count', label: 'reason', source: 'fairness' },
  { metric: 'citadel_server_csr_sign_err_count', label: 'error', source: 'signing' },
];

/** Time to build and send one push to one stream, summed over resource types. */
export const PUSH_LATENCY_METRIC = 'pilot_xds_push_time';

export interface MinuteCount {
  /** Start of the minute, ISO 8601. */
  minute: string;
  issued: number;
  denied: number;
}

export interface Denial {
  source: string;
  reason: string;
  count: number;
}

export interface HistogramView {
  metric: string;
  /** Non-cumulative count per bucket; `le` is the bucket's upper bound in seconds ("+Inf" last). */
  buckets: { le: string; count: number }[];
  count: number;
  sumSeconds: number;
}

export interface UiStats {
  at: string;
  /** False when the CA is not running here: the certificate figures are then absent, not zero. */
  ca: boolean;
  issuedTotal: number;
  deniedTotal: number;
  /** Oldest first, the current (partial) minute last; at most UI_STATS_WINDOW_MINUTES entries. */
  perMinute: MinuteCount[];
  denials: Denial[];
  pushLatency: HistogramView | null;
}

interface Sample {
  issued: number;
  denied: number;
  denials: Denial[];
}

/** One value as prom-client reports it; histograms name their _bucket, _sum and _count series. */
interface Value {
  value: number;
  labels: Partial<Record<string, string | number>>;
  metricName?: string;
}

async function values(registry: Registry, name: string): Promise<Value[] | undefined> {
  const metric = registry.getSingleMetric(name);
  return metric ? (await metric.get()).values : undefined;
}

async function sample(registry: Registry): Promise<Sample & { ca: boolean }> {
  const issuedValues = await values(registry, ISSUED_METRIC);
  const issued = issuedValues?.reduce((n, v) => n + v.value, 0) ?? 0;
  // One entry per (source, reason): the CA's series are also split by cluster, which this page sums.
  const byReason = new Map<string, Denial>();
  for (const d of DENIAL_METRICS) {
    for (const v of (await values(registry, d.metric)) ?? []) {
      if (v.value <= 0) continue;
      const reason = String(v.labels[d.label] ?? '');
      const key = `${d.source}\0${reason}`;
      const held = byReason.get(key);
      if (held) held.count += v.value;
      else byReason.set(key, { source: d.source, reason, count: v.value });
    }
  }
  const denials = [...byReason.values()];
  denials.sort((a, b) => b.count - a.count || a.source.localeCompare(b.source) || a.reason.localeCompare(b.reason));
  const denied = denials.reduce((n, d) => n + d.count, 0);
  return { issued, denied, denials, ca: issuedValues !== undefined };
}

async function histogram(registry: Registry, name: string): Promise<HistogramView | null> {
  const vs = await values(registry, name);
  if (!vs) return null;
  const cumulative = new Map<string, number>();
  let count = 0;
  let sum = 0;
  for (const v of vs) {
    if (v.metricName === `${name}_bucket`) {
      const le = String(v.labels['le']);
      cumulative.set(le, (cumulative.get(le) ?? 0) + v.value);
    } else if (v.metricName === `${name}_count`) count += v.value;
    else if (v.metricName === `${name}_sum`) sum += v.value;
  }
  // prom-client lists buckets in ascending order with +Inf last; the Map keeps that order.
  let below = 0;
  const buckets = [...cumulative].map(([le, c]) => {
    const out = { le, count: c - below };
    below = c;
    return out;
  });
  return { metric: name, buckets, count, sumSeconds: sum };
}

/** Counts per whole minute from cumulative counters sampled now and then. */
export class MinuteSeries {
  private readonly minutes: MinuteCount[] = [];
  private last: { issued: number; denied: number } = { issued: 0, denied: 0 };

  /** Adds what the counters grew by since the previous sample to the minute of `at`. */
  record(at: number, totals: { issued: number; denied: number }): void {
    const start = Math.floor(at / MINUTE_MS) * MINUTE_MS;
    const minute = new Date(start).toISOString();
    let current = this.minutes.at(-1);
    if (current?.minute !== minute) {
      current = { minute, issued: 0, denied: 0 };
      this.minutes.push(current);
    }
    // A counter never goes down; max() keeps a registry reset from showing a negative minute.
    current.issued += Math.max(0, totals.issued - this.last.issued);
    current.denied += Math.max(0, totals.denied - this.last.denied);
    this.last = { ...totals };
    while (this.minutes.length > 0 && (this.minutes[0]?.minute ?? '') <= this.cutoff(start)) this.minutes.shift();
  }

  private cutoff(start: number): string {
    return new Date(start - UI_STATS_WINDOW_MINUTES * MINUTE_MS).toISOString();
  }

  /** The last UI_STATS_WINDOW_MINUTES minutes up to `at`, with the minutes nothing happened in as zero. */
  view(at: number): MinuteCount[] {
    const end = Math.floor(at / MINUTE_MS) * MINUTE_MS;
    const byMinute = new Map(this.minutes.map((m) => [m.minute, m]));
    const out: MinuteCount[] = [];
    for (let i = UI_STATS_WINDOW_MINUTES - 1; i >= 0; i--) {
      const minute = new Date(end - i * MINUTE_MS).toISOString();
      const m = byMinute.get(minute);
      out.push({ minute, issued: m?.issued ?? 0, denied: m?.denied ?? 0 });
    }
    return out;
  }
}

export interface UiStatsOptions {
  now?: () => number;
  sampleMs?: number;
}

/** Samples the counters in the background and answers the page's stats. */
export class UiStatsCollector {
  private readonly series = new MinuteSeries();
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private samples: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly registry: Registry,
    options: UiStatsOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    // Counters start at zero when the server starts, and so does this series.
    this.timer = setInterval(
      () => void this.sampleInOrder().catch(() => undefined),
      options.sampleMs ?? UI_STATS_SAMPLE_MS,
    );
    this.timer.unref();
  }

  /**
   * Reads the counters and records them, one sample at a time: two reads finishing out of order
   * would record an older total after a newer one and count the difference twice.
   */
  private sampleInOrder(): Promise<{ at: number; s: Sample & { ca: boolean } }> {
    const run = this.samples.then(async () => {
      const at = this.now();
      const s = await sample(this.registry);
      this.series.record(at, s);
      return { at, s };
    });
    this.samples = run.catch(() => undefined);
    return run;
  }

  async stats(): Promise<UiStats> {
    const { at, s } = await this.sampleInOrder();
    return {
      at: new Date(at).toISOString(),
      ca: s.ca,
      issuedTotal: s.issued,
      deniedTotal: s.denied,
      perMinute: this.series.view(at),
      denials: s.denials,
      pushLatency: await histogram(this.registry, PUSH_LATENCY_METRIC),
    };
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

export function registerUiStats(
  ctx: { debug: DebugRegistry; metrics: Registry; onShutdown: OnShutdown },
  options: UiStatsOptions = {},
): UiStatsCollector {
  const collector = new UiStatsCollector(ctx.metrics, options);
  ctx.onShutdown(() => collector.stop());
  ctx.debug.add(
    'ui/stats',
    'for /debug/ui: certificates issued and refused per minute, refusals by reason, push latency histogram',
    async (): Promise<DebugResponse> => ({ body: await collector.stats() }),
  );
  return collector;
}
