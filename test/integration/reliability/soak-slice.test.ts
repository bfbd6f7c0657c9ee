// A short slice of `npm run soak`: 20 s of churn (manifests, ztunnel reconnects, CSRs, reviews)
// against an in-process server in local mode. Nothing may fail, both a fresh ztunnel and one
// connected throughout must hold exactly what a fresh build of the same files derives, and RSS
// after GC must stay within MAX_RSS_GROWTH of its warmed-up value.

import { MAX_RSS_GROWTH, runSoak } from '../../../bench/reliability/soak-runner';

/** Four transient ztunnels living 0.3-3 s each for 20 s open well over this many sessions. */
const TRANSIENT_MIN = 10;

test('20 s of churn loses nothing, fails nothing and keeps RSS level', async () => {
  const report = await runSoak({ durationMs: 20_000, seed: 42 });
  expect(report.failures).toEqual([]);
  expect(report.state.fresh).toEqual([]);
  expect(report.state.witness).toEqual([]);
  expect(report.state.resources).toBeGreaterThan(20);
  const c = report.counts;
  expect(c.fileWrites + c.fileRenames).toBeGreaterThan(50);
  expect(c.fileDeletes).toBeGreaterThan(0);
  expect(c.ztunnelSessions).toBeGreaterThan(TRANSIENT_MIN);
  expect(c.csrs).toBeGreaterThan(50);
  expect(c.reviews).toBeGreaterThan(100);
  expect(c.reviewsDenied).toBeGreaterThan(0);
  expect(c.reviewsDenied).toBeLessThan(c.reviews);
  expect(report.rss.growth).toBeLessThanOrEqual(MAX_RSS_GROWTH);
}, 90_000);
