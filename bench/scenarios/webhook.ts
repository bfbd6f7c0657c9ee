// The validating webhook under API-server-like load: AdmissionReviews per second and p50/p99
// latency with 50 concurrent callers over HTTPS keep-alive, for a typical AuthorizationPolicy and
// a typical VirtualService; then the same while the CA in the same process signs CSRs for a
// ztunnel-like caller (TLS gRPC, 64 in flight, from its own thread). The webhook callers run in a
// worker thread with their own event loop, as the API server is its own process. The callers are
// a closed loop, so latency includes queueing: about 50 / (reviews per second) on average.
// Alone, each kind's runs alternate with runs of the same callers against a bare HTTPS server that
// answers with that kind's answer, canned (bench/floors.ts): the rate and p99 of the transport
// alone, in the same run. WEBHOOK_BENCH_RUNS, WEBHOOK_BENCH_ALONE_ONLY=1 and WEBHOOK_BENCH_KINDS
// (e.g. VirtualService) shorten it.

import { readdirSync, readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { Writable } from 'node:stream';
import pino from 'pino';
import { latencySummary, LoadResult, median, Measurement, Scenario } from '../scenario';
import { ask, CA_CLIENT_SETUP, caRequestFrames } from '../worker';
import { logs } from '../../src/log/logger';
import { startWebhookServer } from '../../src/webhook/server';
import { reviewAdmission } from '../../src/webhook/admission';
import { formatResponse } from '../../src/webhook/http1';
import { cannedHttp1Server } from '../floors';
import { loadOrCreateTokenKey, signLocalToken } from '../../src/security/local-jwt';
import { admissionReview, SERVER_NAME, throwawayCert, webhookContext } from '../../test/support/webhook/harness';
import { startHarness, readRoot, SERVER_NAME as CA_SERVER_NAME } from '../../test/support/ca/harness';
import { makeCsr } from '../../test/support/ca/fixtures';

const CALLERS = 50;
const RUNS = Number(process.env['WEBHOOK_BENCH_RUNS'] ?? 5);
/** Skips the runs under CA load (for quick comparisons of the webhook's own path). */
const ALONE_ONLY = process.env['WEBHOOK_BENCH_ALONE_ONLY'] === '1';
/** WEBHOOK_BENCH_KINDS=VirtualService (comma-separated) runs only those kinds' rows (for profiling one path). */
const KINDS = process.env['WEBHOOK_BENCH_KINDS']?.split(',');
/** WEBHOOK_BENCH_CPU=1 prints each thread's CPU time per review for each run (development aid, Linux only). */
const CPU_TRACE = process.env['WEBHOOK_BENCH_CPU'] === '1';

/** CPU ms of each thread of this process, by thread name and id, from /proc. */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(`${tid === String(process.pid) ? 'main' : name}/${tid}`, (Number(f[11]) + Number(f[12])) * 10);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

function traceCpu(before: Map<string, number>, after: Map<string, number>, run: LoadResult, what: string): void {
  const per = (ms: number) => ((ms * 1000) / run.ok).toFixed(0);
  const threads = [...after]
    .map(([tid, ms]) => [tid, ms - (before.get(tid) ?? 0)] as const)
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1]);
  const total = threads.reduce((n, [, ms]) => n + ms, 0);
  process.stderr.write(
    `cpu ${what}: ${run.ok} reviews, ${rate(run).toFixed(0)}/s, process ${per(total)} us/review; per thread us/review: ` +
      `${threads.map(([tid, ms]) => `${tid} ${per(ms)}`).join(', ')}\n`,
  );
}
const RUN_MS = 2000;
/** Unmeasured load before each kind's runs, so V8 has compiled that kind's validators. */
const WARMUP_MS = 1000;
const CA_IN_FLIGHT = 64;
const TARGET_P99_ALONE_MS = 10;
const TARGET_P99_UNDER_CA_MS = 50;

const AUTHORIZATION_POLICY = {
  apiVersion: 'security.istio.io/v1',
  kind: 'AuthorizationPolicy',
  metadata: { name: 'productpage-viewer', namespace: 'bookinfo' },
  spec: {
    selector: { matchLabels: { app: 'productpage' } },
    action: 'ALLOW',
    rules: [
      {
        from: [{ source: { principals: ['cluster.local/ns/bookinfo/sa/bookinfo-gateway'], namespaces: ['bookinfo'] } }],
        to: [
          {
            operation: {
              methods: ['GET', 'HEAD'],
              paths: ['/productpage', '/static/*', '/api/v1/products/{*}'],
              ports: ['9080'],
            },
          },
        ],
        when: [{ key: 'request.headers[x-user]', notValues: ['blocked'] }],
      },
    ],
  },
};

const VIRTUAL_SERVICE = {
  apiVersion: 'networking.istio.io/v1',
  kind: 'VirtualService',
  metadata: { name: 'reviews', namespace: 'bookinfo' },
  spec: {
    hosts: ['reviews'],
    http: [
      {
        match: [{ headers: { 'end-user': { exact: 'jason' } } }],
        route: [{ destination: { host: 'reviews', subset: 'v2' } }],
      },
      {
        match: [{ uri: { prefix: '/ratings' } }],
        retries: { attempts: 3, perTryTimeout: '2s', retryOn: '5xx,reset' },
        timeout: '10s',
        route: [{ destination: { host: 'reviews', subset: 'v3' } }],
      },
      {
        route: [
          { destination: { host: 'reviews', subset: 'v1' }, weight: 90 },
          { destination: { host: 'reviews', subset: 'v3' }, weight: 10 },
        ],
      },
    ],
  },
};

// Runs inside the worker: `callers` loops, each posting one review after another on its own
// keep-alive TLS connection. The callers write pre-built HTTP/1.1 requests and read the status,
// Content-Length and body by hand instead of using node:https: the API server is a Go process on
// another machine, while this load generator shares the server's two cores, and https.request
// cost more CPU per review than the webhook's whole request path.
const WORKER_SOURCE = `
const { parentPort, workerData: w } = require('node:worker_threads');
const tls = require('node:tls');
const ALLOWED = Buffer.from('"allowed":true');
const HEAD_END = Buffer.from('\\r\\n\\r\\n');
const CONTENT_LENGTH = /\\r\\ncontent-length: *(\\d+)/i;
const CONNECTION_CLOSE = /\\r\\nconnection: *close/i;
// One caller: a keep-alive connection with persistent listeners (adding and removing listeners
// per review cost the load generator as much as parsing the answer), posting the next review as
// soon as the previous answer is complete.
class Caller {
  constructor(port, socket) {
    this.port = port;
    this.buf = null;
    this.run = null;
    this.attach(socket);
  }
  attach(socket) {
    this.socket = socket;
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => { if (this.socket === socket) this.fail(new Error('connection closed')); });
  }
  static open(port) {
    return new Promise((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port, ca: w.ca, servername: w.serverName, ALPNProtocols: ['http/1.1'] }, () => {
        socket.off('error', reject);
        resolve(socket);
      });
      socket.once('error', reject);
      socket.setNoDelay(true);
    });
  }
  static async connect(port) {
    return new Caller(port, await Caller.open(port));
  }
  // The server ends a connection after its request bound with Connection: close; the API server's
  // Go client then opens a new one, and so does this caller, instead of counting a failure.
  reconnect() {
    const old = this.socket;
    this.socket = null;
    old.destroy();
    Caller.open(this.port).then((socket) => { this.attach(socket); if (this.run) this.send(); }, (err) => { this.socket = old; this.fail(err); });
  }
  start(run) {
    this.run = run;
    this.send();
  }
  send() {
    if (performance.now() >= this.run.end) return this.stop();
    this.t0 = performance.now();
    this.socket.write(this.run.request);
  }
  stop() {
    const run = this.run;
    this.run = null;
    if (run) run.done();
  }
  onData(chunk) {
    this.buf = this.buf ? Buffer.concat([this.buf, chunk]) : chunk;
    const head = this.buf.indexOf(HEAD_END);
    if (head < 0) return;
    const headers = this.buf.toString('latin1', 0, head);
    const m = CONTENT_LENGTH.exec(headers);
    if (!m) return this.fail(new Error('response without content-length: ' + headers.slice(0, 200)));
    const end = head + 4 + Number(m[1]);
    if (this.buf.length < end) return;
    const body = this.buf.subarray(head + 4, end);
    this.buf = null;
    const run = this.run;
    if (!run) return;
    if (!headers.startsWith('HTTP/1.1 200 ') || body.indexOf(ALLOWED) < 0) {
      run.failed++;
      run.firstError = run.firstError || headers.split('\\r\\n')[0] + ': ' + body.toString().slice(0, 200);
    } else {
      run.ok++;
      run.latencies.push(performance.now() - this.t0);
    }
    run.last = performance.now();
    if (CONNECTION_CLOSE.test(headers)) return this.reconnect();
    this.send();
  }
  fail(err) {
    const run = this.run;
    if (!run) return;
    run.failed++;
    run.firstError = run.firstError || err.message;
    this.stop();
  }
}
// Callers by server port: the webhook's and the floor's each keep their own connections.
const pools = new Map();
async function run(port, body, durationMs) {
  // A caller whose connection failed is replaced before the next run.
  const callers = (pools.get(port) || []).filter((c) => c.socket && !c.socket.destroyed);
  pools.set(port, callers);
  while (callers.length < w.callers) callers.push(await Caller.connect(port));
  const bytes = Buffer.from(body);
  const request = Buffer.concat([Buffer.from('POST /validate HTTP/1.1\\r\\nHost: ' + w.serverName + '\\r\\nContent-Type: application/json\\r\\nAccept: application/json\\r\\nContent-Length: ' + bytes.length + '\\r\\n\\r\\n'), bytes]);
  const start = performance.now();
  const state = { request, end: start + durationMs, latencies: [], ok: 0, failed: 0, firstError: undefined, last: start };
  await new Promise((resolve) => {
    let running = callers.length;
    state.done = () => { if (--running === 0) resolve(); };
    for (const c of callers) c.start(state);
  });
  return { ok: state.ok, failed: state.failed, firstError: state.firstError, elapsedMs: state.last - start, latencies: state.latencies };
}
parentPort.on('message', async (m) => {
  if (m.type === 'run') parentPort.postMessage(await run(m.port, m.body, m.durationMs));
  else { for (const callers of pools.values()) for (const c of callers) c.socket?.destroy(); parentPort.postMessage('closed'); }
});
`;

// The CA's caller, as ztunnel is: its own thread, one channel, CA_IN_FLIGHT calls in flight.
const CA_WORKER_SOURCE = `
${CA_CLIENT_SETUP}
let running = true, signed = 0, inflight = 0, onIdle, next = 0;
const fire = () => {
  inflight++;
  createCertificate(next++, (err) => {
    inflight--;
    if (!err) signed++;
    if (running) fire();
    else if (inflight === 0 && onIdle) onIdle();
  });
};
for (let k = 0; k < w.inFlight; k++) fire();
parentPort.on('message', () => {
  running = false;
  onIdle = () => { closeClient(); parentPort.postMessage(signed); };
  if (inflight === 0) onIdle();
});
`;

/** CSRs against a CA in this process, sent from a worker thread, until stopped; returns how many were signed. */
async function startCaLoad(): Promise<{ stop(): Promise<number> }> {
  const h = await startHarness();
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
  const worker = new Worker(CA_WORKER_SOURCE, {
    eval: true,
    workerData: {
      rootPem: readRoot(h),
      port: h.port,
      serverName: CA_SERVER_NAME,
      token,
      frames: caRequestFrames([(await makeCsr(identity)).pem], identity),
      inFlight: CA_IN_FLIGHT,
    },
  });
  return {
    async stop() {
      const signed = await ask<number>(worker, 'stop');
      await worker.terminate();
      await h.close();
      return signed;
    },
  };
}

const PURE_MS = 1000;

/** The webhook listener's TLS settings besides its identity (server.ts), for the floor to match. */
const WEBHOOK_TLS_OPTIONS = { minVersion: 'TLSv1.2', ALPNProtocols: ['http/1.1'] } as const;

/** The webhook's whole HTTP answer to `body`, as bytes: what the floor server sends back. */
function cannedAnswer(body: string): Buffer {
  const reply = reviewAdmission(Buffer.from(body), 'application/json');
  return formatResponse(reply.status, reply.contentType, reply.body, { close: false, date: new Date().toUTCString() });
}

/** Single-thread rate of the pure handler on the same body: the ceiling HTTPS and TLS cost is measured against. */
function pureRate(body: string): number {
  const bytes = Buffer.from(body);
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < PURE_MS) {
    reviewAdmission(bytes, 'application/json');
    n++;
  }
  return (n * 1000) / (performance.now() - start);
}

// The reference loop of pureRate leaves ~100k parsed reviews of garbage behind; collected during
// the next measured run, it showed up as that run's p99. Runs start from a collected heap (bench
// runs node with --expose-gc); what the server allocates during a run is collected as usual.
const collect = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

/** The listener's ports: the webhook's, and for the runs alone the canned floor's, run alternately with it. */
interface Ports {
  webhook: number;
  floor?: number;
}

async function run(worker: Worker, port: number, body: string, durationMs: number, what = ''): Promise<LoadResult> {
  const cpu0 = CPU_TRACE && what ? threadCpu() : undefined;
  const r = await ask<LoadResult>(worker, { type: 'run', port, body, durationMs });
  if (cpu0) traceCpu(cpu0, threadCpu(), r, what);
  return r;
}
const rate = (r: LoadResult) => (r.ok * 1000) / r.elapsedMs;

async function measure(
  worker: Worker,
  ports: Ports,
  label: string,
  body: string,
  targetMs: number,
): Promise<Measurement[]> {
  // Each kind runs through validators of its own: the first run of a kind used to include their
  // compilation.
  await run(worker, ports.webhook, body, WARMUP_MS);
  if (ports.floor !== undefined) await run(worker, ports.floor, body, WARMUP_MS);
  const runs: LoadResult[] = [];
  const floorRuns: LoadResult[] = [];
  // The floor's runs alternate with the webhook's, so a change in the host's speed hits both.
  for (let r = 0; r < RUNS; r++) {
    collect();
    runs.push(await run(worker, ports.webhook, body, RUN_MS, `webhook, ${label}`));
    if (ports.floor === undefined) continue;
    collect();
    floorRuns.push(await run(worker, ports.floor, body, RUN_MS, `floor, ${label}`));
  }
  const rates = runs.map(rate);
  const failures = runs.reduce((s, r) => s + r.failed, 0);
  const { p50s, p99s, p50, p99, pooledP99 } = latencySummary(runs);
  const pure = pureRate(body);
  const out: Measurement[] = [];
  let floor: { rates: number[]; p50s: number[]; p99s: number[]; p99: number } | undefined;
  if (floorRuns.length > 0) {
    const f = latencySummary(floorRuns);
    floor = { rates: floorRuns.map(rate), p50s: f.p50s, p99s: f.p99s, p99: f.p99 };
  }
  // Each ratio is the median of the pairs' (a run and the floor's run after it).
  const pairRatio = (mine: number[], theirs: number[]) => median(mine.map((v, i) => v / (theirs[i] ?? NaN)));
  out.push({
    metric: `reviews per second (${label})`,
    value: median(rates),
    unit: 'reviews/s',
    runs: rates,
    reference: floor
      ? {
          metric: 'bare HTTPS server, canned answer, same callers',
          value: median(floor.rates),
          ratio: pairRatio(rates, floor.rates),
        }
      : { metric: 'pure reviewAdmission, one thread, no HTTP', value: pure, ratio: median(rates) / pure },
  });
  out.push({ metric: `p50 latency (${label})`, value: p50, unit: 'ms', runs: p50s });
  out.push({
    metric: `p99 latency (${label})`,
    value: p99,
    unit: 'ms',
    runs: p99s,
    ...(floor && {
      reference: {
        metric: 'bare HTTPS server p99, same callers',
        value: floor.p99,
        ratio: pairRatio(p99s, floor.p99s),
      },
    }),
    target: `< ${targetMs} ms`,
    met: p99 < targetMs,
  });
  out.push({ metric: `p99 latency of all runs pooled (${label})`, value: pooledP99, unit: 'ms' });
  out.push({
    metric: `failed reviews (${label})${failures ? `: ${runs.find((r) => r.firstError)?.firstError}` : ''}`,
    value: failures,
    unit: 'reviews',
    target: '0',
    met: failures === 0,
  });
  if (floor) {
    const floorFailures = floorRuns.reduce((s, r) => s + r.failed, 0);
    out.push(
      {
        metric: `floor: bare HTTPS server answering a canned review of the same size (${label})${floorFailures ? `, ${floorFailures} failed` : ''}`,
        value: median(floor.rates),
        unit: 'reviews/s',
        runs: floor.rates,
      },
      { metric: `floor: p50 latency (${label})`, value: median(floor.p50s), unit: 'ms', runs: floor.p50s },
      { metric: `floor: p99 latency (${label})`, value: floor.p99, unit: 'ms', runs: floor.p99s },
      { metric: `pure reviewAdmission, one thread, no HTTP (${label})`, value: pure, unit: 'reviews/s' },
    );
  }
  return out;
}

const scenario: Scenario = {
  name: 'webhook',
  description: `AdmissionReviews over HTTPS keep-alive with ${CALLERS} concurrent callers, alone and under CA load (${CA_IN_FLIGHT} CSRs in flight)`,
  async run() {
    // Rejections and request logs would dominate the measurement; keep errors only.
    logs.setDestination(new Writable({ write: (_c, _e, done) => done() }));
    logs.configure('default:error,webhook:error,ca:error,server:error');
    const h = webhookContext();
    const cert = throwawayCert();
    h.certs.set(cert);
    const server = await startWebhookServer(h.ctx);
    const webhook = server.port ?? 0;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { ca: cert.rootsPem, serverName: SERVER_NAME, callers: CALLERS },
    });
    const ap = admissionReview(AUTHORIZATION_POLICY);
    const vs = admissionReview(VIRTUAL_SERVICE);
    const out: Measurement[] = [];
    try {
      // Alone, each kind's runs alternate with runs against a bare HTTPS server that answers the
      // same callers with that kind's answer, canned: the transport's floor under this row.
      for (const [label, body] of [
        ['AuthorizationPolicy, alone', ap],
        ['VirtualService, alone', vs],
      ] as const) {
        if (KINDS && !KINDS.some((k) => label.startsWith(`${k},`))) continue;
        const floor = await cannedHttp1Server(
          { certPem: cert.certChainPem, keyPem: cert.privateKeyPem },
          cannedAnswer(body),
          WEBHOOK_TLS_OPTIONS,
        );
        try {
          out.push(...(await measure(worker, { webhook, floor: floor.port }, label, body, TARGET_P99_ALONE_MS)));
        } finally {
          floor.close();
        }
      }
      if (ALONE_ONLY) return out;
      const ca = await startCaLoad();
      const caStart = performance.now();
      try {
        out.push(
          ...(await measure(worker, { webhook }, 'AuthorizationPolicy, under CA load', ap, TARGET_P99_UNDER_CA_MS)),
        );
        out.push(...(await measure(worker, { webhook }, 'VirtualService, under CA load', vs, TARGET_P99_UNDER_CA_MS)));
      } finally {
        const signed = await ca.stop();
        out.push({
          metric: `CSRs signed per second meanwhile (${CA_IN_FLIGHT} in flight)`,
          value: (signed * 1000) / (performance.now() - caStart),
          unit: 'CSR/s',
        });
      }
    } finally {
      await ask(worker, { type: 'close' });
      await worker.terminate();
      await h.shutdown();
      logs.setDestination(pino.destination({ fd: 2, sync: true }));
    }
    return out;
  },
};

export default scenario;
