// The CA's per-node fairness row of `npm run bench ca` (no default export, so not a scenario of its
// own): node B's ztunnel renewing one certificate at a time, alone and beside node A's ztunnel
// keeping 64 calls in flight, all in the same run; node A's rate with and without node B; and the
// transport's own floor: the same sequential caller against the bare canned HTTP/2 TLS server
// (same process, same event loop as the CA) beside the same flood.

import { Worker } from 'node:worker_threads';
import { cannedGrpcServer } from '../floors';
import { makeTestPki } from '../../test/support/tls';
import { latencySummary, LoadResult, median, Measurement } from '../scenario';
import { certificateServiceDefinition } from '../../src/ca/proto';
import { ask, caRequestFrames } from '../worker';
import { loadOrCreateTokenKey, signLocalToken } from '../../src/security/local-jwt';
import { makeCsr } from '../../test/support/ca/fixtures';
import { SERVER_NAME, startHarness, readRoot } from '../../test/support/ca/harness';

const FLOOD = 64;
/**
 * Runs of each kind. Node B answers ~130 calls/s under the flood, so a 2 s run's p99 is its third
 * slowest answer; with 3 runs the median p99 ratio to the transport floor moved 1.26-1.49 between
 * full runs of the same code. Five runs steady the median for 16 s more.
 */
const RUNS = 5;
const RUN_MS = 2000;
const WARMUP_MS = 3000;
const CSR_POOL = 64;
const TARGET_P99_RATIO = 2;
const TARGET_FLOOR_RATIO = 1.3;
const TARGET_RATE_KEPT = 0.9;

type Run = { concurrency: number; durationMs: number };

export async function measureFairness(workerSource: string): Promise<Measurement[]> {
  const h = await startHarness();
  const pod = (name: string, ns: string, sa: string, node: string, uid: string) => ({
    metadata: { name, namespace: ns, uid },
    spec: { serviceAccountName: sa, nodeName: node },
    status: { phase: 'Running' },
  });
  h.store.upsert('Pod', [
    pod('ztunnel-a', 'istio-system', 'ztunnel', 'node-a', 'uid-zt-a'),
    pod('ztunnel-b', 'istio-system', 'ztunnel', 'node-b', 'uid-zt-b'),
    pod('sleep-1', 'default', 'sleep', 'node-a', 'uid-sleep'),
    pod('httpbin-1', 'default', 'httpbin', 'node-b', 'uid-httpbin'),
  ]);
  const key = loadOrCreateTokenKey(h.stateDir);
  const token = (p: string, uid: string) =>
    signLocalToken(
      key,
      { namespace: 'istio-system', serviceAccount: 'ztunnel', podName: p, podUid: uid },
      ['istio-ca'],
      3600,
    );
  const frames = async (identity: string) =>
    caRequestFrames(
      await Promise.all(Array.from({ length: CSR_POOL }, () => makeCsr(identity).then((c) => c.pem))),
      identity,
    );
  const sleep = 'spiffe://cluster.local/ns/default/sa/sleep';
  const httpbin = 'spiffe://cluster.local/ns/default/sa/httpbin';
  const caller = (port: number, rootPem: string, tok: string, f: Buffer[]) =>
    new Worker(workerSource, {
      eval: true,
      workerData: { rootPem, port, serverName: SERVER_NAME, token: tok, frames: f },
    });

  const pki = makeTestPki();
  const pem = 'x'.repeat(1100);
  const canned = await cannedGrpcServer(
    pki,
    certificateServiceDefinition()['CreateCertificate']!.responseSerialize({ cert_chain: [pem, pem] }),
  );

  const a = caller(h.port, readRoot(h), token('ztunnel-a', 'uid-zt-a'), await frames(sleep));
  const b = caller(h.port, readRoot(h), token('ztunnel-b', 'uid-zt-b'), await frames(httpbin));
  const floor = caller(canned.port, pki.caPem, 'unused', await frames(httpbin));
  const go = (w: Worker, r: Run) => ask<LoadResult>(w, { type: 'run', ...r });
  const flood: Run = { concurrency: FLOOD, durationMs: RUN_MS };
  const sequential: Run = { concurrency: 1, durationMs: RUN_MS };
  const rate = (r: LoadResult) => (r.ok * 1000) / r.elapsedMs;

  const bAlone: LoadResult[] = [];
  const bFlooded: LoadResult[] = [];
  const floorFlooded: LoadResult[] = [];
  const aAlone: number[] = [];
  const aWithB: number[] = [];
  const aWithFloor: number[] = [];
  let failures = 0;
  try {
    await Promise.all([
      go(a, { concurrency: FLOOD, durationMs: WARMUP_MS }),
      go(b, { concurrency: 1, durationMs: WARMUP_MS }),
    ]);
    await go(floor, { concurrency: 1, durationMs: 500 });
    for (let r = 0; r < RUNS; r++) {
      bAlone.push(await go(b, sequential));
      aAlone.push(rate(await go(a, flood)));
      const [ar, br] = await Promise.all([go(a, flood), go(b, sequential)]);
      aWithB.push(rate(ar));
      bFlooded.push(br);
      const [ar2, fr] = await Promise.all([go(a, flood), go(floor, sequential)]);
      floorFlooded.push(fr);
      aWithFloor.push(rate(ar2));
      failures += ar.failed + br.failed + ar2.failed + fr.failed;
    }
  } finally {
    for (const w of [a, b, floor]) {
      await ask(w, { type: 'close' });
      await w.terminate();
    }
    canned.close();
    await h.close();
  }
  const alone = latencySummary(bAlone);
  const flooded = latencySummary(bFlooded);
  const transport = latencySummary(floorFlooded);
  const ratio = flooded.p99 / alone.p99;
  // Each run's rate beside node B over the rate alone just before it: the host's speed drifts
  // within minutes, so only neighbouring runs compare.
  const keptRuns = aWithB.map((x, i) => x / aAlone[i]!);
  const kept = median(keptRuns);
  // What node A keeps beside a sequential caller that costs the shared event loop only transport
  // (the canned server does no CA work): the share a busy sequential caller takes before any of ours.
  const keptBesideFloorRuns = aWithFloor.map((x, i) => x / aAlone[i]!);
  const keptBesideFloor = median(keptBesideFloorRuns);
  // If the CA is saturated and shares its capacity fairly, every certificate node B gets is one
  // node A does not: A keeps at most 1 - (B's rate / A's rate alone). A kept rate near this bound
  // is the scheduler giving B its share, not losing capacity.
  const bRates = bFlooded.map(rate);
  const bound = median(bRates.map((x, i) => 1 - x / aAlone[i]!));
  const label = `node B sequential, node A ${FLOOD} in flight, RSA-2048 root`;
  return [
    { metric: 'node B p99 alone (1 in flight)', value: alone.p99, unit: 'ms', runs: alone.p99s },
    {
      metric: `fairness: node B p99 under node A's flood (${label})`,
      value: flooded.p99,
      unit: 'ms',
      runs: flooded.p99s,
      reference: { metric: 'node B p99 alone, same run', value: alone.p99, ratio },
      target: `<= ${TARGET_P99_RATIO}x alone`,
      met: ratio <= TARGET_P99_RATIO,
    },
    {
      metric: `fairness: node B p50 under node A's flood (${label})`,
      value: flooded.p50,
      unit: 'ms',
      runs: flooded.p50s,
      reference: { metric: 'node B p50 alone', value: alone.p50, ratio: flooded.p50 / alone.p50 },
    },
    {
      metric:
        "transport floor: the same sequential caller against the bare canned HTTP/2 TLS server beside node A's flood, p50",
      value: transport.p50,
      unit: 'ms',
      runs: transport.p50s,
    },
    {
      metric: `transport floor: the same sequential caller against the bare canned HTTP/2 TLS server beside node A's flood, p99`,
      value: transport.p99,
      unit: 'ms',
      runs: transport.p99s,
    },
    {
      metric: 'fairness: node B p99 under the flood vs the transport floor beside the same flood',
      value: flooded.p99,
      unit: 'ms',
      reference: { metric: 'transport floor p99', value: transport.p99, ratio: flooded.p99 / transport.p99 },
      target: `<= ${TARGET_FLOOR_RATIO}x floor`,
      met: flooded.p99 / transport.p99 <= TARGET_FLOOR_RATIO,
    },
    {
      metric: `fairness: node A CSRs per second with node B renewing (${FLOOD} in flight)`,
      value: median(aWithB),
      unit: 'CSR/s',
      runs: aWithB,
      reference: {
        metric: 'node A alone, just before each run (ratio: median of per-run ratios)',
        value: median(aAlone),
        ratio: kept,
      },
      target: `>= ${TARGET_RATE_KEPT * 100}% of alone`,
      met: kept >= TARGET_RATE_KEPT,
    },
    {
      metric: "fairness: node B's certificates per second under node A's flood (its share of the CA)",
      value: median(bRates),
      unit: 'CSR/s',
      runs: bRates,
      reference: {
        metric: "work-conserving bound on node A's kept rate, 1 - B's rate / A's rate alone (ratio: kept / bound)",
        value: bound,
        ratio: kept / bound,
      },
    },
    {
      metric: "transport floor: node A's rate beside the sequential caller of the bare canned server, over A alone",
      value: keptBesideFloor,
      unit: 'ratio',
      runs: keptBesideFloorRuns,
    },
    {
      metric: 'fairness: failed requests (all fairness runs)',
      value: failures,
      unit: 'requests',
      target: '0',
      met: failures === 0,
    },
  ];
}
