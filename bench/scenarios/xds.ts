// Delta xDS at scale: many ztunnel streams (in separate client processes, over TLS on loopback)
// against a synthetic cache of pod workloads. Measures initial sync (the reconnect storm) against
// its floor, the same bytes written by a bare TLS server to as many clients, how fast one pod
// change reaches every stream (alone and under churn), an unchanged reconnect against a bare TLS
// receive of its bytes, and server memory.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Registry } from 'prom-client';
import { logs } from '../../src/log/logger';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL, XdsResource, XdsTypeUrl } from '../../src/contract/xds-resources';
import { XdsMetrics } from '../../src/xds/protocol/metrics';
import { MAX_CONCURRENT_FULL_SYNCS } from '../../src/xds/protocol/push';
import { XdsServer } from '../../src/xds/server';
import { encodeResponseBody } from '../../src/xds/wire/wire';
import { FloorServer, http2ReceiveFloor, rawTlsCounter, tlsWriteFloor } from '../floors';
import { SERVER_NAME, TestPki, makeTestPki } from '../../test/support/tls';
import { serveAds, ztunnelTokenAuthenticator } from '../ads-server';
import { Measurement, Scenario, median, percentile } from '../scenario';
import type { WorkerConfig, WorkerMessage } from '../xds-client-worker';
import { SyntheticCache } from '../xds-synthetic-cache';
import { Clients, WORKER_COUNT as WORKERS } from '../xds-clients';

const STREAMS = Number(process.env['XDS_BENCH_STREAMS'] ?? 1_000);
const WORKLOADS = Number(process.env['XDS_BENCH_WORKLOADS'] ?? 100_000);
/** Unmeasured isolated changes first: V8 compiles the small-push path (sync used only the full one). */
const WARMUP_CHANGES = 5;
const ISOLATED_RUNS = 9;
const CHURN_PER_SECOND = 40;
const CHURN_SECONDS = 5;
const RECONNECT_RUNS = Number(process.env['XDS_BENCH_RECONNECT_RUNS'] ?? 12);
/** Unmeasured reconnects before those: the JIT's warm-up (their CPU is reported on a row of its own). */
const RECONNECT_WARMUP_RUNS = 10;
/**
 * XDS_BENCH_RECONNECT_ONLY=1: sync the streams, then measure only the unchanged reconnect and its
 * floors (for profiling it; no storm floor, isolated changes, churn or RSS rows).
 */
const RECONNECT_ONLY = process.env['XDS_BENCH_RECONNECT_ONLY'] === '1';
/**
 * XDS_BENCH_RECONNECT_GC=1: a full collection (and time for its sweeping) before each reconnect
 * and floor run, so a major GC of what earlier runs left does not land in a run's window; each
 * window then holds only the collections its own allocation starts. For comparing code changes:
 * a collection landing in a run costs 50-200 ms on a heap of 100k workloads, more than the request.
 */
const RECONNECT_GC = process.env['XDS_BENCH_RECONNECT_GC'] === '1';
/**
 * XDS_BENCH_RECONNECT_WINDOWS=<file>: each reconnect's and floor run's window is appended to the
 * file as `index start end` (microseconds of the monotonic clock a --cpu-prof profile's sample
 * times use), so a profile's samples can be split by run (1,000,000+ our server, 2,000,000+ the
 * bare TLS receive, 3,000,000+ the bare node:http2 receive).
 */
const WINDOWS_FILE = process.env['XDS_BENCH_RECONNECT_WINDOWS'];
const SETTLE_MS = 5_000;
const SYNC_TIMEOUT_MS = 15 * 60_000;
const DELIVERY_TIMEOUT_MS = 60_000;
const TOKEN = 'bench-token';
/** The IRV of a 100k-workload reconnect is ~8 MB; the default 4 MiB receive limit would refuse it. */
const BENCH_MAX_RECEIVE_BYTES = 64 * 1024 * 1024;

/**
 * Clients the storm floor writes to at once (XDS_BENCH_FLOOR_CONCURRENCY overrides): as many as
 * the server has full-sync slots, so the first client's time to ready is comparable too. Writing
 * to all at once was not measurably faster at 200 clients (12.4 and 7.3 s against 11.2 s, on a
 * loaded machine).
 */
const FLOOR_CONCURRENCY = Number(process.env['XDS_BENCH_FLOOR_CONCURRENCY'] ?? MAX_CONCURRENT_FULL_SYNCS);
/** XDS_BENCH_SYNC_ONLY=1: stop after the initial sync and its floor (for profiling the storm). */
const SYNC_ONLY = process.env['XDS_BENCH_SYNC_ONLY'] === '1';
/** The reconnect storm's target: the real initial sync within this many times the floor's. */
const STORM_TARGET_RATIO = 2;
/** The unchanged reconnect's target: server CPU within this many times the bare TLS receive. */
const RECONNECT_TARGET_RATIO = 1.5;

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const authenticator = ztunnelTokenAuthenticator(TOKEN);

function latencies(clients: Clients, events: Map<string, number>): number[] {
  const out: number[] = [];
  for (const [version, at] of events) for (const r of clients.receipts.get(version) ?? []) out.push(r - at);
  return out;
}

interface Storm {
  /** Seconds from spawning the clients until the first / the last of them had both responses. */
  first: number;
  last: number;
  /** Message bytes one client received (its two responses, without gRPC's 5-byte prefixes). */
  bytes: number;
  /** CPU seconds (user + system) this process (the server) spent meanwhile. */
  serverCpu: number;
}

/** Spawns `streams` clients and waits until every one has both full responses. */
async function storm(clients: Clients, config: Omit<WorkerConfig, 'streams' | 'firstIndex'>): Promise<Storm> {
  const start = now();
  const cpu = process.cpuUsage();
  clients.spawn(config, STREAMS, WORKERS);
  await clients.until(() => clients.synced.size >= STREAMS, SYNC_TIMEOUT_MS, `${STREAMS} streams to sync`);
  const used = process.cpuUsage(cpu);
  const done = [...clients.synced.values()];
  return {
    serverCpu: (used.user + used.system) / 1e6,
    first: (Math.min(...done.map((s) => s.at)) - start) / 1000,
    last: (Math.max(...done.map((s) => s.at)) - start) / 1000,
    bytes: median(done.map((s) => s.bytes)),
  };
}

/** A DeltaDiscoveryResponse of a type's full state, framed for gRPC, as the server writes it. */
function fullResponseFrame(cache: SyntheticCache, typeUrl: XdsTypeUrl, nonce: string): Buffer {
  return responseFrame(typeUrl, [...cache.all(typeUrl)], nonce);
}

function responseFrame(typeUrl: XdsTypeUrl, resources: XdsResource[], nonce: string): Buffer {
  const message = encodeResponseBody({ typeUrl, resources, removed: [] }).withNonce(nonce);
  const frame = Buffer.allocUnsafe(5 + message.length);
  frame.writeUInt8(0, 0);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/**
 * A WebAssembly function fold(end) -> i32: XORs the 8-byte words of its memory from 0 to `end`
 * (rounded up to 8) and folds the result to 32 bits. The cheapest read of every byte found here:
 * JavaScript's 4-byte DataView loads take about four times as long over the same 5.7 MB.
 */
const FOLD_MODULE = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  ...[0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f], // type 0: (i32) -> i32
  ...[0x03, 0x02, 0x01, 0x00], // function 0 has type 0
  ...[0x05, 0x03, 0x01, 0x00, 0x02], // one memory of 2 pages
  ...[0x07, 0x0e, 0x02, 0x04, 0x66, 0x6f, 0x6c, 0x64, 0x00, 0x00, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00], // "fold", "mem"
  ...[0x0a, 0x31, 0x01, 0x2f, 0x02, 0x01, 0x7f, 0x01, 0x7e], // code: locals i (i32), acc (i64)
  ...[0x02, 0x40, 0x03, 0x40], // block, loop
  ...[0x20, 0x01, 0x20, 0x00, 0x4f, 0x0d, 0x01], // if (i >= end) break
  ...[0x20, 0x02, 0x20, 0x01, 0x29, 0x03, 0x00, 0x85, 0x21, 0x02], // acc ^= i64.load(i)
  ...[0x20, 0x01, 0x41, 0x08, 0x6a, 0x21, 0x01, 0x0c, 0x00], // i += 8, continue
  ...[0x0b, 0x0b], // end loop, end block
  ...[0x20, 0x02, 0x20, 0x02, 0x42, 0x20, 0x88, 0x85, 0xa7, 0x0b], // return wrap(acc ^ acc >> 32)
]);
/** FOLD_MODULE's memory less the 8 bytes a last word may read past the data. */
const FOLD_WINDOW_BYTES = 2 * 65536 - 8;

/**
 * The bare node:http2 receive of http2ReceiveFloor (bench/floors.ts), plus one read of every byte
 * of the request: each DATA chunk copied into a WebAssembly memory and XOR-folded 8 bytes at a
 * time (FOLD_MODULE). No entry is walked, nothing is hashed or compared. Any check that a
 * client's held versions equal the server's must read every byte of them at least once (a byte
 * it skipped could differ), and this is the cheapest such read found, so no implementation over
 * node:http2 can do the unchanged reconnect for less: a floor under the check, not our code.
 */
async function http2ReadFloor(pki: TestPki, answers: readonly Buffer[]): Promise<FloorServer & { folded(): number }> {
  const api = (
    globalThis as unknown as {
      WebAssembly: {
        Module: new (b: Uint8Array) => object;
        Instance: new (m: object, i: object) => { exports: unknown };
      };
    }
  ).WebAssembly;
  const wasm = new api.Instance(new api.Module(FOLD_MODULE), {}).exports as {
    fold(end: number): number;
    mem: { buffer: ArrayBuffer };
  };
  const memory = Buffer.from(wasm.mem.buffer);
  let acc = 0;
  const floor = await http2ReceiveFloor(pki, answers, (chunk) => {
    for (let at = 0; at < chunk.length; at += FOLD_WINDOW_BYTES)
      acc ^= wasm.fold(chunk.copy(memory, 0, at, at + FOLD_WINDOW_BYTES));
  });
  return { ...floor, folded: () => acc };
}

/**
 * A ztunnel reconnecting with initial_resource_versions listing every Address it holds, at their
 * current versions (nothing changed): the server's CPU for it, and its floors measured alongside.
 */
async function unchangedReconnects(
  clients: Clients,
  cache: SyntheticCache,
  base: Pick<WorkerConfig, 'port' | 'caFile' | 'serverName' | 'token'>,
  pki: TestPki,
  dir: string,
): Promise<Measurement[]> {
  const out: Measurement[] = [];
  const irvFile = path.join(dir, 'irv.json');
  const irv: Record<string, string> = {};
  for (const w of cache.all('type.googleapis.com/istio.workload.Address')) irv[w.name] = w.version;
  fs.writeFileSync(irvFile, JSON.stringify(irv));
  const cpuRuns: number[] = [];
  const sentRuns: number[] = [];
  const requestBytes: number[] = [];
  const reconnect = async (index: number, config: typeof base & { rawTls?: boolean }): Promise<number> => {
    const [child] = clients.spawn({ ...config, irvFile, waitForGo: true }, 1, 1, index);
    await new Promise<void>((res) => child!.on('message', (m: WorkerMessage) => m.t === 'ready' && res()));
    await sleep(100);
    if (RECONNECT_GC) {
      (globalThis as { gc?: () => void }).gc?.();
      await sleep(300);
    }
    const cpu = process.cpuUsage();
    const started = process.hrtime.bigint();
    child!.send({ t: 'go' });
    await clients.until(() => clients.synced.has(index), DELIVERY_TIMEOUT_MS, 'the reconnecting stream to sync');
    const used = process.cpuUsage(cpu);
    if (WINDOWS_FILE)
      fs.appendFileSync(WINDOWS_FILE, `${index} ${started / 1000n} ${process.hrtime.bigint() / 1000n}\n`);
    child!.kill();
    return (used.user + used.system) / 1000;
  };
  // The floors under that figure, measured in this run: the same request bytes sent on a bare
  // TLS connection to a server that only counts them (no HTTP/2, no gRPC, nothing decoded), and
  // by the same HTTP/2 client to a bare node:http2 server that only finds the two messages'
  // ends and answers as the server does (empty responses). They alternate with the real
  // reconnects, so a change in the machine's speed during the phase moves all alike.
  const raw = await rawTlsCounter(pki);
  const h2 = await http2ReceiveFloor(pki, [
    responseFrame(ADDRESS_TYPE_URL, [], 'h2-1'),
    responseFrame(AUTHORIZATION_TYPE_URL, [], 'h2-2'),
  ]);
  const h2Read = await http2ReadFloor(pki, [
    responseFrame(ADDRESS_TYPE_URL, [], 'h2-1'),
    responseFrame(AUTHORIZATION_TYPE_URL, [], 'h2-2'),
  ]);
  const rawRuns: number[] = [];
  const h2Runs: number[] = [];
  const h2ReadRuns: number[] = [];
  const rawConfig = { ...base, port: raw.port, rawTls: true };
  const h2Config = { ...base, port: h2.port };
  const h2ReadConfig = { ...base, port: h2Read.port };
  // Each round runs the four in turn, starting one further along each time: the collector's work
  // that one window's garbage leaves (a major GC of this process's heap costs 100-200 ms) lands
  // in whichever window runs next, and with a fixed order one kind took it about every other round
  // (the bare node:http2 receive: 11-13 of 25 runs at 119-210 ms, the others at 13-30 ms).
  const kinds: (() => Promise<void>)[] = [
    async () => {
      const index = 1_000_000 + cpuRuns.length;
      cpuRuns.push(await reconnect(index, base));
      sentRuns.push(clients.synced.get(index)!.resources);
    },
    async () => {
      const rawIndex = 2_000_000 + rawRuns.length;
      rawRuns.push(await reconnect(rawIndex, rawConfig));
      requestBytes.push(clients.synced.get(rawIndex)!.bytes);
    },
    async () => void h2Runs.push(await reconnect(3_000_000 + h2Runs.length, h2Config)),
    async () => void h2ReadRuns.push(await reconnect(4_000_000 + h2ReadRuns.length, h2ReadConfig)),
  ];
  const coldRuns: number[] = [];
  try {
    // Unmeasured first, as the isolated changes are: V8 compiles the reconnect's path (the
    // request framer, grpc-js's call set-up, the Delta stream's first answers) over the first
    // reconnects (a run traced with --trace-opt: 3-56 ms of compiling in each of the first nine,
    // 0-3 ms after), and a median over twelve would hold several of those. The floors' paths are
    // Node's own, warm from the streams already open; they get two each.
    for (let i = 0; i < RECONNECT_WARMUP_RUNS; i++) coldRuns.push(await reconnect(5_000_000 + i, base));
    for (let i = 0; i < 2; i++) {
      await reconnect(6_000_000 + i, rawConfig);
      await reconnect(7_000_000 + i, h2Config);
      await reconnect(8_000_000 + i, h2ReadConfig);
    }
    for (let r = 0; r < RECONNECT_RUNS; r++)
      for (let k = 0; k < kinds.length; k++) await kinds[(r + k) % kinds.length]!();
  } finally {
    raw.close();
    h2.close();
    h2Read.close();
  }
  const cpuMs = median(cpuRuns);
  const rawMs = median(rawRuns);
  const h2Ms = median(h2Runs);
  const h2ReadMs = median(h2ReadRuns);
  out.push({
    metric: `resources sent on a reconnect with unchanged initial_resource_versions (${WORKLOADS} names)`,
    value: median(sentRuns),
    unit: 'resources',
    runs: sentRuns,
    target: '0',
    met: sentRuns.every((n) => n === 0),
  });
  out.push({
    metric: 'server CPU for that reconnect (TLS handshake, request decode, version check)',
    value: cpuMs,
    unit: 'ms',
    runs: cpuRuns,
    reference: {
      metric: `the same ${(median(requestBytes) / 1e6).toFixed(1)} MB only received on a bare node:tls socket`,
      value: rawMs,
      ratio: cpuMs / rawMs,
    },
    target: `<= ${RECONNECT_TARGET_RATIO}x bare TLS receive`,
    met: cpuMs / rawMs <= RECONNECT_TARGET_RATIO,
  });
  out.push({
    metric: `server CPU for the first ${RECONNECT_WARMUP_RUNS} reconnects, before those (JIT warm-up, not in the figure above; the value is the first)`,
    value: coldRuns[0] ?? NaN,
    unit: 'ms',
    runs: coldRuns,
  });
  out.push({
    metric: `server CPU to receive the same request bytes on a bare node:tls socket (no HTTP/2, no gRPC, nothing decoded)`,
    value: rawMs,
    unit: 'ms',
    runs: rawRuns,
  });
  out.push({
    metric: 'server CPU for that reconnect, against a bare node:http2 server receiving the same request on one stream',
    value: cpuMs,
    unit: 'ms',
    reference: {
      metric: 'the bare node:http2 receive (message ends found, empty answers, nothing decoded)',
      value: h2Ms,
      ratio: cpuMs / h2Ms,
    },
  });
  out.push({
    metric: `floor: server CPU of a bare node:http2 server receiving the same request (Node's HTTP/2 layer over TLS, no gRPC)`,
    value: h2Ms,
    unit: 'ms',
    runs: h2Runs,
    reference: { metric: 'the bare node:tls receive', value: rawMs, ratio: h2Ms / rawMs },
  });
  out.push({
    metric:
      'floor under the check: the bare node:http2 receive plus one read of every request byte (DATA chunks copied into WebAssembly memory, XOR-folded 8 bytes at a time; nothing walked, hashed or compared)',
    value: h2ReadMs,
    unit: 'ms',
    runs: h2ReadRuns,
    reference: { metric: 'the bare node:tls receive', value: rawMs, ratio: h2ReadMs / rawMs },
  });
  out.push({
    metric: 'server CPU for that reconnect, against that floor (receive over node:http2 and read every byte once)',
    value: cpuMs,
    unit: 'ms',
    reference: { metric: 'the floor under the check', value: h2ReadMs, ratio: cpuMs / h2ReadMs },
  });
  return out;
}

async function run(): Promise<Measurement[]> {
  logs.setLevel('xds', 'warn');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xds-bench-'));
  const pki = makeTestPki();
  const caFile = path.join(dir, 'ca.crt');
  fs.writeFileSync(caFile, pki.caPem);
  const cache = new SyntheticCache(WORKLOADS);
  const xds = new XdsServer(
    cache,
    authenticator,
    { debounce: { after: 100, max: 10_000 }, auth: true, identityCheck: true },
    new XdsMetrics(new Registry()),
  );
  const { server, port } = await serveAds(xds, pki, {
    'grpc.max_receive_message_length': BENCH_MAX_RECEIVE_BYTES,
    'grpc.max_concurrent_streams': 100_000,
  });
  const base = { port, caFile, serverName: SERVER_NAME, token: TOKEN };
  const out: Measurement[] = [];
  let rssPeak = 0;
  let sampler: NodeJS.Timeout | undefined;
  const clients = new Clients();
  try {
    if (RECONNECT_ONLY) {
      // The streams are connected (they make the heap the reconnects run beside), nothing else.
      if (STREAMS > 0) await storm(clients, base);
      await sleep(SETTLE_MS);
      (globalThis as { gc?: () => void }).gc?.();
      return await unchangedReconnects(clients, cache, base, pki, dir);
    }
    // 0. The reconnect storm's floor, before the server has seen a stream: the same response bytes
    // (the Address and Authorization full states as the server encodes them, nonces of the same
    // length) written by a bare TLS server to as many clients from the same client program.
    const floorClients = new Clients();
    const floor = await tlsWriteFloor(
      pki,
      [fullResponseFrame(cache, ADDRESS_TYPE_URL, 'f0-1'), fullResponseFrame(cache, AUTHORIZATION_TYPE_URL, 'f0-2')],
      FLOOR_CONCURRENCY,
    );
    let floorStorm: Storm;
    try {
      floorStorm = await storm(floorClients, { ...base, port: floor.port, floorTls: true });
    } finally {
      floorClients.stop();
      floor.close();
    }
    await sleep(500);
    (globalThis as { gc?: () => void }).gc?.();

    sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 100);
    // 1. Initial sync of every stream.
    const sync = await storm(clients, base);
    const mb = (sync.bytes / 1e6).toFixed(1);
    const ratio = sync.last / floorStorm.last;
    out.push({
      metric: `initial sync of ${STREAMS} streams, ${WORKLOADS} workloads (${mb} MB) each: until the last ztunnel is ready`,
      value: sync.last,
      unit: 's',
      reference: {
        metric: `the same bytes written by a bare node:tls server (floor, last client)`,
        value: floorStorm.last,
        ratio,
      },
      target: `<= ${STORM_TARGET_RATIO}x floor`,
      met: ratio <= STORM_TARGET_RATIO,
    });
    out.push({
      metric: `initial sync of ${STREAMS} streams: until the first ztunnel is ready`,
      value: sync.first,
      unit: 's',
      reference: {
        metric: `the same bytes written by a bare node:tls server (floor, first client)`,
        value: floorStorm.first,
        ratio: sync.first / floorStorm.first,
      },
    });
    out.push({
      metric:
        `floor: the same ${(floorStorm.bytes / 1e6).toFixed(1)} MB (2 responses) per client written by a bare node:tls server ` +
        `to ${STREAMS} TLS 1.3 clients, ${FLOOR_CONCURRENCY} at a time (no HTTP/2, no gRPC; the clients parse and ACK as the streams do), until the last has them`,
      value: floorStorm.last,
      unit: 's',
    });
    out.push({
      metric: `floor: until the first client has them`,
      value: floorStorm.first,
      unit: 's',
    });
    out.push({
      metric: `server CPU during the initial sync of ${STREAMS} streams`,
      value: sync.serverCpu,
      unit: 's',
      reference: {
        metric: 'the bare node:tls server writing the same bytes (floor)',
        value: floorStorm.serverCpu,
        ratio: sync.serverCpu / floorStorm.serverCpu,
      },
    });
    if (Math.abs(floorStorm.bytes - sync.bytes) > 64)
      throw new Error(`the floor wrote ${floorStorm.bytes} bytes per client, the server ${sync.bytes}`);
    if (SYNC_ONLY) {
      out.push({ metric: `server RSS peak (${STREAMS} streams, sync only)`, value: rssPeak / 1e6, unit: 'MB' });
      out.push({ metric: `server RSS after the sync`, value: process.memoryUsage().rss / 1e6, unit: 'MB' });
      return out;
    }

    // 2. An isolated change reaching every stream, once the garbage of the initial sync (28 GB
    // through one process) has been collected and the push path has been compiled: this measures
    // the steady state. The first change after the sync is reported on its own.
    await sleep(SETTLE_MS);
    (globalThis as { gc?: () => void }).gc?.();
    const isolated = async (r: number): Promise<number[]> => {
      await sleep(300); // longer than PILOT_DEBOUNCE_AFTER: the change is alone
      const at = now();
      const w = cache.change((r * 7919) % WORKLOADS);
      await clients.until(
        () => (clients.receipts.get(w.version)?.length ?? 0) >= STREAMS,
        DELIVERY_TIMEOUT_MS,
        'an isolated change to reach every stream',
      );
      return latencies(clients, new Map([[w.version, at]]));
    };
    const cold = await isolated(0);
    for (let r = 1; r < WARMUP_CHANGES; r++) await isolated(r);
    const p50s: number[] = [];
    const p99s: number[] = [];
    for (let r = 0; r < ISOLATED_RUNS; r++) {
      const lat = await isolated(WARMUP_CHANGES + r);
      p50s.push(percentile(lat, 50));
      p99s.push(percentile(lat, 99));
    }
    out.push({
      metric: `first pod change after the sync (push path not yet compiled), p50`,
      value: percentile(cold, 50),
      unit: 'ms',
    });
    out.push({
      metric: `first pod change after the sync (push path not yet compiled), p99`,
      value: percentile(cold, 99),
      unit: 'ms',
    });
    out.push({
      metric: `isolated pod change to all ${STREAMS} streams, p50`,
      value: median(p50s),
      unit: 'ms',
      runs: p50s,
      target: '< 50 ms',
      met: median(p50s) < 50,
    });
    out.push({
      metric: `isolated pod change to all ${STREAMS} streams, p99`,
      value: median(p99s),
      unit: 'ms',
      runs: p99s,
      target: '< 250 ms',
      met: median(p99s) < 250,
    });

    // 3. Churn: 40 pod changes per second.
    await sleep(300);
    const churn = new Map<string, number>();
    // Changes follow the clock, not the loop: a busy event loop makes them arrive in bursts, as
    // store events would, instead of lowering the rate.
    const churnStart = Date.now();
    let k = 0;
    while (Date.now() - churnStart < CHURN_SECONDS * 1000) {
      const due = Math.floor(((Date.now() - churnStart) / 1000) * CHURN_PER_SECOND) + 1;
      while (k < due) {
        const at = now();
        churn.set(cache.change((k++ * 104_729 + 13) % WORKLOADS).version, at);
      }
      await sleep(1000 / CHURN_PER_SECOND);
    }
    const expected = churn.size * STREAMS;
    const received = () => [...churn.keys()].reduce((n, v) => n + (clients.receipts.get(v)?.length ?? 0), 0);
    await clients.until(() => received() >= expected, DELIVERY_TIMEOUT_MS, 'churn changes to reach every stream');
    const churnLat = latencies(clients, churn);
    const churnP99 = percentile(churnLat, 99);
    out.push({
      metric: `p50 change to all streams under ${CHURN_PER_SECOND} changes/s (${churn.size} changes)`,
      value: percentile(churnLat, 50),
      unit: 'ms',
    });
    out.push({
      metric: `p99 change to all streams under ${CHURN_PER_SECOND} changes/s (${churn.size} changes)`,
      value: churnP99,
      unit: 'ms',
      target: '< 500 ms',
      met: churnP99 < 500,
    });

    out.push(...(await unchangedReconnects(clients, cache, base, pki, dir)));
    out.push({
      metric: `server RSS peak (${STREAMS} streams, ${WORKLOADS} workloads)`,
      value: rssPeak / 1e6,
      unit: 'MB',
      target: '< 1500 MB',
      met: rssPeak < 1.5e9,
    });
    return out;
  } finally {
    clearInterval(sampler);
    clients.stop();
    xds.close();
    server.forceShutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const scenario: Scenario = {
  name: 'xds',
  description: `Delta xDS: ${STREAMS} ztunnel streams over TLS from ${WORKERS} client processes, ${WORKLOADS} workloads (XDS_BENCH_STREAMS / XDS_BENCH_WORKLOADS override)`,
  run,
};

export default scenario;
