// The CA's per-node fairness row of `npm run bench ca` (no default export, so not a scenario of its
// own): node B's ztunnel renewing one certificate at a time, alone and beside node A's ztunnel
// keeping 64 calls in flight, all in the same run; node A's rate with and without node B; and the
// transport's own floor: the same sequential caller against the bare canned HTTP/2 TLS server
// (same process, same event loop as the CA) beside the same flood; and the signing floor: the same
// caller against a bare server that also does node B's CSR check and signature on its event loop.

import * as crypto from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { cannedGrpcServer } from '../floors';
import { makeTestPki } from '../../test/support/tls';
import { latencySummary, LoadResult, median, Measurement } from '../scenario';
import { certificateServiceDefinition } from '../../src/ca/proto';
import { ask, caRequestFrames } from '../worker';
import { loadOrCreateTokenKey, signLocalToken } from '../../src/security/local-jwt';
import { makeCsr } from '../../test/support/ca/fixtures';
import { parseCsr } from '../../src/ca/signing/csr';
import { signatureAlgorithmFor } from '../../src/ca/signing/leaf-signer';
import { checkCsr, sampleLeafTbs } from '../ca-work';
import { SERVER_NAME, startHarness, readRoot } from '../../test/support/ca/harness';
import { CPU_TRACE, threadCpu, threadNames, traceCpu } from '../cpu-trace';

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
  const csrs = (identity: string) =>
    Promise.all(Array.from({ length: CSR_POOL }, () => makeCsr(identity).then((c) => c.pem)));
  const sleep = 'spiffe://cluster.local/ns/default/sa/sleep';
  const httpbin = 'spiffe://cluster.local/ns/default/sa/httpbin';
  const bCsrs = await csrs(httpbin);
  const caller = (port: number, rootPem: string, tok: string, f: Buffer[]) =>
    new Worker(workerSource, {
      eval: true,
      workerData: { rootPem, port, serverName: SERVER_NAME, token: tok, frames: f },
    });

  const pki = makeTestPki();
  const pem = 'x'.repeat(1100);
  const answer = certificateServiceDefinition()['CreateCertificate']!.responseSerialize({ cert_chain: [pem, pem] });
  const canned = await cannedGrpcServer(pki, answer);

  // The signing floor does node B's CA work per call (import the CSR's key, verify its signature,
  // sign a leaf with the root's key) on its event loop with nothing around it.
  const checks = bCsrs.map((pem) => parseCsr(pem));
  const material = h.ca.authority.current();
  const tbs = sampleLeafTbs(material, checks[0]!, httpbin);
  const signHash = signatureAlgorithmFor(material.signingKey).hash;
  let signed = 0;
  const signing = await cannedGrpcServer(pki, answer, () => {
    checkCsr(checks[signed++ % checks.length]!);
    crypto.sign(signHash, tbs, material.signingKey);
  });

  const bFrames = caRequestFrames(bCsrs, httpbin);
  const a = caller(h.port, readRoot(h), token('ztunnel-a', 'uid-zt-a'), caRequestFrames(await csrs(sleep), sleep));
  const b = caller(h.port, readRoot(h), token('ztunnel-b', 'uid-zt-b'), bFrames);
  const floor = caller(canned.port, pki.caPem, 'unused', bFrames);
  const signingFloor = caller(signing.port, pki.caPem, 'unused', bFrames);
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
  const signingFlooded: LoadResult[] = [];
  const aWithSigning: number[] = [];
  let failures = 0;
  try {
    await Promise.all([
      go(a, { concurrency: FLOOD, durationMs: WARMUP_MS }),
      go(b, { concurrency: 1, durationMs: WARMUP_MS }),
    ]);
    await go(floor, { concurrency: 1, durationMs: 500 });
    await go(signingFloor, { concurrency: 1, durationMs: 500 });
    const names = CPU_TRACE ? await threadNames({ 'node A': a, 'node B': b, floor, signing: signingFloor }) : undefined;
    // With CA_BENCH_CPU=1, each run's threads are traced, per call of its first caller (node A beside another).
    const traced = async <T extends LoadResult | [LoadResult, LoadResult]>(what: string, run: Promise<T>) => {
      const before = names ? threadCpu() : undefined;
      const r = await run;
      if (before) traceCpu(before, threadCpu(), Array.isArray(r) ? r[0] : r, what, names);
      return r;
    };
    for (let r = 0; r < RUNS; r++) {
      bAlone.push(await traced('node B alone', go(b, sequential)));
      aAlone.push(rate(await traced('node A alone', go(a, flood))));
      const [ar, br] = await traced('node A beside node B', Promise.all([go(a, flood), go(b, sequential)]));
      aWithB.push(rate(ar));
      bFlooded.push(br);
      const [ar2, fr] = await traced(
        'node A beside the floor caller',
        Promise.all([go(a, flood), go(floor, sequential)]),
      );
      floorFlooded.push(fr);
      aWithFloor.push(rate(ar2));
      const [ar3, sr] = await traced(
        'node A beside the signing floor caller',
        Promise.all([go(a, flood), go(signingFloor, sequential)]),
      );
      signingFlooded.push(sr);
      aWithSigning.push(rate(ar3));
      failures += ar.failed + br.failed + ar2.failed + fr.failed + ar3.failed + sr.failed;
    }
  } finally {
    for (const w of [a, b, floor, signingFloor]) {
      await ask(w, { type: 'close' });
      await w.terminate();
    }
    canned.close();
    signing.close();
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
  // B's tail and A's kept rate against the signing floor: a caller whose every call costs the shared
  // machine node B's CA work as well as the transport, served with nothing around it. The CA's B
  // over it is what the scheduler, the authentication and grpc-js add.
  const signingTail = latencySummary(signingFlooded);
  const keptBesideSigningRuns = aWithSigning.map((x, i) => x / aAlone[i]!);
  const keptBesideSigning = median(keptBesideSigningRuns);
  const signingRates = signingFlooded.map(rate);
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
      metric:
        "signing floor: the same sequential caller against a bare HTTP/2 TLS server doing node B's CSR check and signature on its event loop, beside node A's flood, p50",
      value: signingTail.p50,
      unit: 'ms',
      runs: signingTail.p50s,
    },
    {
      metric: "signing floor: its sequential caller's calls per second beside node A's flood (node B's: the share row)",
      value: median(signingRates),
      unit: 'calls/s',
      runs: signingRates,
    },
    {
      metric: "signing floor: the same sequential caller against the bare signing server beside node A's flood, p99",
      value: signingTail.p99,
      unit: 'ms',
      runs: signingTail.p99s,
    },
    {
      metric: 'fairness: node B p99 under the flood vs the signing floor beside the same flood',
      value: flooded.p99,
      unit: 'ms',
      reference: { metric: 'signing floor p99', value: signingTail.p99, ratio: flooded.p99 / signingTail.p99 },
    },
    {
      metric: "signing floor: node A's rate beside the sequential caller of the bare signing server, over A alone",
      value: keptBesideSigning,
      unit: 'ratio',
      runs: keptBesideSigningRuns,
    },
    {
      metric: "fairness: node A's rate kept beside node B vs beside the signing floor's caller",
      value: kept,
      unit: 'ratio',
      reference: {
        metric: "node A's rate beside the signing floor's caller, over A alone",
        value: keptBesideSigning,
        ratio: kept / keptBesideSigning,
      },
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
