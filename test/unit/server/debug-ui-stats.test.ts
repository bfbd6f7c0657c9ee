// /debug/ui/stats reads what the CA and xDS server record: certificates issued and refused per
// minute, refusals by reason without counting a node-authorization denial twice, and the push
// latency histogram per bucket.

import { Registry } from 'prom-client';
import { registerCaMetrics } from '../../../src/ca/metrics';
import { XdsMetrics } from '../../../src/xds/protocol/metrics';
import {
  MinuteSeries,
  UI_STATS_SAMPLE_MS,
  UI_STATS_WINDOW_MINUTES,
  UiStatsCollector,
} from '../../../src/server/debug-ui-stats';

const T0 = Date.parse('2026-12-03T10:00:00.000Z');
const MIN = 60_000;

describe('MinuteSeries', () => {
  it('puts what a counter grew by into the minute of the sample, and empty minutes as zero', () => {
    const s = new MinuteSeries();
    s.record(T0 + 5_000, { issued: 3, denied: 0 });
    s.record(T0 + 50_000, { issued: 4, denied: 1 });
    s.record(T0 + 2 * MIN + 1, { issued: 10, denied: 1 });
    const view = s.view(T0 + 2 * MIN + 1);
    expect(view.slice(-3)).toEqual([
      { minute: '2026-12-03T10:00:00.000Z', issued: 4, denied: 1 },
      { minute: '2026-12-03T10:01:00.000Z', issued: 0, denied: 0 },
      { minute: '2026-12-03T10:02:00.000Z', issued: 6, denied: 0 },
    ]);
  });

  it(`keeps ${UI_STATS_WINDOW_MINUTES} minutes, the current one last, and forgets older ones`, () => {
    const s = new MinuteSeries();
    for (let m = 0; m < 3 * UI_STATS_WINDOW_MINUTES; m++) s.record(T0 + m * MIN, { issued: m + 1, denied: 0 });
    const now = T0 + (3 * UI_STATS_WINDOW_MINUTES - 1) * MIN;
    const view = s.view(now);
    expect(view).toHaveLength(UI_STATS_WINDOW_MINUTES);
    expect(view.at(-1)?.minute).toBe(new Date(now).toISOString());
    expect(view[0]?.minute).toBe(new Date(now - (UI_STATS_WINDOW_MINUTES - 1) * MIN).toISOString());
    expect(view.every((m) => m.issued === 1)).toBe(true);
    // Asked about a later time, the minutes recorded long ago are gone, not shown again.
    expect(s.view(now + 2 * UI_STATS_WINDOW_MINUTES * MIN).every((m) => m.issued === 0)).toBe(true);
  });

  it('never shows a negative minute when a counter starts again from zero', () => {
    const s = new MinuteSeries();
    s.record(T0, { issued: 5, denied: 2 });
    s.record(T0 + MIN, { issued: 1, denied: 0 });
    expect(s.view(T0 + MIN).at(-1)).toEqual({ minute: '2026-12-03T10:01:00.000Z', issued: 0, denied: 0 });
  });
});

describe('UiStatsCollector', () => {
  let collector: UiStatsCollector | undefined;
  afterEach(() => collector?.stop());

  it('reports refusals by reason once each, and the push latency per bucket summed over types', async () => {
    const registry = new Registry();
    const ca = registerCaMetrics(registry);
    const xds = new XdsMetrics(registry);
    let now = T0;
    collector = new UiStatsCollector(registry, { now: () => now });
    ca.successCount.inc(2);
    // A node-authorization denial is counted under both names; it is one refusal.
    ca.authFailures.inc({ reason: 'no_pod_on_node' });
    ca.nodeAuthDenials.inc({ reason: 'no_pod_on_node' });
    ca.authFailures.inc({ reason: 'no_pod_on_node' });
    ca.fairnessDenials.inc({ reason: 'queue_full' });
    ca.signErrors.inc({ error: 'CSR_ERROR' });
    xds.pushTime.observe({ type: 'address' }, 0.0005);
    xds.pushTime.observe({ type: 'authorization' }, 0.0007);
    xds.pushTime.observe({ type: 'address' }, 0.2);
    now = T0 + 30_000;
    const s = await collector.stats();
    expect(s.ca).toBe(true);
    expect(s.issuedTotal).toBe(2);
    expect(s.deniedTotal).toBe(4);
    expect(s.denials).toEqual([
      { source: 'authentication', reason: 'no_pod_on_node', count: 2 },
      { source: 'fairness', reason: 'queue_full', count: 1 },
      { source: 'signing', reason: 'CSR_ERROR', count: 1 },
    ]);
    expect(s.perMinute.at(-1)).toEqual({ minute: '2026-12-03T10:00:00.000Z', issued: 2, denied: 4 });
    const h = s.pushLatency;
    expect(h?.count).toBe(3);
    expect(h?.buckets.find((b) => b.le === '0.001')?.count).toBe(2);
    expect(h?.buckets.find((b) => b.le === '0.25')?.count).toBe(1);
    expect(h?.buckets.at(-1)).toEqual({ le: '+Inf', count: 0 });
    expect(h?.buckets.reduce((n, b) => n + b.count, 0)).toBe(3);
  });

  it("sums a reason's series over clusters into one refusal entry, and issuance over clusters", async () => {
    const registry = new Registry();
    const ca = registerCaMetrics(registry);
    collector = new UiStatsCollector(registry, { now: () => T0 });
    ca.successCount.inc({ cluster: 'east' });
    ca.successCount.inc({ cluster: 'west' }, 2);
    ca.authFailures.inc({ reason: 'no_pod_on_node', cluster: 'east' });
    ca.authFailures.inc({ reason: 'no_pod_on_node', cluster: 'west' }, 3);
    ca.authFailures.inc({ reason: 'unknown_cluster', cluster: '' });
    const s = await collector.stats();
    expect(s.issuedTotal).toBe(3);
    expect(s.denials).toEqual([
      { source: 'authentication', reason: 'no_pod_on_node', count: 4 },
      { source: 'authentication', reason: 'unknown_cluster', count: 1 },
    ]);
  });

  it('says the CA is absent instead of reporting zero certificates, and no histogram without xDS', async () => {
    collector = new UiStatsCollector(new Registry());
    const s = await collector.stats();
    expect(s.ca).toBe(false);
    expect(s.pushLatency).toBeNull();
    expect(s.denials).toEqual([]);
  });

  it('samples in the background, so a certificate counts in the minute it was issued, not the minute the page asked', async () => {
    const registry = new Registry();
    const ca = registerCaMetrics(registry);
    let now = T0 + 10_000;
    collector = new UiStatsCollector(registry, { now: () => now, sampleMs: 10 });
    ca.successCount.inc();
    await new Promise((r) => setTimeout(r, 60));
    now = T0 + MIN + 10_000;
    const s = await collector.stats();
    expect(s.perMinute.slice(-2).map((m) => m.issued)).toEqual([1, 0]);
  });

  it('samples often enough by default that each minute gets several samples', () => {
    expect(UI_STATS_SAMPLE_MS).toBeLessThanOrEqual(MIN / 4);
  });
});
