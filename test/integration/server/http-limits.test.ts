// The plain HTTP listeners (httpAddr: /ready and /debug/; monitoringAddr: /metrics) keep the same
// deadlines and caps as the webhook, through node:http's own settings: checked here with the real
// handlers and shortened limits.

import * as http from 'node:http';
import * as net from 'node:net';
import { Writable } from 'node:stream';
import { runInThisContext } from 'node:vm';
import { Registry } from 'prom-client';
import { logs } from '../../../src/log/logger';
import { DebugRouter } from '../../../src/server/debug';
import { httpHandler, monitoringHandler } from '../../../src/server/http';
import {
  BoundListener,
  HTTP_MAX_CONNECTIONS,
  HttpLimits,
  listen,
  METRIC_CONNECTIONS_REJECTED,
} from '../../../src/net/http-listener';
import { EventLoopLiveness } from '../../../src/server/liveness';
import { ReadinessTracker } from '../../../src/server/readiness';

const realProcess = runInThisContext('process') as NodeJS.Process;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LOCAL = { host: '127.0.0.1', port: 0 };

interface Wire {
  socket: net.Socket;
  text(): string;
  closed: Promise<number>;
}

function connect(port: number): Promise<Wire> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.off('error', reject);
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('error', () => undefined);
      const closed = new Promise<number>((done) => socket.once('close', () => done(performance.now())));
      resolve({ socket, text: () => Buffer.concat(chunks).toString('utf8'), closed });
    });
    socket.once('error', reject);
  });
}

/** Connects and waits long enough to learn whether the server closed the connection at accept. */
async function closedAtAccept(port: number): Promise<boolean> {
  const w = await connect(port).catch(() => undefined);
  if (!w) return true;
  const closed = await Promise.race([w.closed.then(() => true), sleep(200).then(() => false)]);
  w.socket.destroy();
  return closed;
}

async function trickle(w: Wire, piece: (i: number) => string, everyMs: number, forMs: number): Promise<void> {
  const start = performance.now();
  for (let i = 0; !w.socket.destroyed && performance.now() - start < forMs; i++) {
    w.socket.write(piece(i));
    await Promise.race([sleep(everyMs), w.closed]);
  }
}

const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: istiod\r\n\r\n`;

interface Listeners {
  registry: Registry;
  /** Resolves the slow debug endpoint's pending answers. */
  release(): void;
  http: BoundListener;
  monitoring: BoundListener;
}

async function startListeners(limits: Partial<HttpLimits>): Promise<Listeners> {
  const registry = new Registry();
  const readiness = new ReadinessTracker();
  const debug = new DebugRouter();
  let releases: (() => void)[] = [];
  debug.add(
    'slow',
    'answers when the test says so',
    () => new Promise((r) => releases.push(() => r({ body: 'slow answer\n' }))),
  );
  const handler = httpHandler({ readiness, liveness: new EventLoopLiveness(), debug, allowRemoteDebug: false });
  return {
    registry,
    release: () => (releases.forEach((r) => r()), (releases = [])),
    http: await listen('http', http.createServer(handler), LOCAL, { metrics: registry, http: limits }),
    monitoring: await listen('monitoring', http.createServer(monitoringHandler(registry)), LOCAL, {
      metrics: registry,
      http: limits,
    }),
  };
}

describe('HTTP listener deadlines are absolute, not per inactivity', () => {
  const limits = { headersMs: 300, requestMs: 700, keepAliveMs: 400, deadlineCheckIntervalMs: 20 };
  let l: Listeners;
  beforeAll(async () => (l = await startListeners(limits)));
  afterAll(async () => {
    await l.http.close(0);
    await l.monitoring.close(0);
  });

  for (const name of ['http', 'monitoring'] as const) {
    test(`${name}: headers trickled one line at a time are cut at the head deadline with 408`, async () => {
      const w = await connect(l[name].port);
      const begun = performance.now();
      w.socket.write('GET /metrics HTTP/1.1\r\n');
      await trickle(w, (i) => `X-Slow-${i}: a\r\n`, 40, 3000);
      const closedAt = await w.closed;
      expect(statuses(w.text())).toEqual([408]);
      expect(closedAt - begun).toBeGreaterThanOrEqual(limits.headersMs - 20);
      expect(closedAt - begun).toBeLessThan(limits.requestMs + 500);
    });
  }

  test('http: a body trickled one byte at a time is cut at the whole-request deadline with 408', async () => {
    const w = await connect(l.http.port);
    const begun = performance.now();
    w.socket.write('POST /debug/slow HTTP/1.1\r\nHost: istiod\r\nContent-Length: 1000\r\n\r\n');
    await trickle(w, () => ' ', 40, 4000);
    const closedAt = await w.closed;
    expect(w.text()).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAt - begun).toBeGreaterThanOrEqual(limits.requestMs - 20);
    expect(closedAt - begun).toBeLessThan(limits.requestMs + 1500);
  });

  test('monitoring: an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const w = await connect(l.monitoring.port);
    w.socket.write(get('/version'));
    const begun = performance.now();
    const closedAt = await Promise.race([w.closed, sleep(3000).then(() => Infinity)]);
    expect(statuses(w.text())).toEqual([200]);
    expect(closedAt - begun).toBeGreaterThanOrEqual(limits.keepAliveMs - 50);
    expect(closedAt - begun).toBeLessThan(2000);
  });
});

describe('HTTP listener connection cap and requests per connection', () => {
  test('connections beyond the cap are closed at accept, counted and logged once; open ones are still served; a freed slot is reused', async () => {
    const lines: string[] = [];
    logs.setDestination(
      new Writable({
        write: (chunk, _enc, done) => {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const l = await startListeners({ maxConnections: 3 });
    const open: Wire[] = [];
    try {
      for (let i = 0; i < 3; i++) open.push(await connect(l.monitoring.port));
      for (let i = 0; i < 3; i++) expect(await closedAtAccept(l.monitoring.port)).toBe(true);
      for (const w of open) w.socket.write(get('/version'));
      await sleep(100);
      for (const w of open) expect(statuses(w.text())).toEqual([200]);
      expect(await l.registry.metrics()).toMatch(
        new RegExp(`${METRIC_CONNECTIONS_REJECTED}\\{listener="monitoring"\\} 3`),
      );
      const warned = lines.map((x) => JSON.parse(x) as { msg: string }).filter((x) => /connection limit/.test(x.msg));
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({ listener: 'monitoring', maxConnections: 3 });

      open.shift()!.socket.destroy();
      let reopened = false;
      for (let attempt = 0; attempt < 20 && !reopened; attempt++) {
        const w = await connect(l.monitoring.port);
        w.socket.write(get('/version'));
        await sleep(50);
        if (statuses(w.text()).length === 1) {
          reopened = true;
          open.push(w);
        } else w.socket.destroy();
      }
      expect(reopened).toBe(true);
    } finally {
      logs.setDestination(process.stderr);
      for (const w of open) w.socket.destroy();
      await l.http.close(0);
      await l.monitoring.close(0);
    }
  });

  test(`the default cap is HTTP_MAX_CONNECTIONS (${HTTP_MAX_CONNECTIONS})`, async () => {
    const l = await startListeners({});
    const open: Wire[] = [];
    try {
      for (let i = 0; i < HTTP_MAX_CONNECTIONS; i++) open.push(await connect(l.http.port));
      expect(await closedAtAccept(l.http.port)).toBe(true);
      open[0]!.socket.write(get('/ready'));
      await sleep(100);
      expect(statuses(open[0]!.text())).toEqual([200]);
    } finally {
      for (const w of open) w.socket.destroy();
      await l.http.close(0);
      await l.monitoring.close(0);
    }
  });

  test('the last request a connection may carry is answered with Connection: close and the connection closes', async () => {
    const l = await startListeners({ maxRequestsPerSocket: 3 });
    try {
      const w = await connect(l.monitoring.port);
      for (let i = 0; i < 3; i++) {
        w.socket.write(get('/version'));
        await sleep(50);
      }
      await Promise.race([w.closed, sleep(2000)]);
      expect(w.socket.destroyed).toBe(true);
      const answers = w.text().split(/(?=HTTP\/1\.1 )/);
      expect(answers.map((a) => /Connection: close/i.test(a))).toEqual([false, false, true]);
    } finally {
      await l.http.close(0);
      await l.monitoring.close(0);
    }
  });

  test('20 pipelined requests are answered in order on one connection, without MaxListenersExceededWarning', async () => {
    const names: string[] = [];
    const onWarning = (w: Error) => names.push(w.name);
    realProcess.on('warning', onWarning);
    const l = await startListeners({});
    try {
      const w = await connect(l.http.port);
      const paths = Array.from({ length: 20 }, (_, i) => `/nowhere-${i}`);
      w.socket.end(paths.map((p) => get(p)).join(''));
      await w.closed;
      expect(statuses(w.text())).toEqual(Array(20).fill(404));
      await sleep(20);
      expect(names).not.toContain('MaxListenersExceededWarning');
    } finally {
      realProcess.off('warning', onWarning);
      await l.http.close(0);
      await l.monitoring.close(0);
    }
  });
});

describe('HTTP listener graceful close', () => {
  test('close() closes idle connections at once, answers a request under way with Connection: close, then resolves', async () => {
    const l = await startListeners({});
    const idle = await connect(l.http.port);
    idle.socket.write(get('/ready'));
    const busy = await connect(l.http.port);
    busy.socket.write(get('/debug/slow'));
    await sleep(100);
    let resolved = false;
    const closing = l.http.close(5000).then(() => (resolved = true));
    await idle.closed;
    await sleep(50);
    expect(resolved).toBe(false);
    expect(busy.socket.destroyed).toBe(false);
    l.release();
    await busy.closed;
    await closing;
    expect(busy.text()).toMatch(/^HTTP\/1\.1 200 [^]*Connection: close\r\n[^]*slow answer\n/);
    await l.monitoring.close(0);
  });

  test('at the close deadline, connections still in a request are destroyed and close() resolves', async () => {
    const l = await startListeners({});
    const busy = await connect(l.http.port);
    busy.socket.write(get('/debug/slow'));
    const half = await connect(l.monitoring.port);
    half.socket.write('GET /metrics HTTP/1.1\r\n');
    await sleep(100);
    const begun = performance.now();
    await Promise.all([l.http.close(300), l.monitoring.close(300)]);
    const closedAt = Math.max(await busy.closed, await half.closed);
    expect(closedAt - begun).toBeGreaterThanOrEqual(280);
    expect(closedAt - begun).toBeLessThan(2000);
    l.release();
  });

  test('forceClose() destroys every connection at once', async () => {
    const l = await startListeners({});
    const busy = await connect(l.http.port);
    busy.socket.write(get('/debug/slow'));
    await sleep(100);
    const closing = l.http.close(60_000);
    l.http.forceClose!();
    await busy.closed;
    await closing;
    l.release();
    await l.monitoring.close(0);
  });
});
