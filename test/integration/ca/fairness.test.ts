// Per-node fairness of CreateCertificate over real TLS gRPC, as two ztunnels on two nodes call it.
// The signing workers sit behind a gate the test opens one job at a time, so what is checked is
// the order in which calls reach signing, never how long they took.

import * as grpc from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { CertificateAuthority } from '../../../src/ca/signing/authority';
import { CsrVerifierPool, SignJob, VerifyJob, VerifyOutcome } from '../../../src/ca/signing/csr-verifier-pool';
import { servingCertCredentials } from '../../../src/ca/serving-cert/grpc-credentials';
import { registerCaMetrics } from '../../../src/ca/metrics';
import { createNodeFairness, NodeFairness } from '../../../src/ca/node-fairness';
import { createCertificateService } from '../../../src/ca/service';
import { NodeAuthorizer } from '../../../src/security/node-authorizer';
import { loadOrCreateTokenKey, signLocalToken } from '../../../src/security/local-jwt';
import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';
import { makeCsr } from '../../support/ca/fixtures';
import { Harness, ZtunnelLikeClient, readRoot, startHarness } from '../../support/ca/harness';

const id = (sa: string) => `spiffe://cluster.local/ns/default/sa/${sa}`;
const twoNodes = () => [
  pod('istio-system', 'ztunnel-a', 'uid-zt-a', 'ztunnel', 'node-a'),
  pod('istio-system', 'ztunnel-b', 'uid-zt-b', 'ztunnel', 'node-b'),
  pod('default', 'sleep-1', 'uid-sleep', 'sleep', 'node-a'),
  pod('default', 'httpbin-1', 'uid-httpbin', 'httpbin', 'node-b'),
];

function pod(ns: string, name: string, uid: string, sa: string, node: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, uid },
    spec: { serviceAccountName: sa, nodeName: node },
    status: { phase: 'Running' },
  };
}

/** The real worker pool, behind a gate: `lanes` records which node each job was for, in order. */
class GatedPool extends CsrVerifierPool {
  readonly lanes: string[] = [];
  private readonly gates: (() => void)[] = [];
  /** Stands for busy workers and inline budget left: a lone caller's job is signed at once, past the gate. */
  signLoneInline = false;

  override inlineReady(alone: boolean): boolean {
    return alone && this.signLoneInline;
  }

  override verify(job: VerifyJob, sign?: SignJob, lane?: string, alone = false): Promise<VerifyOutcome> {
    this.lanes.push(lane ?? '');
    if (this.inlineReady(alone)) return super.verify(job, sign, lane);
    return new Promise<void>((open) => this.gates.push(open)).then(() => super.verify(job, sign, lane));
  }

  get held(): number {
    return this.gates.length;
  }

  open(): void {
    this.gates.shift()?.();
  }
}

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !check(); i++) await new Promise((r) => setTimeout(r, 2));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

describe('CA fairness by node: two ztunnels, one flooding', () => {
  let h: Harness;
  let tokenA: string;
  let tokenB: string;
  let csrPem: string;

  beforeAll(async () => {
    h = await startHarness();
    const key = loadOrCreateTokenKey(h.stateDir);
    tokenA = signLocalToken(
      key,
      { namespace: 'istio-system', serviceAccount: 'ztunnel', podName: 'ztunnel-a', podUid: 'uid-zt-a' },
      ['istio-ca'],
      3600,
    );
    tokenB = signLocalToken(
      key,
      { namespace: 'istio-system', serviceAccount: 'ztunnel', podName: 'ztunnel-b', podUid: 'uid-zt-b' },
      ['istio-ca'],
      3600,
    );
    csrPem = (await makeCsr()).pem;
  });
  afterAll(() => h.close());

  /** A second CA server beside the harness's, with its tokens, key and TLS identity, signing through a gated pool. */
  async function gatedServer(o: { slots: number; queueLimit?: number }) {
    const pool = new GatedPool(1);
    const authority = new CertificateAuthority(h.ca.authority.current(), pool);
    const metrics = registerCaMetrics(new Registry());
    const store = new MemoryStore();
    store.upsert('Pod', twoNodes());
    const fairness: NodeFairness = createNodeFairness({
      metrics,
      workers: 1,
      slots: o.slots,
      ratePerSecond: 0,
      ...(o.queueLimit ? { queueLimit: o.queueLimit } : {}),
    });
    const caller = {
      local: true,
      store,
      nodeAuthorizer: new NodeAuthorizer(store, {
        trustedAccounts: ['istio-system/ztunnel'],
        trustDomains: () => ['cluster.local'],
      }),
    };
    const service = createCertificateService({
      authority,
      authenticator: h.ca.authenticator,
      clusters: () => caller,
      metrics,
      defaultTtlMs: () => 86400_000,
      maxTtlMs: () => 86400_000,
      fairQueue: fairness.queue,
    });
    const server = new grpc.Server();
    server.addService(service.definition, service.implementation);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', servingCertCredentials(h.ctx.servingCerts), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    const a = new ZtunnelLikeClient(port, readRoot(h));
    const b = new ZtunnelLikeClient(port, readRoot(h));
    return {
      pool,
      fairness,
      metrics,
      callA: () => a.createCertificate(csrPem, { token: tokenA, impersonate: id('sleep') }),
      callB: () => b.createCertificate(csrPem, { token: tokenB, impersonate: id('httpbin') }),
      async close() {
        a.close();
        b.close();
        await new Promise<void>((r) => server.tryShutdown(() => r()));
        fairness.stop();
        await pool.close();
      },
    };
  }

  test("node B's sequential renewals are served between node A's flood of 64 in flight, not behind it", async () => {
    const s = await gatedServer({ slots: 2 });
    let stop = false;
    let callers = 0;
    const flood: Promise<void>[] = [];
    // node A keeps 64 calls in flight: each answer fires the next call.
    const keepOneInFlight = async (): Promise<void> => {
      callers++;
      try {
        while (!stop) await s.callA();
      } finally {
        callers--;
      }
    };
    for (let i = 0; i < 64; i++) flood.push(keepOneInFlight());
    try {
      await until(
        'node A to fill the slots and queue the rest',
        () => s.pool.held === 2 && s.fairness.queue.view().queued === 62,
      );
      const aheadOfB: number[] = [];
      for (let renewal = 0; renewal < 5; renewal++) {
        // Start from rest: both slots held at the gate. A job the previous round let through may
        // still be signing; when it ends, its slot goes to the next node in turn, which under load
        // used to land after B had queued and was then counted as one more call ahead of B.
        await until('both slots to be held at the gate', () => s.pool.held === 2);
        const reachedSigning = s.pool.lanes.length;
        const call = s.callB();
        await until("node B's call to queue", () =>
          s.fairness.queue.view().nodes.some((n) => n.node === 'node-b' && n.queued === 1),
        );
        const queuedA = s.fairness.queue.view().nodes.find((n) => n.node === 'node-a')!.queued;
        expect(queuedA).toBeGreaterThanOrEqual(50);
        // Open the gate one job at a time until node B's call reaches signing.
        while (s.pool.lanes.lastIndexOf('node-b') < reachedSigning) {
          s.pool.open();
          await until(
            'a slot to be handed on',
            () => s.pool.held === 2 || s.pool.lanes.lastIndexOf('node-b') >= reachedSigning,
          );
        }
        aheadOfB.push(s.pool.lanes.lastIndexOf('node-b') - reachedSigning);
        while (
          s.pool.held > 0 &&
          !(await Promise.race([call.then(() => true), new Promise((r) => setTimeout(() => r(false), 5))]))
        )
          s.pool.open();
        await call;
      }
      // With ~60 of node A's calls waiting every time, node B waited for at most one of them.
      expect(Math.max(...aheadOfB)).toBeLessThanOrEqual(1);
      expect(aheadOfB).toHaveLength(5);
    } finally {
      stop = true;
      while (callers > 0) {
        s.pool.open();
        await new Promise((r) => setTimeout(r, 1));
      }
      await Promise.all(flood);
      await s.close();
    }
  });

  test("a lone call the pool signs on the event loop does not wait for a slot: node B is served while node A's flood holds them all", async () => {
    const s = await gatedServer({ slots: 2 });
    const flood = Array.from({ length: 8 }, () => s.callA());
    try {
      await until(
        'node A to fill the slots and queue the rest',
        () => s.pool.held === 2 && s.fairness.queue.view().queued === 6,
      );
      s.pool.signLoneInline = true;
      // Nothing opens the gate meanwhile: a call that waited for a slot would never be answered.
      const b = await Promise.race([
        s.callB(),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error("node B's lone call waited for a slot")), 5000).unref(),
        ),
      ]);
      expect(b.cert_chain.length).toBeGreaterThanOrEqual(2);
      // Served with both slots still held by node A and node A's six calls still waiting.
      expect(s.pool.held).toBe(2);
      expect(s.fairness.queue.view()).toMatchObject({ running: 2, queued: 6 });
      expect(s.pool.lanes.filter((l) => l === 'node-b')).toHaveLength(1);
    } finally {
      s.pool.signLoneInline = false;
      while (s.pool.held > 0 || s.fairness.queue.view().queued > 0) {
        s.pool.open();
        await new Promise((r) => setTimeout(r, 1));
      }
      await Promise.all(flood);
      await s.close();
    }
  });

  test("a full per-node queue answers RESOURCE_EXHAUSTED to that node only; the other node's call is accepted and served", async () => {
    const s = await gatedServer({ slots: 1, queueLimit: 2 });
    try {
      const accepted = [s.callA(), s.callA(), s.callA()];
      await until(
        'one running and two queued for node A',
        () => s.pool.held === 1 && s.fairness.queue.view().queued === 2,
      );
      await expect(s.callA()).rejects.toMatchObject({
        code: grpc.status.RESOURCE_EXHAUSTED,
        details: expect.stringContaining('node node-a already has 2 certificate requests queued') as unknown,
      });
      const other = s.callB();
      await until("node B's call to queue", () => s.fairness.queue.view().queued === 3);
      while (s.pool.held > 0 || s.fairness.queue.view().queued > 0) {
        s.pool.open();
        await new Promise((r) => setTimeout(r, 2));
      }
      for (const r of await Promise.all([...accepted, other])) expect(r.cert_chain.length).toBeGreaterThanOrEqual(2);
      // node B went second: right after the call that held the slot, ahead of node A's queue.
      expect(s.pool.lanes).toEqual(['node-a', 'node-a', 'node-b', 'node-a']);
      const text = await s.metrics.fairnessDenials.get();
      expect(text.values).toEqual([expect.objectContaining({ labels: { reason: 'queue_full' }, value: 1 })]);
    } finally {
      await s.close();
    }
  });
});

describe('CA_NODE_RATE_LIMIT', () => {
  let h: Harness;
  afterAll(() => h.close());

  test('over the limit a node gets RESOURCE_EXHAUSTED, another node is still served, and /debug/ca shows both', async () => {
    h = await startHarness({ env: { CA_NODE_RATE_LIMIT: '1' } });
    h.store.upsert('Pod', twoNodes());
    const key = loadOrCreateTokenKey(h.stateDir);
    const tokenA = signLocalToken(
      key,
      { namespace: 'istio-system', serviceAccount: 'ztunnel', podName: 'ztunnel-a', podUid: 'uid-zt-a' },
      ['istio-ca'],
      3600,
    );
    const tokenB = signLocalToken(
      key,
      { namespace: 'istio-system', serviceAccount: 'ztunnel', podName: 'ztunnel-b', podUid: 'uid-zt-b' },
      ['istio-ca'],
      3600,
    );
    const csr = (await makeCsr()).pem;
    const client = new ZtunnelLikeClient(h.port, readRoot(h));
    try {
      // A burst of NODE_RATE_MIN_BURST (110) passes at 1/s; the next call of that node does not.
      const burst = await Promise.allSettled(
        Array.from({ length: 111 }, () => client.createCertificate(csr, { token: tokenA, impersonate: id('sleep') })),
      );
      const refused = burst.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(burst.filter((r) => r.status === 'fulfilled')).toHaveLength(110);
      expect(refused).toHaveLength(1);
      expect(refused[0]!.reason).toMatchObject({
        code: grpc.status.RESOURCE_EXHAUSTED,
        details: expect.stringContaining('CA_NODE_RATE_LIMIT') as unknown,
      });
      await expect(client.createCertificate(csr, { token: tokenB, impersonate: id('httpbin') })).resolves.toMatchObject(
        { cert_chain: expect.any(Array) as unknown },
      );
      const metrics = await h.metrics.getSingleMetricAsString('citadel_server_csr_throttled_count');
      expect(metrics).toContain('citadel_server_csr_throttled_count{reason="rate_limited"} 1');
      const debug = (await h.debug.get('ca')!({} as never)).body as {
        fairness: { ratePerSecond: number; nodes: { node: string; recentPerSecond: number }[] };
      };
      expect(debug.fairness.ratePerSecond).toBe(1);
      expect(debug.fairness.nodes.map((n) => n.node).sort()).toEqual(['node-a', 'node-b']);
      expect(debug.fairness.nodes.find((n) => n.node === 'node-a')!.recentPerSecond).toBeGreaterThan(0);
    } finally {
      client.close();
    }
  });
});
