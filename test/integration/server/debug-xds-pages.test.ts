// /debug/connections and /debug/push_status against a real xDS server with ztunnel-like clients.

import { DEBUG_CONTINUE_HEADER } from '../../../src/contract/debug-page';
import type { DebugResponse } from '../../../src/contract/host';
import { DebugRouter } from '../../../src/server/debug';
import { registerXdsDebug, type ConnectionsPage } from '../../../src/server/debug-xds';
import { PUSH_STATUS_HISTORY, REJECTS_KEY, type PushStatus } from '../../../src/xds/debug/push-status';
import { demoCache, FakeCache } from '../../support/xds/fake-cache';
import { Harness, startHarness } from '../xds/fixtures/harness';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL, ofType, TestZtunnel } from '../xds/fixtures/test-client';

let cache: FakeCache;
let harness: Harness;
let debug: DebugRouter;
const clients: TestZtunnel[] = [];

function ztunnel(opts: ConstructorParameters<typeof TestZtunnel>[1] = {}): TestZtunnel {
  const c = new TestZtunnel(harness, opts);
  clients.push(c);
  return c;
}

async function get(name: string, query = ''): Promise<DebugResponse> {
  return debug.handle(name, { path: `/debug/${name}`, query: new URLSearchParams(query), method: 'GET', body: '' });
}

beforeEach(async () => {
  cache = demoCache('proto');
  harness = await startHarness(cache);
  debug = new DebugRouter();
  registerXdsDebug(debug, harness.xds);
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await harness.close();
});

describe('/debug/connections', () => {
  test("lists each connected client in istiod's AdsClients shape: totalClients, connectionId, connectedAt, address", async () => {
    const a = ztunnel({ nodeName: 'node-1' });
    const b = ztunnel({ nodeName: 'node-2', nodeId: 'ztunnel~10.0.0.101~ztunnel-def.istio-system~istio-system.svc' });
    await Promise.all([a.next(ofType(AUTHORIZATION_TYPE_URL)), b.next(ofType(AUTHORIZATION_TYPE_URL))]);
    const page = (await get('connections')).body as ConnectionsPage;
    expect(page.totalClients).toBe(2);
    expect(page.clients.map((c) => c.connectionId.replace(/-[0-9a-z]+$/, ''))).toEqual([
      'ztunnel-abc.istio-system',
      'ztunnel-def.istio-system',
    ]);
    for (const c of page.clients) {
      expect(new Date(c.connectedAt).getTime()).toBeLessThanOrEqual(Date.now());
      expect(c.address).toMatch(/127\.0\.0\.1:\d+$/);
    }
    expect(page.clients.map((c) => c.metadata?.['NODE_NAME'])).toEqual(['node-1', 'node-2']);
  });

  test('pages by limit and continue, with totalClients counting every client on every page', async () => {
    const zs = [0, 1, 2].map((i) =>
      ztunnel({ nodeId: `ztunnel~10.0.0.${i}~zt-${i}.istio-system~istio-system.svc`, nodeName: `node-${i}` }),
    );
    await Promise.all(zs.map((z) => z.next(ofType(AUTHORIZATION_TYPE_URL))));
    const first = await get('connections', 'limit=2');
    const token = first.headers?.[DEBUG_CONTINUE_HEADER];
    expect(token).toBeDefined();
    const second = await get('connections', `limit=2&continue=${token}`);
    expect(second.headers?.[DEBUG_CONTINUE_HEADER]).toBeUndefined();
    const pages = [first.body, second.body] as ConnectionsPage[];
    expect(pages.map((p) => p.totalClients)).toEqual([3, 3]);
    expect(pages.flatMap((p) => p.clients.map((c) => c.metadata?.['NODE_NAME']))).toEqual([
      'node-0',
      'node-1',
      'node-2',
    ]);
  });
});

describe('/debug/push_status', () => {
  test('records the last push: version, trigger, resources per type, clients reached and timings', async () => {
    const zt = ztunnel();
    await zt.next(ofType(AUTHORIZATION_TYPE_URL));
    cache.setWorkload({ uid: 'Kubernetes//Pod/default/d', ip: '10.0.0.4', node: 'node-1' });
    cache.setPolicy('default', 'later').commit();
    await zt.next(ofType(AUTHORIZATION_TYPE_URL));
    const status = (await get('push_status')).body as PushStatus;
    expect(status.totalPushes).toBe(1);
    expect(status.lastPush).toMatchObject({ trigger: 'config', full: false, clients: 1 });
    expect(status.lastPush?.resources).toEqual({ address: 1, authorization: 1 });
    expect(status.lastPush?.version).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\/1$/);
    expect(status.lastPush?.durationMs).toBeGreaterThanOrEqual(0);
    expect(status.recentPushes).toEqual([status.lastPush]);
    expect(status[REJECTS_KEY]).toEqual({});
  });

  test('a full push (meshConfig changed) counts every resource held per type', async () => {
    const zt = ztunnel();
    await zt.next(ofType(AUTHORIZATION_TYPE_URL));
    harness.xds.fullPush();
    await zt.next(ofType(ADDRESS_TYPE_URL));
    const status = (await get('push_status')).body as PushStatus;
    expect(status.lastPush).toMatchObject({ trigger: 'meshConfig', full: true });
    expect(status.lastPush?.resources).toEqual({
      address: [...cache.all(ADDRESS_TYPE_URL)].length,
      authorization: [...cache.all(AUTHORIZATION_TYPE_URL)].length,
    });
  });

  test(`keeps the last ${PUSH_STATUS_HISTORY} pushes, newest first`, async () => {
    for (let i = 0; i < PUSH_STATUS_HISTORY + 3; i++)
      harness.xds.pushStatus.record(
        { changes: new Map([[ADDRESS_TYPE_URL, new Set([`n${i}`])]]), full: false, eventAt: 0 },
        0,
        0,
        0,
        cache,
      );
    const status = (await get('push_status')).body as PushStatus;
    expect(status.totalPushes).toBe(PUSH_STATUS_HISTORY + 3);
    expect(status.recentPushes).toHaveLength(PUSH_STATUS_HISTORY);
    expect(status.recentPushes[0]?.version).toMatch(new RegExp(`/${PUSH_STATUS_HISTORY + 3}$`));
  });

  test("a client whose last answer is a NACK is listed under istiod's pilot_total_xds_rejects with its message", async () => {
    const zt = ztunnel({
      review: (r) => (r.type_url === ADDRESS_TYPE_URL ? 'Kubernetes//Pod/default/a: unsupported field' : undefined),
    });
    await zt.next(ofType(AUTHORIZATION_TYPE_URL));
    await zt.sync();
    const status = (await get('push_status')).body as PushStatus;
    const rejects = Object.entries(status[REJECTS_KEY]);
    expect(rejects).toHaveLength(1);
    const [key, error] = rejects[0] ?? [];
    expect(key).toMatch(/^ztunnel-abc\.istio-system-[0-9a-z]+\/address$/);
    expect(error).toEqual({
      proxy: 'ztunnel~10.0.0.100~ztunnel-abc.istio-system~istio-system.svc.cluster.local',
      message: 'Kubernetes//Pod/default/a: unsupported field',
    });
    expect(status.rejectsTotal).toBe(1);
  });
});
