// The mesh CA under ztunnel-like load: CSRs per second and p50/p99 latency with 8, 64 and 256
// requests in flight over real TLS gRPC (authentication, node authorization, CSR parse and verify
// included). The load generator runs in a worker thread with its own event loop, as ztunnel is its
// own process; RSA-2048 and ECDSA P-256 roots are measured side by side. Two floors are measured in
// the same run, interleaved with the CA's runs so the host's speed drift cancels:
// - per CSR, one CSR check (import the P-256 key, verify its signature) plus one sign with the
//   root's key, single-thread, taken just before each run: the combined single-core rate is
//   1 / (t_check + t_sign), and each run's rate is divided by its own;
// - the same callers against a bare HTTP/2 TLS server that answers canned bytes (floors.ts), run
//   just before each 8- and 64-in-flight CA run: the p99 under the tail target, and t_transport,
//   this process's CPU per canned call (server and caller). The CA's process pays that too, so
//   1 / (t_check + t_sign + t_transport) is the single-core floor with the transport counted.

import * as crypto from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { Writable } from 'node:stream';
import pino from 'pino';
import { cannedGrpcServer } from '../floors';
import { makeTestPki } from '../../test/support/tls';
import { latencySummary, LoadResult, median, Measurement, Scenario } from '../scenario';
import { certificateServiceDefinition } from '../../src/ca/proto';
import { ask, CA_CLIENT_SETUP, caRequestFrames } from '../worker';
import { logs } from '../../src/log/logger';
import { signatureAlgorithmFor } from '../../src/ca/signing/leaf-signer';
import { parseCsr } from '../../src/ca/signing/csr';
import { checkCsr, sampleLeafTbs } from '../ca-work';
import { loadOrCreateTokenKey, signLocalToken } from '../../src/security/local-jwt';
import { makeCsr } from '../../test/support/ca/fixtures';
import { SERVER_NAME, ZtunnelLikeClient, startHarness, readRoot } from '../../test/support/ca/harness';
import { TestApiServer, serviceAccountIdentity } from '../../test/support/apiserver';
import { namespace } from '../../test/support/apiserver/fixtures';
import { loadKubeConfig } from '../../src/store/kube/config';
import { syncedKubeStore } from '../../test/support/apiserver/synced-store';
import type { KubeObject } from '../../src/store/types';
import { measureFairness } from './ca-fairness';
import { CPU_TRACE, threadCpu, threadNames, traceCpu } from '../cpu-trace';

const CONCURRENCY = (process.env['CA_BENCH_CONCURRENCY'] ?? '8,64,256').split(',').map(Number);
const ROOTS = (process.env['CA_BENCH_ROOTS'] ?? 'RSA,ECDSA').split(',') as ('RSA' | 'ECDSA')[];
/** CA_BENCH_CORE_ONLY=1 leaves out the fairness and binding-window rows (for profiling the rate rows). */
const CORE_ONLY = process.env['CA_BENCH_CORE_ONLY'] === '1';
/** CA_BENCH_FAIRNESS_ONLY=1 runs only the fairness rows (for working on issue 21's scheduler). */
const FAIRNESS_ONLY = process.env['CA_BENCH_FAIRNESS_ONLY'] === '1';
const RUNS = Number(process.env['CA_BENCH_RUNS'] ?? 3);
const RUN_MS = Number(process.env['CA_BENCH_RUN_MS'] ?? 2000);
// Long enough for V8 to finish optimizing the hot path: shorter warm-ups left concurrent
// compilation running into the first measured run.
const WARMUP_MS = 3000;
/**
 * The check and sign rates are measured again right before each load run (this long each), and
 * each run's rate is divided by its own: the host's speed drifts by tens of percent within
 * minutes, and one reference taken at the start put ratios from 0.58 to 1.10 on the same code.
 */
const FLOOR_PER_RUN_MS = 400;
const CSR_POOL = 64;
/** The tail is compared with the canned server at this many in flight. */
const TAIL_CONCURRENCY = 64;
/** Issue 20: CSRs/s ÷ the combined single-core rate, by calls in flight. */
const TARGET_FLOOR_RATIO: Record<number, number> = { 8: 0.7, 64: 0.8 };
/** Issue 20: p99 at 64 in flight ÷ the canned HTTP/2 TLS server's p99 at 64 in flight. */
const TARGET_TAIL_RATIO = 1.3;
const BINDINGS = 20;
// Runs inside the worker: one connection (ztunnel uses one), `concurrency` calls in flight.
const WORKER_SOURCE = `
${CA_CLIENT_SETUP}
function run(concurrency, durationMs) {
  return new Promise((resolve) => {
    const latencies = [];
    let ok = 0, failed = 0, firstError, i = 0, inflight = 0;
    const start = performance.now();
    const end = start + durationMs;
    const fire = () => {
      inflight++;
      const t0 = performance.now();
      createCertificate(i++, (err) => {
        const t1 = performance.now();
        inflight--;
        if (err) { failed++; firstError = firstError || err.message; } else { ok++; latencies.push(t1 - t0); }
        if (t1 < end) fire();
        else if (inflight === 0) resolve({ ok, failed, firstError, elapsedMs: t1 - start, latencies });
      });
    };
    for (let k = 0; k < concurrency; k++) fire();
  });
}
parentPort.on('message', async (m) => {
  if (m.type === 'run') parentPort.postMessage(await run(m.concurrency, m.durationMs));
  else if (m.type === 'tid') parentPort.postMessage(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  else { closeClient(); parentPort.postMessage('closed'); }
});
`;

/** Single-thread synchronous crypto.sign of a leaf TBSCertificate with the CA key: ops/s. */
function rawSignRate(key: crypto.KeyObject, tbs: Buffer, ms: number): number {
  const { hash } = signatureAlgorithmFor(key);
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < ms) {
    crypto.sign(hash, tbs, key);
    n++;
  }
  return (n * 1000) / (performance.now() - start);
}

type CheckedCsr = ReturnType<typeof parseCsr>;

/**
 * Single-thread rate of the check every CSR costs whatever the root: importing its P-256 public
 * key (from the JWK the parser builds) and verifying its signature, as the signing worker does.
 */
function rawCsrCheckRate(checks: readonly CheckedCsr[], ms: number): number {
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < ms) {
    checkCsr(checks[n % checks.length]!);
    n++;
  }
  return (n * 1000) / (performance.now() - start);
}

/** The floor per CSR, single-thread: one check then one sign, 1 / (t_check + t_sign). */
interface CoreFloor {
  check: number;
  sign: number;
  combined: number;
}

function coreFloor(checks: readonly CheckedCsr[], key: crypto.KeyObject, tbs: Buffer): CoreFloor {
  const check = rawCsrCheckRate(checks, FLOOR_PER_RUN_MS);
  const sign = rawSignRate(key, tbs, FLOOR_PER_RUN_MS);
  return { check, sign, combined: 1 / (1 / check + 1 / sign) };
}

/**
 * The same load generator against a server that answers every call with canned bytes the size of
 * the CA's answer and does nothing else: what Node's TLS and HTTP/2 alone cost on this machine. A
 * CA served by this runtime and measured by these callers cannot answer faster than this server
 * does. Started once; each root's 64-in-flight runs are interleaved with runs against it.
 */
interface TransportFloor {
  /**
   * One run at `concurrency` in flight; `cpuUsPerCall` is this process's CPU (the canned server's
   * event loop and the load generator's thread, as in the CA's runs) per answered call.
   */
  run(concurrency: number): Promise<{ result: LoadResult; cpuUsPerCall: number }>;
  /** Every run at TAIL_CONCURRENCY so far, for the floor's own rows. */
  runs: LoadResult[];
  close(): Promise<void>;
}

async function startTransportFloor(): Promise<TransportFloor> {
  const pki = makeTestPki();
  // A leaf and an RSA root are about 1.1 KB of PEM each.
  const pem = 'x'.repeat(1100);
  const answer = certificateServiceDefinition()['CreateCertificate']!.responseSerialize({ cert_chain: [pem, pem] });
  const server = await cannedGrpcServer(pki, answer);
  const identity = 'spiffe://cluster.local/ns/default/sa/sleep';
  const csrs = await Promise.all(Array.from({ length: CSR_POOL }, () => makeCsr(identity).then((r) => r.pem)));
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      rootPem: pki.caPem,
      port: server.port,
      serverName: SERVER_NAME,
      token: 'unused',
      frames: caRequestFrames(csrs, identity),
    },
  });
  await ask<LoadResult>(worker, { type: 'run', concurrency: TAIL_CONCURRENCY, durationMs: WARMUP_MS });
  const runs: LoadResult[] = [];
  return {
    runs,
    async run(concurrency) {
      const cpu0 = CPU_TRACE ? threadCpu() : undefined;
      const usage = process.cpuUsage();
      const r = await ask<LoadResult>(worker, { type: 'run', concurrency, durationMs: RUN_MS });
      const { user, system } = process.cpuUsage(usage);
      if (cpu0)
        traceCpu(
          cpu0,
          threadCpu(),
          r,
          `canned HTTP/2 TLS server ${concurrency}`,
          await threadNames({ client: worker }),
        );
      if (concurrency === TAIL_CONCURRENCY) runs.push(r);
      return { result: r, cpuUsPerCall: (user + system) / Math.max(1, r.ok) };
    },
    async close() {
      await ask(worker, { type: 'close' });
      await worker.terminate();
      server.close();
    },
  };
}

function transportFloorRows(floor: TransportFloor): Measurement[] {
  if (floor.runs.length === 0) return [];
  const rates = floor.runs.map((r) => (r.ok * 1000) / r.elapsedMs);
  const { p50s, p99s, p50, p99 } = latencySummary(floor.runs);
  const label = `${TAIL_CONCURRENCY} in flight, a bare node:http2 TLS server answering canned bytes, no CA work, all runs`;
  return [
    { metric: `calls per second (${label})`, value: median(rates), unit: 'calls/s', runs: rates },
    { metric: `p50 latency (${label})`, value: p50, unit: 'ms', runs: p50s },
    { metric: `p99 latency (${label}): the floor under the p99 target`, value: p99, unit: 'ms', runs: p99s },
  ];
}

async function measureRoot(keyType: 'RSA' | 'ECDSA', transport: TransportFloor): Promise<Measurement[]> {
  const label = keyType === 'RSA' ? 'RSA-2048 root' : 'ECDSA P-256 root';
  const h = await startHarness({ env: { CITADEL_SELF_SIGNED_CA_KEY_TYPE: keyType } });
  h.store.upsert('Pod', [
    {
      metadata: { name: 'ztunnel-a', namespace: 'istio-system', uid: 'uid-zt' },
      spec: { serviceAccountName: 'ztunnel', nodeName: 'node-a' },
      status: { phase: 'Running' },
    },
    {
      metadata: { name: 'sleep-1', namespace: 'default', uid: 'uid-sleep' },
      spec: { serviceAccountName: 'sleep', nodeName: 'node-a' },
      status: { phase: 'Running' },
    },
  ]);
  const token = signLocalToken(
    loadOrCreateTokenKey(h.stateDir),
    { namespace: 'istio-system', serviceAccount: 'ztunnel', podName: 'ztunnel-a', podUid: 'uid-zt' },
    ['istio-ca'],
    3600,
  );
  const identity = 'spiffe://cluster.local/ns/default/sa/sleep';
  const csrs = await Promise.all(Array.from({ length: CSR_POOL }, () => makeCsr(identity).then((c) => c.pem)));
  const checks = csrs.map((pem) => parseCsr(pem));

  const material = h.ca.authority.current();
  const tbs = sampleLeafTbs(material, checks[0]!, identity);

  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      rootPem: readRoot(h),
      port: h.port,
      serverName: SERVER_NAME,
      token,
      frames: caRequestFrames(csrs, identity),
    },
  });
  const out: Measurement[] = [];
  const allFloors: CoreFloor[] = [];
  try {
    await ask<LoadResult>(worker, { type: 'run', concurrency: 64, durationMs: WARMUP_MS });
    for (const c of CONCURRENCY) {
      const runs: LoadResult[] = [];
      const floors: CoreFloor[] = [];
      const cannedP99s: number[] = [];
      /** The canned server's calls per second in the same runs, for its mean latency (c / rate). */
      const cannedRates: number[] = [];
      /** t_transport before each run, µs: the canned server's CPU per call at this concurrency. */
      const transportUs: number[] = [];
      for (let r = 0; r < RUNS; r++) {
        if (c === TAIL_CONCURRENCY || TARGET_FLOOR_RATIO[c] !== undefined) {
          const canned = await transport.run(c);
          transportUs.push(canned.cpuUsPerCall);
          if (c === TAIL_CONCURRENCY) {
            cannedP99s.push(latencySummary([canned.result]).p99);
            cannedRates.push((canned.result.ok * 1000) / canned.result.elapsedMs);
          }
        }
        floors.push(coreFloor(checks, material.signingKey, tbs));
        const cpu0 = CPU_TRACE ? threadCpu() : undefined;
        runs.push(await ask<LoadResult>(worker, { type: 'run', concurrency: c, durationMs: RUN_MS }));
        if (cpu0)
          traceCpu(cpu0, threadCpu(), runs[runs.length - 1]!, `${label} ${c}`, await threadNames({ client: worker }));
      }
      allFloors.push(...floors);
      const rates = runs.map((r) => (r.ok * 1000) / r.elapsedMs);
      const rate = median(rates);
      const combined = floors.map((f) => f.combined);
      const ratio = median(rates.map((x, i) => x / combined[i]!));
      const twoCoreRatio = median(rates.map((x, i) => x / (2 * combined[i]!)));
      const failures = runs.reduce((s, r) => s + r.failed, 0);
      const { p50s, p99s, p50, p99, pooledP99 } = latencySummary(runs);
      const target = TARGET_FLOOR_RATIO[c];
      out.push({
        metric: `CSRs per second (${c} in flight, ${label})`,
        value: rate,
        unit: 'CSR/s',
        runs: rates,
        reference: {
          metric: `combined single-core rate before each run, 1 / (t_check + t_sign) (${label}) (ratio: median of per-run ratios)`,
          value: median(combined),
          ratio,
        },
        ...(target !== undefined ? { target: `>= ${target}`, met: ratio >= target } : {}),
      });
      out.push({
        metric: `CSRs per second vs the two-core floor (${c} in flight, ${label}): the CA signs on worker threads`,
        value: rate,
        unit: 'CSR/s',
        reference: {
          metric: `2 x the combined single-core rate (${label})`,
          value: 2 * median(combined),
          ratio: twoCoreRatio,
        },
      });
      if (transportUs.length === runs.length) {
        // The floor with the runtime's transport counted: what one core could sign if it also paid
        // the bare HTTP/2 TLS server's and its caller's CPU for each call, as the CA's process does.
        const withTransport = floors.map((f, i) => 1 / (1 / f.check + 1 / f.sign + transportUs[i]! / 1e6));
        out.push({
          metric: `bare transport CPU per call, t_transport: the canned HTTP/2 TLS server and the same client, this process (${c} in flight, before each ${label} run)`,
          value: median(transportUs),
          unit: 'us/call',
          runs: transportUs,
        });
        out.push({
          metric: `CSRs per second vs the floor including the transport (${c} in flight, ${label})`,
          value: rate,
          unit: 'CSR/s',
          reference: {
            metric: `single-core 1 / (t_check + t_sign + t_transport), before each run (${label}) (ratio: median of per-run ratios)`,
            value: median(withTransport),
            ratio: median(rates.map((x, i) => x / withTransport[i]!)),
          },
        });
        out.push({
          metric: `CSRs per second vs the two-core floor including the transport (${c} in flight, ${label})`,
          value: rate,
          unit: 'CSR/s',
          reference: {
            metric: `2 / (t_check + t_sign + t_transport) (${label})`,
            value: 2 * median(withTransport),
            ratio: median(rates.map((x, i) => x / (2 * withTransport[i]!))),
          },
        });
      }
      out.push({ metric: `p50 latency (${c} in flight, ${label})`, value: p50, unit: 'ms', runs: p50s });
      if (c === TAIL_CONCURRENCY) {
        const tail = median(p99s.map((x, i) => x / cannedP99s[i]!));
        out.push({
          metric: `p99 latency (${c} in flight, ${label})`,
          value: p99,
          unit: 'ms',
          runs: p99s,
          reference: {
            metric: `p99 of the bare canned HTTP/2 TLS server just before each run (ratio: median of per-run ratios)`,
            value: median(cannedP99s),
            ratio: tail,
          },
          target: `<= ${TARGET_TAIL_RATIO}x`,
          met: tail <= TARGET_TAIL_RATIO,
        });
        if (transportUs.length === runs.length) {
          // The least p99 the CA could show at this concurrency. With c calls always in flight the
          // mean latency is c / rate (Little's law), so the mean can be no lower than c over the
          // two-core floor including the transport; and the transport's own p99 is a multiple of
          // its mean (the bare server's p99 / (c / its rate), measured in the same run), which a
          // CA behind the same transport and callers keeps at best. Below this, no CA on this
          // runtime and these two cores can go.
          const leastP99s = floors.map((f, i) => {
            const twoCoreWithTransport = 2 / (1 / f.check + 1 / f.sign + transportUs[i]! / 1e6);
            const shape = cannedP99s[i]! / ((c * 1000) / cannedRates[i]!);
            return shape * ((c * 1000) / twoCoreWithTransport);
          });
          const least = median(leastP99s);
          out.push({
            metric: `p99 floor (${c} in flight, ${label}): c / (the two-core floor including the transport) x the bare server's own p99 / mean`,
            value: least,
            unit: 'ms',
            runs: leastP99s,
            reference: {
              metric: `the bare canned server's p99 (ratio: this floor over it, against the ${TARGET_TAIL_RATIO}x target)`,
              value: median(cannedP99s),
              ratio: median(leastP99s.map((x, i) => x / cannedP99s[i]!)),
            },
          });
          out.push({
            metric: `p99 latency (${c} in flight, ${label}) vs that p99 floor`,
            value: p99,
            unit: 'ms',
            reference: {
              metric: 'the p99 floor (ratio: median of per-run ratios)',
              value: least,
              ratio: median(p99s.map((x, i) => x / leastP99s[i]!)),
            },
          });
        }
      } else {
        // Little's law: with `c` calls always in flight, the mean latency is c / rate, and no
        // percentile above the median can be below it.
        const meanMs = (c * 1000) / rate;
        out.push({
          metric: `p99 latency (${c} in flight, ${label})`,
          value: p99,
          unit: 'ms',
          runs: p99s,
          reference: { metric: `mean latency at that rate (${c} / rate)`, value: meanMs, ratio: p99 / meanMs },
        });
      }
      out.push({ metric: `p99 latency of all runs pooled (${c} in flight, ${label})`, value: pooledP99, unit: 'ms' });
      out.push({
        metric: `failed requests (${c} in flight, ${label})${failures ? `: ${runs.find((r) => r.firstError)?.firstError}` : ''}`,
        value: failures,
        unit: 'requests',
        ...(c === 256 ? { target: '0', met: failures === 0 } : {}),
      });
    }
    const checkRates = allFloors.map((f) => f.check);
    const signRates = allFloors.map((f) => f.sign);
    out.push({
      metric: `raw single-thread CSR check (import the P-256 key, verify the CSR), before each run (${label} runs)`,
      value: median(checkRates),
      unit: 'checks/s',
      runs: checkRates,
    });
    out.push({
      metric: `raw single-thread crypto.sign (${label}), before each run`,
      value: median(signRates),
      unit: 'signatures/s',
      runs: signRates,
    });
  } finally {
    await ask(worker, { type: 'close' });
    await worker.terminate();
    await h.close();
  }
  return out;
}

/** The node a pod is bound to; the store keeps spec as untyped JSON. */
const nodeNameOf = (pod: KubeObject) => (pod.spec as { nodeName?: string } | undefined)?.nodeName;

/**
 * Kubernetes mode against the test API server: how long after a pod is bound to the ztunnel's
 * node the CA grants its identity, beside how long the watch takes to deliver the binding to the
 * store. The grant should add only one request to the watch latency.
 */
async function measureBindingWindow(): Promise<Measurement[]> {
  const api = await TestApiServer.start();
  for (const ns of ['istio-system', 'default']) api.put(namespace(ns));
  const pod = (name: string, sa: string, node?: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: name.startsWith('ztunnel') ? 'istio-system' : 'default' },
    spec: { serviceAccountName: sa, containers: [{ name: 'c', image: 'x' }], ...(node ? { nodeName: node } : {}) },
    status: { phase: 'Running' },
  });
  const zt = api.put(pod('ztunnel-a', 'ztunnel', 'node-a'));
  api.registerToken(
    'zt-token',
    serviceAccountIdentity({
      namespace: 'istio-system',
      serviceAccount: 'ztunnel',
      podName: 'ztunnel-a',
      podUid: zt.metadata.uid,
      audiences: ['istio-ca'],
    }),
  );
  const kubeConfig = loadKubeConfig(api.writeKubeconfig());
  const { store, source } = await syncedKubeStore(kubeConfig);
  const h = await startHarness({ mode: 'kubernetes', store, deps: { kubeConfig } });
  const client = new ZtunnelLikeClient(h.port, h.ca.rootCertPem());
  const csr = (await makeCsr()).pem;
  const watch: number[] = [];
  const grant: number[] = [];
  try {
    for (let i = 0; i < BINDINGS; i++) {
      const name = `late-${i}`;
      const sa = `late-sa-${i}`;
      api.put(pod(name, sa));
      const seen = new Promise<number>((resolve) => {
        const unsub = store.subscribe((events) => {
          if (events.some((e) => e.object.metadata.name === name && nodeNameOf(e.object) === 'node-a')) {
            unsub();
            resolve(performance.now());
          }
        });
      });
      const t0 = performance.now();
      api.put(pod(name, sa, 'node-a'));
      const granted = (async () => {
        for (;;) {
          try {
            await client.createCertificate(csr, {
              token: 'zt-token',
              impersonate: `spiffe://cluster.local/ns/default/sa/${sa}`,
            });
            return performance.now();
          } catch {
            // Denied until the binding reaches the store; ask again at once, as a retrying client would.
          }
        }
      })();
      watch.push((await seen) - t0);
      grant.push((await granted) - t0);
    }
  } finally {
    client.close();
    await h.close();
    await source.stop();
    await api.close();
  }
  const w = median(watch);
  const g = median(grant);
  return [
    { metric: 'pod bound -> store has the binding (watch latency, median)', value: w, unit: 'ms', runs: watch },
    {
      metric: 'pod bound -> CA grants its identity (median)',
      value: g,
      unit: 'ms',
      runs: grant,
      reference: { metric: 'watch latency', value: w, ratio: g / w },
      target: 'watch latency + one request',
    },
  ];
}

const scenario: Scenario = {
  name: 'ca',
  description:
    "CSRs/s and p50/p99 at 8/64/256 in flight over TLS gRPC vs the combined single-core check+sign rate and the bare HTTP/2 TLS server's p99, RSA-2048 and ECDSA P-256 roots; node B's p99 under node A's flood (per-node fairness)",
  async run() {
    // Audit lines are still produced (their cost is part of the path) but not printed.
    logs.setDestination(new Writable({ write: (_c, _e, cb) => cb() }));
    const transport = await startTransportFloor();
    try {
      const out: Measurement[] = [];
      if (FAIRNESS_ONLY) return await measureFairness(WORKER_SOURCE);
      for (const root of ROOTS) out.push(...(await measureRoot(root, transport)));
      out.push(...transportFloorRows(transport));
      if (!CORE_ONLY) out.push(...(await measureFairness(WORKER_SOURCE)), ...(await measureBindingWindow()));
      return out;
    } finally {
      await transport.close();
      logs.setDestination(pino.destination({ fd: 2, sync: true }));
    }
  },
};

export default scenario;
