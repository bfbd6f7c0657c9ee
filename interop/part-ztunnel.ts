// Part 1: upstream ztunnel against istiod-ts. For one control plane and one node's ztunnel: it
// connects and ACKs, prefetches exactly its node's HBONE identities with chains that verify against
// the root, holds what `istiod-ts xds-client` holds, runs a pod enrolled over ZDS; then istiod-ts
// restarts under it with an edit made while it was down, and (when asked) pods churn under it while
// CPU and memory are sampled.

import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { compareViews, fromXdsClientView, fromZtunnelDump, renderViewDifference } from './compare/ztunnel-view';
import type { ControlPlane } from './control-plane';
import { freePort, SERVER_NAME } from './istiod-ts';
import { podManifest, type Manifest } from './mesh/generate';
import { mib, sampleProcess } from './proc';
import type { Report } from './report';
import { NodeAgent, PodNetns } from './zds';
import { Ztunnel, type ZtunnelPod } from './ztunnel';
import { probeTls, verifyChain } from './openssl';

export interface ScenarioOptions {
  name: string;
  bin: string;
  workDir: string;
  plane: ControlPlane;
  pod: ZtunnelPod;
  /** Pod changes per second and for how long; none skips the churn. */
  churn?: { perSecond: number; seconds: number; namespace: string };
}

const PART = 'ztunnel';
/** How long ztunnel's view gets to equal ours after a change. */
export const CONVERGE_TIMEOUT_MS = 90_000;
/**
 * After a reconnect with the versions it holds, ztunnel receives what changed and nothing else; a
 * server that ignored the versions would send everything again (a share of 1 or more).
 */
export const MAX_RECONNECT_BYTES_SHARE = 0.25;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Dumped {
  workloads?: { uid?: string; node?: string; protocol?: string; namespace?: string; serviceAccount?: string }[];
  certificates?: { identity?: string; state?: string; certChain?: { pem?: string; serialNumber?: string }[] }[];
}

/** Bytes of Address/Authorization responses ztunnel has received, from its own counter. */
function receivedBytes(metrics: string): number {
  let sum = 0;
  for (const line of metrics.split('\n'))
    if (/^istio_xds_message_bytes_total\{/.test(line)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

export class ZtunnelScenario {
  private zt!: Ztunnel;
  private token = '';
  private rootFile = '';

  constructor(
    private readonly report: Report,
    private readonly o: ScenarioOptions,
  ) {}

  private check(check: string, ok: boolean, detail = ''): boolean {
    return this.report.check(PART, this.o.name, check, ok, detail);
  }

  private attempt(check: string, body: () => Promise<string>): Promise<boolean> {
    return this.report.attempt(PART, this.o.name, check, body);
  }

  /** Waits until ztunnel's dump and the xds-client's view agree; returns the differences left. */
  private async converge(timeoutMs = CONVERGE_TIMEOUT_MS): Promise<{ differences: string[]; counts: string }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ours = fromXdsClientView(this.o.plane.server.xdsClientView(this.token, this.o.pod.node, this.rootFile));
      const theirs = fromZtunnelDump(await this.zt.configDump());
      const differences = compareViews(ours, theirs).map(renderViewDifference);
      const counts = `${theirs.workloads.size} workloads, ${theirs.services.size} services, ${theirs.policies.size} policies`;
      if (differences.length === 0 || Date.now() > deadline) return { differences, counts };
      await sleep(1000);
    }
  }

  async run(): Promise<void> {
    const { plane, pod, workDir } = this.o;
    const agent = new NodeAgent();
    const netns = new PodNetns(`istiod-ts-interop-${process.pid}`);
    try {
      mkdirSync(workDir, { recursive: true });
      await plane.start();
      const root = await plane.rootCert();
      this.rootFile = path.join(workDir, 'root-cert.pem');
      writeFileSync(this.rootFile, root);
      this.token = plane.token(pod);
      this.zt = new Ztunnel({
        bin: this.o.bin,
        workDir: path.join(workDir, 'ztunnel'),
        securePort: plane.ports.secure,
        pod,
        rootCert: root,
        token: this.token,
        adminPort: await freePort(),
        statsPort: await freePort(),
      });
      // The node agent is there before ztunnel, as istio-cni is; enrolling a pod needs root and iproute2.
      mkdirSync(path.dirname(this.zt.inpodSocket), { recursive: true });
      await agent.listen(this.zt.inpodSocket);
      await this.zt.start();
      await this.connected();
      await this.sameView('holds what xds-client holds');
      await this.certificates();
      await this.enrolOverZds(agent, netns);
      await this.restart();
      if (this.o.churn) await this.churn(this.o.churn);
      await this.acks();
    } finally {
      await (this.zt as Ztunnel | undefined)?.stop();
      agent.stop();
      netns.remove();
      await plane.close();
    }
  }

  /**
   * One of its node's HBONE pods enrolled as istio-cni enrols it, one whose certificate ztunnel
   * holds: ztunnel asks for a certificate when a connection needs it, not when a pod is enrolled, so
   * a pod whose prefetch its queue dropped shows no certificate until its first connection.
   */
  private async enrolOverZds(agent: NodeAgent, netns: PodNetns): Promise<void> {
    await this.attempt('a pod enrolled over ZDS shows in its config_dump with its certificate', async () => {
      if (process.getuid?.() !== 0) throw new Error('enrolling over ZDS needs root (a network namespace per pod)');
      const dump = (await this.zt.configDump()) as Dumped;
      const held = new Set((dump.certificates ?? []).map((c) => c.identity));
      const candidates = (dump.workloads ?? []).filter(
        (w) => w.node === this.o.pod.node && w.protocol === 'HBONE' && (w.uid ?? '').startsWith('Kubernetes//Pod/'),
      );
      const identity = (w: (typeof candidates)[number]) =>
        `spiffe://cluster.local/ns/${w.namespace ?? ''}/sa/${w.serviceAccount ?? ''}`;
      const chosen = candidates.find((w) => held.has(identity(w)));
      if (!chosen) throw new Error(`no HBONE pod on ${this.o.pod.node} whose certificate ztunnel holds`);
      const name = (chosen.uid ?? '').split('/').pop() ?? '';
      const pod = {
        uid: this.o.plane.podUid(chosen.namespace ?? '', name),
        name,
        namespace: chosen.namespace ?? '',
        serviceAccount: chosen.serviceAccount ?? '',
      };
      netns.create();
      await agent.enrol(pod, netns);
      const want = identity(chosen);
      const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
      for (;;) {
        const now = (await this.zt.configDump()) as Dumped & {
          workloadState?: Record<string, { state?: string; info?: { name?: string; namespace?: string } }>;
        };
        const state = now.workloadState?.[pod.uid];
        const cert = (now.certificates ?? []).find((c) => c.identity === want);
        const ready = await fetch('http://127.0.0.1:15021/healthz/ready').then(
          (r) => r.status,
          () => 0,
        );
        if (state?.state === 'Up' && state.info?.name === pod.name && cert && ready === 200)
          return `${pod.namespace}/${pod.name} (uid ${pod.uid}) is Up in workloadState with ${want}; /healthz/ready answers 200`;
        if (Date.now() > deadline)
          throw new Error(
            `workloadState ${JSON.stringify(state)}, certificate ${cert ? 'held' : 'missing'} for ${want}, readiness ${ready}`,
          );
        await sleep(500);
      }
    });
  }

  private async connected(): Promise<void> {
    await this.attempt('connects over TLS 1.3/h2 with its token and the root istiod-ts wrote', async () => {
      const deadline = Date.now() + 30_000;
      while (this.zt.streams === 0) {
        if (Date.now() > deadline) throw new Error(`no xDS stream: ${this.zt.output.slice(-1500)}`);
        await sleep(200);
      }
      const conns = (await this.o.plane.server.debug('connections')) as { totalClients?: number; clients?: unknown[] };
      // ztunnel's gRPC client offers only h2 over TLS; what the port negotiates is what it got.
      const tls = probeTls(this.o.plane.ports.secure, SERVER_NAME, this.rootFile);
      if (tls.protocol !== 'TLSv1.3' || tls.alpn !== 'h2' || tls.verify !== '0 (ok)')
        throw new Error(`the secure port negotiates ${JSON.stringify(tls)}`);
      return `ztunnel logged "Stream established"; /debug/connections lists ${conns.totalClients ?? conns.clients?.length ?? '?'} client(s); the port negotiates ${tls.protocol}, ALPN ${tls.alpn}, chain verification ${tls.verify} for ${SERVER_NAME}`;
    });
  }

  private async sameView(check: string): Promise<void> {
    await this.attempt(check, async () => {
      const { differences, counts } = await this.converge();
      if (differences.length > 0)
        throw new Error(`${differences.length} differences:\n  ${differences.slice(0, 20).join('\n  ')}`);
      return counts;
    });
  }

  private async certificates(): Promise<void> {
    await this.attempt('prefetches a certificate for every HBONE identity on its node and none elsewhere', async () => {
      const dump = (await this.zt.configDump()) as Dumped;
      const expected = new Set(
        (dump.workloads ?? [])
          .filter((w) => w.node === this.o.pod.node && w.protocol === 'HBONE')
          .map((w) => `spiffe://cluster.local/ns/${w.namespace ?? ''}/sa/${w.serviceAccount ?? ''}`),
      );
      const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
      let before = '';
      for (;;) {
        const certs = ((await this.zt.configDump()) as Dumped).certificates ?? [];
        const held = new Set(certs.map((c) => c.identity ?? ''));
        // Settled: no fetch in flight (every certificate Available) and the same set as at the last look.
        const now = certs
          .map((c) => `${c.identity ?? ''} ${c.state ?? ''}`)
          .sort()
          .join('\n');
        const settled = certs.every((c) => c.state === 'Available') && now === before;
        before = now;
        // What ztunnel's own prefetch queue dropped is not asked for until a pod needs it (docs/compat.md):
        // it logs each drop without the identity, so the drops must at least cover what is missing.
        const missing = [...expected].filter((i) => !held.has(i));
        const dropped = this.zt.droppedPrefetches;
        const extra = [...held].filter((i) => !expected.has(i));
        if (settled && extra.length === 0 && missing.length <= dropped) {
          const note =
            missing.length > 0
              ? `; ${missing.length} not asked for: ztunnel logged ${dropped} dropped prefetches (its queue holds 256)`
              : '';
          return `${held.size} of ${expected.size} identities prefetched${note}; none from another node`;
        }
        if (Date.now() > deadline)
          throw new Error(
            `missing ${missing.slice(0, 5).join(', ')} (${missing.length}, against ${dropped} drops ztunnel logged); extra ${extra.join(', ')}`,
          );
        await sleep(500);
      }
    });
    await this.attempt(
      'every certificate chain in its config_dump verifies with openssl against the root',
      async () => {
        const certs = ((await this.zt.configDump()) as Dumped).certificates ?? [];
        const dir = path.join(this.o.workDir, 'chains');
        mkdirSync(dir, { recursive: true });
        let i = 0;
        for (const c of certs) {
          const pems = (c.certChain ?? []).map((x) => Buffer.from(x.pem ?? '', 'base64').toString('utf8'));
          await verifyChain(dir, `${i++}`, pems, this.rootFile, c.identity ?? '');
        }
        if (certs.length === 0) throw new Error('no certificates to verify');
        return `${certs.length} chains: openssl verify OK, SAN equals the identity`;
      },
    );
  }

  private serials = async () =>
    new Map(
      (((await this.zt.configDump()) as Dumped).certificates ?? []).map((c) => [
        c.identity ?? '',
        (c.certChain ?? []).map((x) => x.serialNumber).join(','),
      ]),
    );

  private async restart(): Promise<void> {
    const { plane } = this.o;
    const before = fromZtunnelDump(await this.zt.configDump());
    const serialsBefore = await this.serials();
    const bytesBefore = receivedBytes(await this.zt.metrics());
    await plane.stop();
    // An edit made while istiod-ts is down: a new pod on another node, outside the mesh.
    const other = [...before.workloads.values()].find((w) => w['node'] !== this.o.pod.node);
    const edit = podManifest({
      name: 'interop-edit',
      namespace: 'legacy',
      nodeName: typeof other?.['node'] === 'string' ? other['node'] : this.o.pod.node,
      hostIP: '172.18.0.250',
      ip: '10.199.0.10',
      labels: { app: 'interop-edit' },
      sa: 'default',
      redirected: false,
      ports: [{ name: 'http', containerPort: 8080 }],
    });
    await plane.putPods('edit', [edit]);
    await sleep(2000);
    const whileDown = fromZtunnelDump(await this.zt.configDump());
    await plane.start();
    const editUid = 'Kubernetes//Pod/legacy/interop-edit';
    let removed: string[] = [];
    const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
    for (;;) {
      const now = fromZtunnelDump(await this.zt.configDump());
      removed = removed.concat([...before.workloads.keys()].filter((k) => !now.workloads.has(k)));
      if (now.workloads.has(editUid) || Date.now() > deadline) break;
      await sleep(250);
    }
    const after = fromZtunnelDump(await this.zt.configDump());
    this.check(
      'keeps everything while istiod-ts is down and while it reconnects',
      whileDown.workloads.size === before.workloads.size && removed.length === 0,
      `${before.workloads.size} workloads before, ${whileDown.workloads.size} while down, none removed${removed.length ? ` — but removed: ${removed.slice(0, 5).join(', ')}` : ''}`,
    );
    this.check('receives the edit made while istiod-ts was down', after.workloads.has(editUid), editUid);
    const bytesAfter = receivedBytes(await this.zt.metrics());
    const share = bytesBefore > 0 ? (bytesAfter - bytesBefore) / bytesBefore : 1;
    this.report.figure(`${this.o.name}: xDS bytes received on reconnect / before`, {
      before: bytesBefore,
      reconnect: bytesAfter - bytesBefore,
      share: Math.round(share * 10000) / 10000,
    });
    this.check(
      'reconnects with the versions it holds (receives only what changed)',
      share <= MAX_RECONNECT_BYTES_SHARE,
      `${bytesAfter - bytesBefore} bytes after the reconnect against ${bytesBefore} for the first sync (${(share * 100).toFixed(2)}%)`,
    );
    const serialsAfter = await this.serials();
    const changed = [...serialsBefore].filter(([id, s]) => serialsAfter.get(id) !== s).map(([id]) => id);
    const issued = await plane.server.metric('citadel_server_success_cert_issuance_count');
    this.check(
      'requests no unchanged certificate again',
      changed.length === 0 && issued === 0,
      `${serialsBefore.size} certificates kept their serials; the restarted istiod-ts issued ${issued}${changed.length ? `; changed: ${changed.join(', ')}` : ''}`,
    );
    await this.sameView('holds what xds-client holds after the restart');
    await plane.putPods('edit', []);
  }

  private async churn(c: NonNullable<ScenarioOptions['churn']>): Promise<void> {
    const { plane } = this.o;
    const nodes = [
      ...new Set([...fromZtunnelDump(await this.zt.configDump()).workloads.values()].map((w) => w['node'])),
    ]
      .filter((n): n is string => typeof n === 'string')
      .sort();
    const pool = 100;
    const pods = (round: number): Manifest[] =>
      Array.from({ length: pool }, (_, i) =>
        podManifest({
          name: `churn-${i}`,
          namespace: c.namespace,
          nodeName: nodes[i % nodes.length] ?? this.o.pod.node,
          hostIP: '172.18.0.250',
          ip: `10.198.${i >> 8}.${(i & 255) + 1}`,
          // Each round changes one in ten of the pods' revision label, which ztunnel sees as canonical_revision.
          labels: { app: 'churn', 'service.istio.io/canonical-revision': `r${Math.floor((round + (i % 10)) / 10)}` },
          sa: 'churn',
          redirected: true,
          ports: [{ name: 'http', containerPort: 8080 }],
        }),
      );
    await plane.putPods('churn', pods(0));
    await this.converge();
    const ztPid = this.zt.pid;
    const cpPid = plane.server.pid;
    if (ztPid === undefined || cpPid === undefined) throw new Error('no pid to sample');
    const start = { zt: sampleProcess(ztPid), cp: sampleProcess(cpPid), at: Date.now() };
    let peakZt = start.zt.rssBytes;
    let peakCp = start.cp.rssBytes;
    // Every 100 ms one round rewrites the group, changing pool/10 pods: pool pod changes a second.
    const tickMs = 100;
    const rounds = Math.round((c.seconds * 1000) / tickMs);
    const perRound = Math.round((c.perSecond * tickMs) / 1000);
    let changes = 0;
    for (let round = 1; round <= rounds; round++) {
      const due = start.at + round * tickMs;
      await sleep(Math.max(0, due - Date.now()));
      await plane.putPods('churn', pods(round));
      changes += perRound;
      if (round % 10 === 0) {
        peakZt = Math.max(peakZt, sampleProcess(ztPid).rssBytes);
        peakCp = Math.max(peakCp, sampleProcess(cpPid).rssBytes);
      }
    }
    const end = { zt: sampleProcess(ztPid), cp: sampleProcess(cpPid), at: Date.now() };
    const seconds = (end.at - start.at) / 1000;
    this.report.figure(`${this.o.name}: churn`, {
      podChanges: changes,
      seconds: Math.round(seconds * 10) / 10,
      ztunnel: {
        cpuSecondsPerSecond: Math.round(((end.zt.cpuSeconds - start.zt.cpuSeconds) / seconds) * 1000) / 1000,
        rssMiB: mib(end.zt.rssBytes),
        peakRssMiB: mib(Math.max(peakZt, end.zt.peakRssBytes)),
      },
      istiodTs: {
        cpuSecondsPerSecond: Math.round(((end.cp.cpuSeconds - start.cp.cpuSeconds) / seconds) * 1000) / 1000,
        rssMiB: mib(end.cp.rssBytes),
        peakRssMiB: mib(Math.max(peakCp, end.cp.peakRssBytes)),
      },
    });
    await this.sameView(`holds what xds-client holds after ${changes} pod changes in ${Math.round(seconds)} s`);
    await plane.putPods('churn', []);
  }

  private async acks(): Promise<void> {
    const rejects = await this.o.plane.server.metric('pilot_total_xds_rejects');
    const types = ['type.googleapis.com/istio.workload.Address', 'type.googleapis.com/istio.security.Authorization'];
    const acks = types.map((t) => `${t.slice(t.lastIndexOf('.') + 1)} ${this.zt.acks.get(t) ?? 0}`);
    const nacks = this.zt.nacks;
    this.check(
      'ACKs Address and Authorization with zero NACKs',
      types.every((t) => (this.zt.acks.get(t) ?? 0) > 0) && nacks.length === 0 && rejects === 0,
      `ACKs: ${acks.join(', ')}; ${nacks.length} NACKs; istiod-ts counted ${rejects} rejects${nacks.length ? `: ${nacks.slice(0, 3).join(' | ')}` : ''}`,
    );
  }
}
