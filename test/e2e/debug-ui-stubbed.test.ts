// /debug/ui against stub debug pages served by the real router and HTTP handler, in headless
// Chromium. Its bounds: it follows continue tokens and stops at UI_MAX_WORKLOAD_PAGES /
// UI_MAX_NODE_PAGES, loads the workloads of the first UI_OPEN_NODES nodes only until another is
// opened, and lists at most UI_MAX_NACKS NACKs, newest first. And a page that fails is named at
// the top while the others still show.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { Registry } from 'prom-client';
import { pageResponse, takePage, type PageRequest } from '../../src/contract/debug-page';
import type { DebugRequest } from '../../src/contract/host';
import { DebugRouter } from '../../src/server/debug';
import { registerDebugUi } from '../../src/server/debug-ui';
import {
  UI_MAX_NACKS,
  UI_MAX_NODE_PAGES,
  UI_MAX_WORKLOAD_PAGES,
  UI_OPEN_NODES,
} from '../../src/server/debug-ui-limits';
import { httpHandler } from '../../src/server/http';
import { EventLoopLiveness } from '../../src/server/liveness';
import { ReadinessTracker } from '../../src/server/readiness';
import { launchChromium, watchProblems, type PageProblems } from '../support/chromium';

/** Nodes per stub page: small, so the node list itself takes several pages. */
const NODES_PER_PAGE = 2;
/** More nodes than the page follows pages for, and more than it opens. */
const NODE_COUNT = NODES_PER_PAGE * UI_MAX_NODE_PAGES + 3;
const nodeName = (i: number) => `node-${String(i).padStart(3, '0')}`;
const NODES = Array.from({ length: NODE_COUNT }, (_, i) => nodeName(i));
/** node-000 has a page after every page; node-001 three pages of one workload; the rest one each. */
const ENDLESS = nodeName(0);
const THREE_PAGES = nodeName(1);

const workloadRequests: string[] = [];
/** Makes /debug/ztunnels answer 500. */
let ztunnelsFail = false;
let server: http.Server;
let base: string;
let browser: Browser;
let page: Page;
let problems: PageProblems;
const stops: (() => void | Promise<void>)[] = [];

function workloadPage(req: DebugRequest) {
  const node = req.query.get('node') ?? '';
  workloadRequests.push(node);
  const n = Number(req.query.get('continue') ?? '0');
  const item = { namespace: 'shop', name: `${node}-w${n}`, addresses: ['10.0.0.1'] };
  const more = node === ENDLESS || (node === THREE_PAGES && n < 2);
  return pageResponse(req, [item], more ? String(n + 1) : undefined);
}

function nodePage(req: DebugRequest) {
  const token = req.query.get('continue');
  const pr: PageRequest = { limit: NODES_PER_PAGE, after: token ?? undefined };
  const { items, next } = takePage(NODES, pr, (name) => ({ metadata: { name } }));
  return pageResponse(req, { objects: items }, next === undefined ? undefined : items.at(-1)?.metadata.name);
}

/** UI_MAX_NACKS + 5 NACKs from one ztunnel, one per type, at increasing times. */
function ztunnels() {
  const types = Array.from({ length: UI_MAX_NACKS + 5 }, (_, i) => ({
    typeUrl: `type.googleapis.com/test.T${i}`,
    lastNonceSent: `n${i}`,
    pendingNames: 0,
    lastNack: { nonce: `n${i}`, at: new Date(Date.UTC(2026, 11, 3, 10, 0, i)).toISOString(), message: `bad ${i}` },
  }));
  return { clients: [{ node: 'ztunnel~1', nodeName: ENDLESS, connectedSince: '2026-12-03T10:00:00.000Z', types }] };
}

beforeAll(async () => {
  const debug = new DebugRouter();
  registerDebugUi({ debug, metrics: new Registry(), onShutdown: (h) => stops.push(h) });
  debug.add('config', 'stub nodes', nodePage);
  debug.add('ztunnels', 'stub ztunnels', () =>
    ztunnelsFail ? { status: 500, body: { error: 'stub failure' } } : { body: ztunnels() },
  );
  debug.add('syncz', 'stub sync status', () => ({ body: [] }));
  debug.add('ambient/workloads', 'stub workloads', workloadPage);
  server = http.createServer(
    httpHandler({
      readiness: new ReadinessTracker(),
      liveness: new EventLoopLiveness(),
      debug,
      allowRemoteDebug: false,
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
  page = await browser.newPage();
  problems = watchProblems(page);
  await page.goto(`${base}/debug/ui`);
  await page.locator('body[data-loaded="true"]').waitFor({ timeout: 10_000 });
}, 30_000);

afterAll(async () => {
  await browser.close();
  for (const stop of stops) await stop();
  await new Promise((r) => server.close(r));
});

test(`follows the node list for ${UI_MAX_NODE_PAGES} pages and no further`, async () => {
  const shown = await Promise.all(
    (await page.locator('#nodes tbody tr').all()).map((r) => r.getAttribute('data-node')),
  );
  expect(shown).toEqual(NODES.slice(0, NODES_PER_PAGE * UI_MAX_NODE_PAGES));
});

test(`loads the workloads of the first ${UI_OPEN_NODES} nodes and of the others only when opened`, async () => {
  const first = NODES.slice(0, UI_OPEN_NODES);
  expect(new Set(workloadRequests)).toEqual(new Set(first));
  const later = NODES[UI_OPEN_NODES]!;
  await page.locator(`#workloads details[data-node="${later}"] summary`).click();
  await page.locator(`#workloads details[data-node="${later}"] tbody tr`).waitFor();
  expect(workloadRequests).toContain(later);
});

test(`follows continue tokens for ${UI_MAX_WORKLOAD_PAGES} pages, then says the list is cut`, async () => {
  const endless = page.locator(`#workloads details[data-node="${ENDLESS}"]`);
  expect(await endless.locator('tbody tr').count()).toBe(UI_MAX_WORKLOAD_PAGES);
  expect(await endless.locator('p.empty').textContent()).toBe(
    `only the first ${UI_MAX_WORKLOAD_PAGES} pages are shown`,
  );
  const three = page.locator(`#workloads details[data-node="${THREE_PAGES}"]`);
  expect(await three.locator('tbody tr').allTextContents()).toHaveLength(3);
  expect(await three.locator('p.empty').count()).toBe(0);
});

test(`lists the ${UI_MAX_NACKS} newest NACKs, newest first`, async () => {
  const rows = page.locator('#nacks tbody tr');
  expect(await rows.count()).toBe(UI_MAX_NACKS);
  expect(await rows.first().locator('td').last().textContent()).toBe(`bad ${UI_MAX_NACKS + 4}`);
  expect(await rows.last().locator('td').last().textContent()).toBe('bad 5');
});

test('logs no console error and no request fails', () => {
  expect(problems).toEqual({ consoleErrors: [], failedRequests: [] });
});

test('a debug page that fails is named at the top, and the sections from the other pages still show', async () => {
  ztunnelsFail = true;
  const broken = await browser.newPage();
  const seen = watchProblems(broken);
  try {
    await broken.goto(`${base}/debug/ui`);
    await broken.locator('body[data-loaded="true"]').waitFor({ timeout: 10_000 });
    expect(await broken.locator('#errors p.error').allTextContents()).toEqual(['/debug/ztunnels answered 500']);
    expect(await broken.locator('#ztunnels').textContent()).toBe('not available (see above)');
    expect(await broken.locator('#nodes tbody tr').count()).toBe(NODES_PER_PAGE * UI_MAX_NODE_PAGES);
    expect(await broken.locator(`#workloads details[data-node="${THREE_PAGES}"] tbody tr`).count()).toBe(3);
    expect(seen.failedRequests).toEqual([`${base}/debug/ztunnels: 500`]);
  } finally {
    ztunnelsFail = false;
    await broken.close();
  }
});
