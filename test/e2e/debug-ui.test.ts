// /debug/ui in a real headless Chromium, against the built server on the demo mesh: two ztunnels
// connect (one ACKs everything, one NACKs with markup in its message), a certificate is issued and
// one refused, and the page must show all of it, as text, with no console error or failed request.
// UPDATE_SCREENSHOT=1 also writes docs/debug-ui.png.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { parseAllDocuments } from 'yaml';
import { AdsClient, ztunnelNodeId, type DeltaResponse } from '../../src/cli/ads-client';
import { runXdsCertCommand } from '../../src/cli/xds-cert';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL } from '../../src/contract/xds-resources';
import { loadOrCreateTokenKey, signLocalToken } from '../../src/security/local-jwt';
import { deterministicUid } from '../../src/store/local/manifest';
import { launchChromium, watchProblems, type PageProblems } from '../support/chromium';
import { DEMO, localServeArgs, ServerProcess, waitForStatus } from '../support/cli';

const SCREENSHOT = join(__dirname, '..', '..', 'docs', 'debug-ui.png');
/** Markup a ztunnel could put in a NACK: the page must show it as text, never run it. */
const HOSTILE_NACK = '<img src=x onerror="document.title=\'pwned\'"> rejected authorization';

interface DemoZtunnel {
  pod: string;
  ip: string;
  node: string;
}
const ZTUNNEL_A: DemoZtunnel = { pod: 'ztunnel-7k2xq', ip: '10.244.1.2', node: 'node-a' };
const ZTUNNEL_B: DemoZtunnel = { pod: 'ztunnel-m9p4d', ip: '10.244.2.2', node: 'node-b' };
const nodeId = (z: DemoZtunnel) => ztunnelNodeId(z.ip, z.pod, 'istio-system');

interface Manifest {
  kind?: string;
  metadata?: { name?: string };
  spec?: { nodeName?: string };
}

/** The objects of one file of examples/demo. */
function demo(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(join(DEMO, file), 'utf8')).map((d) => (d.toJS() ?? {}) as Manifest);
}

/** The demo's Nodes, sorted by name. */
function demoNodes(): string[] {
  return demo('cluster.yaml')
    .filter((o) => o.kind === 'Node' && o.metadata?.name)
    .map((o) => o.metadata?.name ?? '')
    .sort();
}

/** The demo's bookinfo pods by node. */
function demoPodsByNode(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const pod of demo('bookinfo-pods.yaml')) {
    if (pod.kind !== 'Pod' || !pod.metadata?.name || !pod.spec?.nodeName) continue;
    out.set(pod.spec.nodeName, [...(out.get(pod.spec.nodeName) ?? []), pod.metadata.name]);
  }
  return out;
}

/** One attribute of every element a locator matches, in document order. */
async function attributes(locator: Locator, name: string): Promise<(string | null)[]> {
  return Promise.all((await locator.all()).map((l) => l.getAttribute(name)));
}

let state: string;
let server: ServerProcess;
let http: number;
let grpcPort: number;
let browser: Browser | undefined;
const clients: AdsClient[] = [];

function token(z: DemoZtunnel): string {
  return signLocalToken(
    loadOrCreateTokenKey(state),
    {
      namespace: 'istio-system',
      serviceAccount: 'ztunnel',
      podName: z.pod,
      podUid: deterministicUid('Pod', 'istio-system', z.pod),
      nodeName: z.node,
    },
    ['istio-ca'],
    3600,
  );
}

/** A wildcard ztunnel stream for both types; `nack` decides which responses it rejects. */
function connect(z: DemoZtunnel, nack: (r: DeltaResponse) => string | undefined = () => undefined): AdsClient {
  const client = new AdsClient({
    address: `127.0.0.1:${grpcPort}`,
    rootCertPem: readFileSync(join(state, 'root-cert.pem'), 'utf8'),
    serverName: 'istiod.istio-system.svc',
    token: token(z),
    clusterId: 'Kubernetes',
    node: {
      id: nodeId(z),
      metadata: {
        NAME: z.pod,
        NAMESPACE: 'istio-system',
        INSTANCE_IPS: z.ip,
        NODE_NAME: z.node,
        CLUSTER_ID: 'Kubernetes',
      },
    },
    review: nack,
  });
  client.send({ type_url: ADDRESS_TYPE_URL });
  client.send({ type_url: AUTHORIZATION_TYPE_URL });
  clients.push(client);
  return client;
}

async function requestCert(z: DemoZtunnel, sa: string): Promise<number> {
  return runXdsCertCommand(
    [
      '--identity',
      `spiffe://cluster.local/ns/bookinfo/sa/${sa}`,
      '--addr',
      `127.0.0.1:${grpcPort}`,
      '--rootCert',
      join(state, 'root-cert.pem'),
      '--serverName',
      'istiod.istio-system.svc',
      '--token',
      token(z),
    ],
    () => undefined,
    () => undefined,
  );
}

interface ZtunnelsView {
  clients: { node: string; types: { typeUrl: string; lastAck?: unknown; lastNack?: unknown }[] }[];
}

/** Until both ztunnels have answered both types: A with ACKs, B with a NACK for authorizations. */
async function waitForAnswers(): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const view = (await (await fetch(`http://127.0.0.1:${http}/debug/ztunnels`)).json()) as ZtunnelsView;
    const of = (z: DemoZtunnel, url: string) =>
      view.clients.find((c) => c.node === nodeId(z))?.types.find((t) => t.typeUrl === url);
    if (
      of(ZTUNNEL_A, ADDRESS_TYPE_URL)?.lastAck &&
      of(ZTUNNEL_A, AUTHORIZATION_TYPE_URL)?.lastAck &&
      of(ZTUNNEL_B, ADDRESS_TYPE_URL)?.lastAck &&
      of(ZTUNNEL_B, AUTHORIZATION_TYPE_URL)?.lastNack
    )
      return;
    if (Date.now() > deadline) throw new Error(`ztunnels did not answer in time: ${JSON.stringify(view)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), 'istiod-ts-ui-'));
  server = ServerProcess.start(localServeArgs(state));
  http = await server.port('http');
  grpcPort = await server.port('secure-grpc');
  await waitForStatus(`http://127.0.0.1:${http}/ready`, 200);
  connect(ZTUNNEL_A);
  connect(ZTUNNEL_B, (r) => (r.type_url === AUTHORIZATION_TYPE_URL ? HOSTILE_NACK : undefined));
  expect(await requestCert(ZTUNNEL_A, 'bookinfo-productpage')).toBe(0);
  // ratings runs on node-b only, so node-a's ztunnel may not have its identity.
  expect(await requestCert(ZTUNNEL_A, 'bookinfo-ratings')).toBe(1);
  await waitForAnswers();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await browser?.close();
  await server.stop();
  rmSync(state, { recursive: true, force: true });
});

describe('/debug/ui in headless Chromium', () => {
  let page: Page;
  let problems: PageProblems;

  beforeAll(async () => {
    if (!browser) throw new Error('chromium did not start');
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    problems = watchProblems(page);
    const res = await page.goto(`http://127.0.0.1:${http}/debug/ui`);
    expect(res?.headers()['content-security-policy']).toContain("default-src 'none'");
    await page.locator('body[data-loaded="true"]').waitFor({ timeout: 10_000 });
  }, 30_000);

  afterAll(async () => {
    await page.close();
  });

  it("lists the demo mesh's nodes with their connected ztunnel's sync state", async () => {
    expect(demoNodes()).toEqual(expect.arrayContaining([ZTUNNEL_A.node, ZTUNNEL_B.node]));
    expect(await attributes(page.locator('#nodes tbody tr'), 'data-node')).toEqual(demoNodes());
    const nodeA = page.locator('#nodes tr[data-node="node-a"] td');
    expect(await nodeA.allTextContents()).toEqual(['node-a', 'eu-west1-a', '1', 'SYNCED', expect.any(String)]);
    expect(await page.locator('#nodes tr[data-node="node-b"] td').nth(3).textContent()).toBe('ERROR');
  });

  it('shows each connected ztunnel per type: SYNCED after an ACK, ERROR after a NACK', async () => {
    const state = (z: DemoZtunnel, type: string) =>
      page.locator(`#ztunnels tr[data-ztunnel="${nodeId(z)}"][data-type="${type}"] .state`).textContent();
    expect(await state(ZTUNNEL_A, 'Address')).toBe('SYNCED');
    expect(await state(ZTUNNEL_A, 'Authorization')).toBe('SYNCED');
    expect(await state(ZTUNNEL_B, 'Address')).toBe('SYNCED');
    expect(await state(ZTUNNEL_B, 'Authorization')).toBe('ERROR');
  });

  it("lists each node's workloads, the demo's bookinfo pods among them", async () => {
    for (const [node, pods] of demoPodsByNode()) {
      const shown = await attributes(page.locator(`#workloads details[data-node="${node}"] tbody tr`), 'data-workload');
      for (const pod of pods) expect(shown).toContain(`bookinfo/${pod}`);
    }
  });

  it('shows certificates issued per minute and refusals by reason', async () => {
    expect(await page.locator('#cert-totals').textContent()).toBe('issued: 1, refused: 1');
    expect(await page.locator('#certs .bar').count()).toBe(15);
    const refusals = await page.locator('#denials tbody tr td').allTextContents();
    expect(refusals[0]).toBe('authentication');
    expect(refusals[2]).toBe('1');
  });

  it('shows the push latency histogram', async () => {
    expect(await page.locator('#latency').textContent()).toMatch(/^[1-9][0-9]* pushes, mean /);
    expect(await page.locator('#latency .bar').count()).toBeGreaterThan(1);
  });

  it("lists the recent NACK with the ztunnel's message as text, never as markup", async () => {
    const cells = await page.locator('#nacks tbody tr td').allTextContents();
    expect(cells.slice(1, 4)).toEqual(['node-b', nodeId(ZTUNNEL_B), 'Authorization']);
    expect(cells[5]).toBe(HOSTILE_NACK);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.title()).toBe('istiod-ts status');
  });

  it('logs no console error and no request fails', async () => {
    if (process.env['UPDATE_SCREENSHOT'] === '1') await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(problems).toEqual({ consoleErrors: [], failedRequests: [] });
  });
});
