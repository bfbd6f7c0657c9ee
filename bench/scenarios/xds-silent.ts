// A new ztunnel's full sync beside silent ones: 50 streams that subscribe, read everything and
// never ACK, on a mesh of 8,000 pods whose full Address response (~2 MB) needs a full-sync slot.
// The same new-ztunnel sync with no silent streams, in the same run, is the reference. Then the
// same beside 16 streams that never read at all, subscribing at once just before it: twice the
// full-sync slots, so without the slot-stall release it would wait two stall timeouts (~10 s).

import { ChildProcess, fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Registry } from 'prom-client';
import { logs } from '../../src/log/logger';
import { ADDRESS_TYPE_URL } from '../../src/contract/xds-resources';
import { XdsMetrics } from '../../src/xds/protocol/metrics';
import { SLOT_STALL_RELEASE_MS } from '../../src/xds/protocol/drain';
import { GATED_FULL_SYNC_BYTES } from '../../src/xds/protocol/push';
import { XdsServer, XdsServerSettings } from '../../src/xds/server';
import { encodeResponseBody } from '../../src/xds/wire/wire';
import { SERVER_NAME, makeTestPki } from '../../test/support/tls';
import { serveAds, ztunnelTokenAuthenticator } from '../ads-server';
import { Measurement, Scenario, median } from '../scenario';
import type { WorkerConfig, WorkerMessage } from '../xds-client-worker';
import type { SilentWorkerConfig } from '../xds-silent-worker';
import { SyntheticCache } from '../xds-synthetic-cache';

const WORKLOADS = Number(process.env['XDS_SILENT_BENCH_WORKLOADS'] ?? 8_000);
const SILENT = Number(process.env['XDS_SILENT_BENCH_STREAMS'] ?? 50);
const DEAF = Number(process.env['XDS_SILENT_BENCH_DEAF'] ?? 16);
/** Overrides SLOT_STALL_RELEASE_MS (e.g. 5000, the stall timeout, shows the sync without the early release). */
const SLOT_STALL_MS = process.env['XDS_SILENT_BENCH_SLOT_STALL_MS'];
const RUNS = 7;
/** Each run beside non-readers starts them afresh and waits for them to go. */
const DEAF_RUNS = 5;
const TARGET_S = 5;
/** Before the fix a new client waited for a slot held 30 s; give up well after that. */
const SYNC_TIMEOUT_MS = 120_000;
const TOKEN = 'bench-token';

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const authenticator = ztunnelTokenAuthenticator(TOKEN);

async function until(cond: () => boolean, timeoutMs: number, what: string, errors: string[]): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}${errors.length ? `; client errors: ${errors.slice(0, 3).join('; ')}` : ''}`,
      );
    await sleep(10);
  }
}

async function run(): Promise<Measurement[]> {
  logs.setLevel('xds', 'warn');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xds-silent-bench-'));
  const pki = makeTestPki();
  const caFile = path.join(dir, 'ca.crt');
  fs.writeFileSync(caFile, pki.caPem);
  const cache = new SyntheticCache(WORKLOADS);
  const settings: XdsServerSettings = { debounce: { after: 100, max: 10_000 }, auth: true, identityCheck: true };
  if (SLOT_STALL_MS !== undefined) settings.flowControl = { slotStallMs: Number(SLOT_STALL_MS) };
  const xds = new XdsServer(cache, authenticator, settings, new XdsMetrics(new Registry()));
  const { server, port } = await serveAds(xds, pki);
  const base = { port, caFile, serverName: SERVER_NAME, token: TOKEN };
  const children: ChildProcess[] = [];
  const synced = new Map<number, number>();
  const errors: string[] = [];
  const listen = (child: ChildProcess) =>
    child.on('message', (m: WorkerMessage) => {
      if (m.t === 'synced') synced.set(m.stream, m.at);
      else if (m.t === 'error' && errors.length < 20) errors.push(m.message);
    });

  /**
   * One new ztunnel (a fresh process, connected on 'go' once `before` has set the scene): seconds
   * from connecting to both full responses.
   */
  const newZtunnel = async (index: number, before: () => Promise<void> = () => sleep(100)): Promise<number> => {
    const cfg: WorkerConfig = { ...base, streams: 1, firstIndex: index, waitForGo: true };
    const child = fork(path.join(__dirname, '..', 'xds-client-worker.js'), [JSON.stringify(cfg)], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    children.push(child);
    listen(child);
    await new Promise<void>((res) => child.on('message', (m: WorkerMessage) => m.t === 'ready' && res()));
    await before();
    const at = now();
    child.send({ t: 'go' });
    await until(() => synced.has(index), SYNC_TIMEOUT_MS, 'the new ztunnel to sync', errors);
    child.kill();
    return (synced.get(index)! - at) / 1000;
  };

  try {
    const fullBytes = encodeResponseBody({
      typeUrl: ADDRESS_TYPE_URL,
      resources: [...cache.all(ADDRESS_TYPE_URL)],
      removed: [],
    }).length;
    const reference: number[] = [];
    for (let r = 0; r < RUNS; r++) reference.push(await newZtunnel(1_000 + r));

    const silentCfg: SilentWorkerConfig = { ...base, streams: SILENT, firstIndex: 10_000 };
    const silentChild = fork(path.join(__dirname, '..', 'xds-silent-worker.js'), [JSON.stringify(silentCfg)], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    children.push(silentChild);
    listen(silentChild);
    const silentStart = now();
    const silentSynced = () => [...synced.keys()].filter((k) => k >= 10_000).length;
    await until(
      () => silentSynced() >= SILENT,
      SYNC_TIMEOUT_MS,
      `${SILENT} silent streams to receive their full sync`,
      errors,
    );
    const silentSeconds =
      (Math.max(...[...synced].filter(([k]) => k >= 10_000).map(([, at]) => at)) - silentStart) / 1000;
    const unanswered = xds.debugSyncz().clients.filter((c) => c.types.every((t) => t.lastAck === undefined)).length;

    const beside: number[] = [];
    for (let r = 0; r < RUNS; r++) beside.push(await newZtunnel(2_000 + r));
    const value = median(beside);
    const ref = median(reference);

    // Streams that never read, all subscribing at once: every slot taken and as many queued.
    const deafConnected = () => xds.debugSyncz().clients.filter((c) => c.node.includes('ztunnel-deaf-')).length;
    const besideDeaf: number[] = [];
    const keptDeaf: number[] = [];
    for (let r = 0; r < DEAF_RUNS; r++) {
      let deafChild: ChildProcess | undefined;
      const startDeaf = async () => {
        const cfg: SilentWorkerConfig = { ...base, streams: DEAF, firstIndex: 20_000 + r * 100, read: false };
        deafChild = fork(path.join(__dirname, '..', 'xds-silent-worker.js'), [JSON.stringify(cfg)], {
          stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        });
        children.push(deafChild);
        await until(
          () => deafConnected() >= DEAF,
          SYNC_TIMEOUT_MS,
          `${DEAF} streams that never read to subscribe`,
          errors,
        );
      };
      besideDeaf.push(await newZtunnel(3_000 + r, startDeaf));
      keptDeaf.push(deafConnected());
      deafChild!.kill();
      await until(
        () => deafConnected() === 0 && xds.debugSyncz().fullSyncs.stalled === 0,
        SYNC_TIMEOUT_MS,
        'the streams that never read to go',
        errors,
      );
    }
    const deafValue = median(besideDeaf);
    const gate = xds.debugSyncz().fullSyncs;
    const slotStallMs = SLOT_STALL_MS ?? SLOT_STALL_RELEASE_MS;
    return [
      {
        metric: `new ztunnel's full sync beside ${SILENT} silent streams (subscribed, never ACK), ${WORKLOADS} pods (${(fullBytes / 1e6).toFixed(1)} MB Address response, slot needed: ${fullBytes >= GATED_FULL_SYNC_BYTES})`,
        value,
        unit: 's',
        runs: beside,
        reference: { metric: 'the same with no silent streams', value: ref, ratio: value / ref },
        target: `< ${TARGET_S} s`,
        met: value < TARGET_S,
      },
      {
        metric: `new ztunnel's full sync with no silent streams (the reference)`,
        value: ref,
        unit: 's',
        runs: reference,
      },
      {
        metric: `new ztunnel's full sync beside ${DEAF} streams that never read, subscribed at once just before it (${gate.limit} slots, slot-stall release ${slotStallMs} ms)`,
        value: deafValue,
        unit: 's',
        runs: besideDeaf,
        reference: { metric: 'the same with no silent streams', value: ref, ratio: deafValue / ref },
        target: `< ${TARGET_S} s`,
        met: deafValue < TARGET_S,
      },
      {
        metric: `streams that never read still connected (not yet cut) when the new ztunnel had synced`,
        value: median(keptDeaf),
        unit: 'streams',
        runs: keptDeaf,
      },
      {
        metric: `${SILENT} silent streams connecting at once: until the last has both full responses`,
        value: silentSeconds,
        unit: 's',
      },
      { metric: `silent streams still connected and never answered when measured`, value: unanswered, unit: 'streams' },
    ];
  } finally {
    for (const c of children) c.kill();
    xds.close();
    server.forceShutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const scenario: Scenario = {
  name: 'xds-silent',
  description: `Delta xDS: a new ztunnel's full sync beside ${SILENT} streams that never ACK, ${WORKLOADS} pods (XDS_SILENT_BENCH_STREAMS / XDS_SILENT_BENCH_WORKLOADS override)`,
  run,
};

export default scenario;
