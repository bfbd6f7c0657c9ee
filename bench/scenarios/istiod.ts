// istiod-ts beside istiod, on the same generated meshes in one run (part 4 of docs/interop.md).
// istiod's side is its in-memory fake discovery server (istio's pilot/test/xds) in a program built
// outside this repository and given as ISTIOD_BENCH_BIN; it prints one JSON report per mesh. Ours is
// the same pipeline in this process: the folder read by the local source, the ambient index and the
// Delta xDS server, with ztunnel-like clients over TLS on loopback (istiod's fake connects its
// clients in memory, without TLS: that is on our side of every ratio). Both debounce 100 ms.
//
// Per mesh: cold start (from reading the folder to one ztunnel's full Address response), heap in
// use after that (after a full collection) and one pod change delivered to N subscribers.
// ISTIOD_BENCH_PODS lists the mesh sizes in pods (default 10000,100000).

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Registry } from 'prom-client';
import { AmbientIndex } from '../../src/ambient/ambient-index';
import { AdsClient, ztunnelNodeId, type DeltaResponse } from '../../src/cli/ads-client';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL } from '../../src/contract/xds-resources';
import { defaultMeshConfig } from '../../src/mesh/defaults';
import type { MeshConfigSource } from '../../src/mesh/types';
import { LocalSource } from '../../src/store/local/local-source';
import { MemoryStore } from '../../src/store/memory-store';
import type { KubeObject } from '../../src/store/types';
import { logs } from '../../src/log/logger';
import { XdsMetrics } from '../../src/xds/protocol/metrics';
import { XdsServer } from '../../src/xds/server';
import { generateMesh } from '../../interop/mesh/generate';
import { writeMesh } from '../../interop/mesh/write';
import { makeTestPki, SERVER_NAME } from '../../test/support/tls';
import { serveAds, ztunnelTokenAuthenticator } from '../ads-server';
import { Measurement, Scenario, median } from '../scenario';

const SUBSCRIBERS = 10;
const CHANGES = 5;
const DEBOUNCE_MS = 100;
const TOKEN = 'bench-token';
const TIMEOUT_MS = 5 * 60_000;
/** How long istiod's fake server gets per change (its own default of 30 s was too short at 100k pods). */
const ISTIOD_CHANGE_TIMEOUT_S = 300;
/** The share of a generated mesh's workloads that are pods (generate.ts keeps a tenth for the rest). */
const POD_SHARE = 0.9;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const authenticator = ztunnelTokenAuthenticator(TOKEN);

function staticMesh(): MeshConfigSource {
  const current = defaultMeshConfig();
  return { current: () => current, subscribe: () => () => undefined };
}

interface OursResult {
  coldStartMs: number;
  heapInuseBytes: number;
  heapAfterSubscribersBytes: number;
  allSubscribersReceivedMs: number[];
}

/** One ztunnel-like client: wildcard Address and Authorization, ACKing; resolves its first full Address response. */
function connect(port: number, ca: string, i: number, seen: (name: string, at: number) => void) {
  const node = `node-${i % 3}`;
  const client = new AdsClient({
    address: `127.0.0.1:${port}`,
    rootCertPem: ca,
    serverName: SERVER_NAME,
    token: TOKEN,
    clusterId: 'Kubernetes',
    node: {
      id: ztunnelNodeId(`10.255.0.${i + 1}`, `ztunnel-bench-${i}`, 'istio-system'),
      metadata: { NAMESPACE: 'istio-system', NODE_NAME: node, CLUSTER_ID: 'Kubernetes' },
    },
  });
  let types = 0;
  const ready = new Promise<number>((resolve) => {
    client.onResponse((r: DeltaResponse) => {
      const at = performance.now();
      if (r.type_url === ADDRESS_TYPE_URL) for (const res of r.resources) seen(res.name, at);
      if (++types === 2) resolve(at);
    });
  });
  client.send({ type_url: ADDRESS_TYPE_URL, resource_names_subscribe: [] });
  client.send({ type_url: AUTHORIZATION_TYPE_URL, resource_names_subscribe: [] });
  return { client, ready };
}

async function runOurs(dir: string): Promise<OursResult> {
  // A line per stream would be the run's only output otherwise.
  logs.setLevel('xds', 'warn');
  const gc = (globalThis as { gc?: () => void }).gc;
  const t0 = performance.now();
  const store = new MemoryStore();
  const source = new LocalSource({ dir, writer: store, watch: false });
  await source.start();
  await source.stop();
  const index = new AmbientIndex({ store, mesh: staticMesh(), clusterId: 'Kubernetes', domain: 'cluster.local' });
  const xds = new XdsServer(
    index,
    authenticator,
    { debounce: { after: DEBOUNCE_MS, max: 10_000 }, auth: true, identityCheck: true },
    new XdsMetrics(new Registry()),
  );
  const pki = makeTestPki();
  const { server, port } = await serveAds(xds, pki, { 'grpc.max_concurrent_streams': 1000 });
  // The changed pod: the first one of the mesh, as istiod's side picks it.
  const pod = store
    .list('Pod')
    .sort((a, b) =>
      `${a.metadata.namespace ?? ''}/${a.metadata.name}` < `${b.metadata.namespace ?? ''}/${b.metadata.name}` ? -1 : 1,
    )[0] as KubeObject;
  const target = `Kubernetes//Pod/${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;
  let changeAt = 0;
  const arrivals: number[][] = [];
  const clients: ReturnType<typeof connect>[] = [];
  const seen = (i: number) => (name: string, at: number) => {
    if (name === target && changeAt > 0) (arrivals[i] ??= []).push(at - changeAt);
  };
  try {
    clients.push(connect(port, pki.caPem, 0, seen(0)));
    const first = await clients[0]!.ready;
    const coldStartMs = first - t0;
    gc?.();
    const heapInuseBytes = process.memoryUsage().heapUsed;
    for (let i = 1; i < SUBSCRIBERS; i++) clients.push(connect(port, pki.caPem, i, seen(i)));
    await Promise.all(clients.map((c) => c.ready));
    gc?.();
    const heapAfterSubscribersBytes = process.memoryUsage().heapUsed;
    const allSubscribersReceivedMs: number[] = [];
    for (let c = 1; c <= CHANGES; c++) {
      arrivals.length = 0;
      const labels = { ...pod.metadata.labels, 'service.istio.io/canonical-revision': `bench-${c}` };
      changeAt = performance.now();
      store.apply([
        { kind: 'Pod', object: { ...pod, metadata: { ...pod.metadata, labels, resourceVersion: `bench-${c}` } } },
      ]);
      const deadline = Date.now() + TIMEOUT_MS;
      while (arrivals.filter((a) => a.length > 0).length < SUBSCRIBERS) {
        if (Date.now() > deadline)
          throw new Error(`change ${c} reached ${arrivals.length} of ${SUBSCRIBERS} subscribers`);
        await sleep(1);
      }
      allSubscribersReceivedMs.push(Math.max(...arrivals.map((a) => a[0]!)));
      await sleep(200);
    }
    return { coldStartMs, heapInuseBytes, heapAfterSubscribersBytes, allSubscribersReceivedMs };
  } finally {
    for (const c of clients) c.client.close();
    server.forceShutdown();
    xds.close();
    index.close();
  }
}

interface IstiodReport {
  istioCommit: string;
  coldStartMs: number;
  heapAfterBuild: { heapInuseBytes: number };
  heapAfterSubscribers: { heapInuseBytes: number };
  allSubscribersReceivedMs: { median: number; max: number };
  changes: { allReceivedMs: number }[];
}

function runIstiod(bin: string, dir: string): IstiodReport {
  const r = spawnSync(
    bin,
    [
      '-test.run',
      'TestGoldens',
      '-bench',
      '-in',
      dir,
      '-subscribers',
      String(SUBSCRIBERS),
      '-changes',
      String(CHANGES),
      '-debounce',
      `${DEBOUNCE_MS}ms`,
      '-change-timeout',
      `${ISTIOD_CHANGE_TIMEOUT_S}s`,
    ],
    { encoding: 'utf8', maxBuffer: 64 << 20, timeout: 60 * 60_000 },
  );
  if (r.status !== 0)
    throw new Error(`ISTIOD_BENCH_BIN exited ${r.status ?? r.signal ?? '?'}: ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout) as IstiodReport;
}

async function run(): Promise<Measurement[]> {
  const bin = process.env['ISTIOD_BENCH_BIN'];
  if (!bin) {
    console.error('istiod: ISTIOD_BENCH_BIN is not set (docs/interop.md, part 4); nothing measured');
    return [];
  }
  const sizes = (process.env['ISTIOD_BENCH_PODS'] ?? '10000,100000').split(',').map(Number);
  const out: Measurement[] = [];
  for (const pods of sizes) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `istiod-bench-${pods}-`));
    try {
      writeMesh(dir, generateMesh({ workloads: Math.round(pods / POD_SHARE), nodes: 3, namespaces: 20 }));
      // istiod first, in its own process; then ours, in this one. A size istiod does not finish
      // still gets our rows, with istiod's failure in the metric instead of a ratio.
      let theirs: IstiodReport | undefined;
      let failure = '';
      try {
        theirs = runIstiod(bin, dir);
      } catch (err) {
        failure = (err as Error).message
          .split('\n')
          .filter((l) => !l.includes('CRD '))
          .join(' ')
          .slice(-300);
      }
      const ours = await runOurs(dir);
      const label = `${pods / 1000}k pods`;
      if (!theirs) {
        const alone = (metric: string, value: number, unit: string): Measurement => ({
          metric: `${metric}, ${label} (istiod did not finish: ${failure})`,
          value: Math.round(value * 10) / 10,
          unit,
        });
        out.push(alone('cold start to the first full Address response', ours.coldStartMs, 'ms'));
        out.push(alone('heap in use after the build (one ztunnel)', ours.heapInuseBytes / 2 ** 20, 'MiB'));
        out.push({
          ...alone(`one pod change to all ${SUBSCRIBERS} ztunnels`, median(ours.allSubscribersReceivedMs), 'ms'),
          runs: ours.allSubscribersReceivedMs.map((v) => Math.round(v * 10) / 10),
        });
        continue;
      }
      const reported = theirs;
      const row = (metric: string, value: number, unit: string, istiod: number): Measurement => ({
        metric: `${metric}, ${label}`,
        value: Math.round(value * 10) / 10,
        unit,
        reference: {
          metric: `istiod ${reported.istioCommit.slice(0, 12)}, same mesh`,
          value: Math.round(istiod * 10) / 10,
          ratio: Math.round((value / istiod) * 100) / 100,
        },
      });
      out.push(row('cold start to the first full Address response', ours.coldStartMs, 'ms', theirs.coldStartMs));
      out.push(
        row(
          'heap in use after the build (one ztunnel)',
          ours.heapInuseBytes / 2 ** 20,
          'MiB',
          theirs.heapAfterBuild.heapInuseBytes / 2 ** 20,
        ),
      );
      out.push(
        row(
          `heap in use with ${SUBSCRIBERS} ztunnels`,
          ours.heapAfterSubscribersBytes / 2 ** 20,
          'MiB',
          theirs.heapAfterSubscribers.heapInuseBytes / 2 ** 20,
        ),
      );
      out.push({
        ...row(
          `one pod change to all ${SUBSCRIBERS} ztunnels (median of ${CHANGES}, ${DEBOUNCE_MS} ms debounce)`,
          median(ours.allSubscribersReceivedMs),
          'ms',
          theirs.allSubscribersReceivedMs.median,
        ),
        runs: ours.allSubscribersReceivedMs.map((v) => Math.round(v * 10) / 10),
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  return out;
}

const scenario: Scenario = {
  name: 'istiod',
  description: "istiod-ts beside istiod's own index (ISTIOD_BENCH_BIN) on the same generated meshes",
  run,
};
export default scenario;
