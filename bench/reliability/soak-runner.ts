// The soak: one server in local mode, in this process, under hours' worth of churn squeezed into
// minutes: manifests written, rewritten and deleted, ztunnels connecting and leaving, CSRs signed,
// reviews answered. Then two checks. Nothing lost: a fresh ztunnel, and one that stayed connected
// throughout, hold exactly what a fresh build of the ambient index from the same files derives.
// Memory: RSS after GC at the end is within MAX_RSS_GROWTH of RSS after GC once warmed up.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { parseServeOptions } from '../../src/config/options';
import { loadOrCreateTokenKey, signLocalToken } from '../../src/security/local-jwt';
import { startServer } from '../../src/server/server';
import { ADMISSION_SEEDS, admissionReview, seedObject } from './admission-seeds';
import { makeCsr, pem } from './fuzz-csr';
import { buildFolderIndex, DEMO_DIR, stateOf } from './folder-index';
import { rssAfterGc } from './gc';
import { boundaryStrings, Json } from './mutate-json';
import { Rng } from './prng';
import { CaCaller, ReviewCaller, SoakZtunnel, ZtunnelIdentity } from './soak-clients';
import { Churner } from './soak-churn';

/** RSS after GC at the end may exceed the warmed-up value by at most this share. */
export const MAX_RSS_GROWTH = 0.1;
/** Share of the run (at least MIN_WARM_UP_MS) before the starting RSS is read: code compiled, pools and caches at their working size. */
export const WARM_UP_SHARE = 0.2;
export const MIN_WARM_UP_MS = 5_000;
/** Transient ztunnels connected at once; each lives a random 0.3-3 s. */
export const TRANSIENT_ZTUNNELS = 4;
/** Time allowed after the churn stops for the last change to reach every client. */
const SETTLE_MS = 2_500;

export interface SoakOptions {
  durationMs: number;
  seed: number;
  log?: (line: string) => void;
}

export interface SoakReport {
  seconds: number;
  counts: {
    fileWrites: number;
    fileRenames: number;
    fileDeletes: number;
    ztunnelSessions: number;
    xdsResponses: number;
    csrs: number;
    reviews: number;
    reviewsDenied: number;
  };
  failures: string[];
  rss: { warmMiB: number; endMiB: number; growth: number; bounded: boolean };
  state: { resources: number; fresh: string[]; witness: string[] };
  passed: boolean;
}

const mib = (b: number) => Math.round((b / 1048576) * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Names whose versions differ between what a client holds and the fresh build, per type. */
function compareState(
  held: Record<string, Record<string, string>>,
  want: Record<string, Record<string, string>>,
): string[] {
  const diff: string[] = [];
  for (const type of Object.keys(want)) {
    const a = held[type] ?? {};
    const b = want[type]!;
    for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (a[name] !== b[name])
        diff.push(
          `${type.split('.').pop()} ${name}: held ${a[name] ?? 'nothing'}, fresh build ${b[name] ?? 'nothing'}`,
        );
    }
  }
  return diff;
}

export async function runSoak(opts: SoakOptions): Promise<SoakReport> {
  const log = opts.log ?? (() => undefined);
  const rng = new Rng(opts.seed);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-soak-'));
  const configDir = path.join(root, 'config');
  const stateDir = path.join(root, 'state');
  fs.cpSync(DEMO_DIR, configDir, { recursive: true });
  fs.rmSync(path.join(configDir, 'README.md'), { force: true });
  const options = parseServeOptions(
    [
      '--configDir',
      configDir,
      '--stateDir',
      stateDir,
      '--grpcAddr',
      '',
      '--secureGRPCAddr',
      '127.0.0.1:0',
      '--httpsAddr',
      '127.0.0.1:0',
      '--httpAddr',
      '',
      '--monitoringAddr',
      '',
      '--log_output_level',
      'default:none',
    ],
    { ROOT_CA_DIR: path.join(stateDir, 'no-cacerts') },
  );
  const server = await startServer(options);
  const failures: string[] = [];
  const fail = (what: string) => {
    if (failures.length < 50) failures.push(what);
    log(`FAIL ${what}`);
  };
  const closers: (() => void)[] = [];
  try {
    await server.secureStarted;
    const grpcPort = server.listeners.get('secure-grpc')!.port;
    const webhookPort = server.listeners.get('webhook')!.port;
    const rootPem = fs.readFileSync(path.join(stateDir, 'root-cert.pem'), 'utf8');
    const pod = server.ctx.store.get('Pod', 'istio-system', 'ztunnel-7k2xq');
    if (!pod) throw new Error('the demo ztunnel pod istio-system/ztunnel-7k2xq is not in the store');
    const token = signLocalToken(
      loadOrCreateTokenKey(stateDir),
      {
        namespace: 'istio-system',
        serviceAccount: 'ztunnel',
        podName: 'ztunnel-7k2xq',
        podUid: pod.metadata.uid!,
        nodeName: 'node-a',
      },
      ['istio-ca'],
      24 * 3600,
    );
    const id: ZtunnelIdentity = { token, nodeName: 'node-a', pod: 'ztunnel-7k2xq', ip: '10.244.1.2' };
    const csrs = [pem(await makeCsr('P-256')), pem(await makeCsr('P-256')), pem(await makeCsr('RSA-2048'))];
    const ca = new CaCaller(grpcPort, rootPem);
    const reviews = new ReviewCaller(webhookPort, rootPem);
    closers.push(
      () => ca.close(),
      () => reviews.close(),
    );

    const witness = new SoakZtunnel(grpcPort, rootPem, id);
    closers.push(() => witness.close());
    await witness.synced(10_000);

    const churner = new Churner(configDir);
    const counts: SoakReport['counts'] = {
      fileWrites: 0,
      fileRenames: 0,
      fileDeletes: 0,
      ztunnelSessions: 0,
      xdsResponses: 0,
      csrs: 0,
      reviews: 0,
      reviewsDenied: 0,
    };
    const started = Date.now();
    const end = started + opts.durationMs;
    const warmUntil = started + Math.max(MIN_WARM_UP_MS, opts.durationMs * WARM_UP_SHARE);
    let warmRss: number | undefined;
    const running = () => Date.now() < end;

    const churnLoop = async () => {
      while (running()) {
        churner.step(rng);
        await sleep(5 + rng.int(40));
      }
    };
    const ztunnelLoop = async () => {
      while (running()) {
        const z = new SoakZtunnel(grpcPort, rootPem, id);
        counts.ztunnelSessions++;
        await sleep(300 + rng.int(2700));
        counts.xdsResponses += z.responses;
        if (z.types.size < 2) fail(`a ztunnel session of ${z.responses} responses never got both types`);
        z.close();
        const status = await z.status;
        if (status.code !== grpc.status.CANCELLED /* by us */)
          fail(`a ztunnel stream ended with ${status.code}: ${status.details}`);
      }
    };
    const caLoop = async () => {
      while (running()) {
        const impersonate = rng.chance(0.5) ? 'spiffe://cluster.local/ns/bookinfo/sa/bookinfo-productpage' : undefined;
        try {
          const res = await ca.createCertificate(rng.pick(csrs), token, impersonate);
          if (res.cert_chain.length < 2) fail(`CreateCertificate returned a chain of ${res.cert_chain.length}`);
          counts.csrs++;
        } catch (err) {
          fail(`CreateCertificate${impersonate ? ' (impersonating)' : ''} failed: ${(err as Error).message}`);
        }
        await sleep(rng.int(30));
      }
    };
    const reviewLoop = async () => {
      while (running()) {
        const [apiVersion, kind, spec] = rng.pick(ADMISSION_SEEDS);
        const object = seedObject(apiVersion, kind, spec) as {
          metadata: Record<string, Json>;
          spec: Record<string, Json>;
        };
        object.metadata['name'] = `r-${rng.int(1e6)}`;
        // A third are invalid: one spec field given a value of the wrong shape.
        if (rng.chance(0.33)) {
          const keys = Object.keys(object.spec);
          if (keys.length > 0)
            object.spec[rng.pick(keys)] = rng.chance(0.5)
              ? boundaryStrings(rng).slice(0, 300)
              : rng.pick([null, -1, [], {}]);
        }
        try {
          const res = await reviews.review(JSON.stringify(admissionReview(apiVersion, kind, object)));
          if (res.status !== 200) fail(`a ${kind} review was answered ${res.status}: ${res.body.slice(0, 200)}`);
          else if ((JSON.parse(res.body) as { response?: { allowed?: boolean } }).response?.allowed !== true) {
            if (counts.reviewsDenied++ === 0) log(`first denial: ${res.body.slice(0, 300)}`);
          }
          counts.reviews++;
        } catch (err) {
          fail(`a ${kind} review failed: ${(err as Error).message}`);
        }
        await sleep(rng.int(10));
      }
    };
    const warmLoop = async () => {
      await sleep(warmUntil - Date.now());
      warmRss = await rssAfterGc();
      log(`warmed up after ${Math.round((Date.now() - started) / 1000)} s: RSS after GC ${mib(warmRss)} MiB`);
    };
    const progress = setInterval(
      () =>
        log(
          `  ${Math.round((Date.now() - started) / 1000)} s: ${churner.counts.writes + churner.counts.renames} file writes, ${churner.counts.deletes} deletes, ${counts.ztunnelSessions} ztunnel sessions, ${counts.csrs} CSRs, ${counts.reviews} reviews, RSS ${mib(process.memoryUsage().rss)} MiB`,
        ),
      15_000,
    );
    progress.unref();
    await Promise.all([
      churnLoop(),
      ...Array.from({ length: TRANSIENT_ZTUNNELS }, ztunnelLoop),
      caLoop(),
      caLoop(),
      reviewLoop(),
      reviewLoop(),
      warmLoop(),
    ]);
    clearInterval(progress);
    counts.fileWrites = churner.counts.writes;
    counts.fileRenames = churner.counts.renames;
    counts.fileDeletes = churner.counts.deletes;

    // Nothing lost: once the last change has settled, a fresh ztunnel and the witness that saw
    // every push hold what a fresh build from the same files derives.
    await sleep(SETTLE_MS);
    const fresh = new SoakZtunnel(grpcPort, rootPem, id);
    closers.push(() => fresh.close());
    await fresh.synced(10_000);
    await sleep(500);
    const build = await buildFolderIndex(configDir, options, server.ctx.mesh);
    const want = stateOf(build.index);
    await build.close();
    const freshDiff = compareState(fresh.state(), want);
    const witnessDiff = compareState(witness.state(), want);
    for (const d of freshDiff.slice(0, 10)) fail(`fresh client differs from a fresh build: ${d}`);
    for (const d of witnessDiff.slice(0, 10)) fail(`long-lived client differs from a fresh build: ${d}`);
    counts.xdsResponses += witness.responses + fresh.responses;

    const endRss = await rssAfterGc();
    const warm = warmRss ?? endRss;
    const growth = (endRss - warm) / warm;
    const resources = Object.values(want).reduce((n, m) => n + Object.keys(m).length, 0);
    const report: SoakReport = {
      seconds: (Date.now() - started) / 1000,
      counts,
      failures,
      rss: {
        warmMiB: mib(warm),
        endMiB: mib(endRss),
        growth: Math.round(growth * 1000) / 1000,
        bounded: growth <= MAX_RSS_GROWTH,
      },
      state: { resources, fresh: freshDiff, witness: witnessDiff },
      passed: false,
    };
    report.passed = failures.length === 0 && report.rss.bounded && freshDiff.length === 0 && witnessDiff.length === 0;
    return report;
  } finally {
    for (const c of closers) c();
    await server.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}
