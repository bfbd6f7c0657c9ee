// The webhook port is reachable from every pod, so its clients may be slow, greedy or hostile.
// These tests hold the listener to its deadlines and caps with shortened limits (the defaults are
// seconds long) and check that everyone else keeps being served.

import * as net from 'node:net';
import * as tls from 'node:tls';
import { runInThisContext } from 'node:vm';
import { Writable } from 'node:stream';
import { logs } from '../../../src/log/logger';
import { METRIC_CONNECTIONS_REJECTED, METRIC_IDLE_CONNECTIONS_CLOSED } from '../../../src/net/http-listener';
import { MAX_PIPELINED_REQUESTS, WEBHOOK_MAX_CONNECTIONS } from '../../../src/webhook/limits';
import { startWebhookServer, WebhookServerHandle } from '../../../src/webhook/server';
import {
  admissionReview,
  policy,
  SERVER_NAME,
  throwawayCert,
  webhookContext,
  WebhookHarness,
} from '../../support/webhook/harness';

const cert = throwawayCert('istiod-slow');
// Jest gives each test file its own copy of `process`; Node emits MaxListenersExceededWarning on
// the real one.
const realProcess = runInThisContext('process') as NodeJS.Process;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Wire {
  socket: tls.TLSSocket;
  text(): string;
  /** Resolves with performance.now() when the socket closes. */
  closed: Promise<number>;
}

function connect(port: number): Promise<Wire> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca: cert.rootsPem, servername: SERVER_NAME }, () => {
      socket.off('error', reject);
      resolve(wire(socket));
    });
    socket.once('error', reject);
  });
}

function wire(socket: tls.TLSSocket): Wire {
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => undefined);
  const closed = new Promise<number>((done) => socket.once('close', () => done(performance.now())));
  return { socket, text: () => Buffer.concat(chunks).toString('utf8'), closed };
}

/** Writes `piece(i)` every `everyMs` until the socket closes or `forMs` has passed. */
async function trickle(w: Wire, piece: (i: number) => string, everyMs: number, forMs: number): Promise<void> {
  const start = performance.now();
  for (let i = 0; !w.socket.destroyed && performance.now() - start < forMs; i++) {
    w.socket.write(piece(i));
    await Promise.race([sleep(everyMs), w.closed]);
  }
}

/** Polls `done` every 10 ms for up to 10 s. */
async function waitFor(done: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !done(); i++) await sleep(10);
  expect(done()).toBe(true);
}

const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
const ready = 'GET /ready HTTP/1.1\r\nHost: istiod\r\n\r\n';
function reviewRequest(uid: string): string {
  const body = admissionReview(policy({}), { uid });
  return `POST /validate HTTP/1.1\r\nHost: istiod\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

function collectWarnings(): { names: string[]; stop(): void } {
  const names: string[] = [];
  const onWarning = (w: Error) => names.push(w.name);
  realProcess.on('warning', onWarning);
  return { names, stop: () => realProcess.off('warning', onWarning) };
}

async function start(
  limits: Parameters<typeof startWebhookServer>[1],
): Promise<{ h: WebhookHarness; server: WebhookServerHandle }> {
  const h = webhookContext();
  h.certs.set(cert);
  return { h, server: await startWebhookServer(h.ctx, limits) };
}

describe('webhook request deadlines are absolute, not per inactivity', () => {
  const limits = { headersMs: 300, requestMs: 700, keepAliveMs: 2000, handshakeMs: 300 };
  let h: WebhookHarness;
  let server: WebhookServerHandle;
  beforeAll(async () => ({ h, server } = await start(limits)));
  afterAll(() => h.shutdown());

  test('headers trickled one line at a time are cut at the head deadline with 408, however steady the trickle', async () => {
    const w = await connect(server.port!);
    const begun = performance.now();
    w.socket.write('POST /validate HTTP/1.1\r\n');
    await trickle(w, (i) => `X-Slow-${i}: a\r\n`, 40, 3000);
    const closedAt = await w.closed;
    expect(statuses(w.text())).toEqual([408]);
    expect(w.text()).toContain('Connection: close');
    expect(closedAt - begun).toBeGreaterThanOrEqual(limits.headersMs - 20);
    // Cut by the head deadline, well before the trickle would have ended.
    expect(closedAt - begun).toBeLessThan(limits.requestMs + 500);
  });

  test('a body trickled one byte at a time is cut at the whole-request deadline with 408', async () => {
    const w = await connect(server.port!);
    const begun = performance.now();
    w.socket.write(
      'POST /validate HTTP/1.1\r\nHost: istiod\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n',
    );
    await trickle(w, () => ' ', 40, 4000);
    const closedAt = await w.closed;
    expect(statuses(w.text())).toEqual([408]);
    expect(closedAt - begun).toBeGreaterThanOrEqual(limits.requestMs - 20);
    expect(closedAt - begun).toBeLessThan(limits.requestMs + 1500);
  });

  test('a connection that never sends a request is closed at the head deadline, without an answer', async () => {
    const w = await connect(server.port!);
    const begun = performance.now();
    const closedAt = await w.closed;
    expect(w.text()).toBe('');
    expect(closedAt - begun).toBeGreaterThanOrEqual(limits.headersMs - 20);
    expect(closedAt - begun).toBeLessThan(limits.keepAliveMs);
  });

  test('a client that stops reading its answers is cut at the whole-request deadline, with its answers unsent', async () => {
    const w = await connect(server.port!);
    w.socket.pause();
    // Six answers of 3 MB each: more than the sockets' buffers hold for a client that reads nothing.
    const big = reviewRequest(`uid-big-${'x'.repeat(3_000_000)}`);
    w.socket.write(big.repeat(6));
    await sleep(limits.requestMs + 1000);
    w.socket.resume();
    await Promise.race([w.closed, sleep(3000)]);
    expect(w.socket.destroyed).toBe(true);
    expect(statuses(w.text()).length).toBeLessThan(6);
  });

  test('a TLS handshake that never completes is cut at the handshake deadline', async () => {
    const raw = net.connect(server.port!, '127.0.0.1');
    const begun = performance.now();
    raw.on('error', () => undefined);
    raw.write(Buffer.from([0x16, 0x03, 0x01])); // the first bytes of a ClientHello, and no more
    const closedAt = await Promise.race([
      new Promise<number>((r) => raw.once('close', () => r(performance.now()))),
      sleep(3000).then(() => Infinity),
    ]);
    raw.destroy();
    expect(closedAt - begun).toBeGreaterThanOrEqual(limits.handshakeMs - 20);
    expect(closedAt - begun).toBeLessThan(2000);
  });
});

describe('webhook connection cap', () => {
  test('at the cap the oldest idle connection is closed for a new one, and counted; the others are still served', async () => {
    const { h, server } = await start({ maxConnections: 3 });
    const open: Wire[] = [];
    try {
      // One connection has been served once and is idle; two never sent a request.
      open.push(await connect(server.port!));
      open[0]!.socket.write(ready);
      await waitFor(() => statuses(open[0]!.text()).length === 1);
      for (let i = 0; i < 2; i++) open.push(await connect(server.port!));
      const fresh = await connect(server.port!);
      fresh.socket.write(reviewRequest('uid-fresh'));
      await waitFor(() => statuses(fresh.text()).length === 1);
      expect(statuses(fresh.text())).toEqual([200]);
      // The oldest went, with a clean close: its one answer and nothing else.
      await open[0]!.closed;
      expect(statuses(open[0]!.text())).toEqual([200]);
      for (const w of open.slice(1)) {
        expect(w.socket.destroyed).toBe(false);
      }
      const text = await h.metrics.metrics();
      expect(text).toMatch(new RegExp(`${METRIC_IDLE_CONNECTIONS_CLOSED}\\{listener="webhook"\\} 1`));
      expect(text).not.toMatch(new RegExp(`${METRIC_CONNECTIONS_REJECTED}\\{listener="webhook"\\} [1-9]`));
      open.push(fresh);
    } finally {
      for (const w of open) w.socket.destroy();
      await h.shutdown();
    }
  });

  test('busy connections keep the cap: one more is refused at accept, counted and logged once, and the busy ones are answered', async () => {
    const lines: string[] = [];
    logs.setDestination(
      new Writable({
        write: (chunk, _enc, done) => {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const { h, server } = await start({ maxConnections: 3 });
    const open: Wire[] = [];
    try {
      // Three connections each part-way through a request: none may be closed to make room.
      for (let i = 0; i < 3; i++) {
        const w = await connect(server.port!);
        w.socket.write(ready.slice(0, 10));
        open.push(w);
      }
      await sleep(50);
      for (let i = 0; i < 3; i++)
        await expect(connect(server.port!)).rejects.toThrow(/ECONNRESET|socket disconnected|ECONNREFUSED|EPIPE/);
      for (const w of open) w.socket.write(ready.slice(10));
      await waitFor(() => open.every((w) => statuses(w.text()).length === 1));
      for (const w of open) expect(statuses(w.text())).toEqual([200]);
      const text = await h.metrics.metrics();
      expect(text).toMatch(new RegExp(`${METRIC_CONNECTIONS_REJECTED}\\{listener="webhook"\\} 3`));
      expect(text).not.toMatch(new RegExp(`${METRIC_IDLE_CONNECTIONS_CLOSED}\\{listener="webhook"\\} [1-9]`));
      const warned = lines
        .map((l) => JSON.parse(l) as { scope?: string; msg: string })
        .filter((l) => l.scope === 'webhook' && /connection limit/.test(l.msg));
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({ listener: 'webhook', maxConnections: 3 });
      // Now idle again, so the next connection takes the oldest one's place.
      const next = await connect(server.port!);
      next.socket.write(ready);
      await waitFor(() => statuses(next.text()).length === 1);
      expect(statuses(next.text())).toEqual([200]);
      open.push(next);
    } finally {
      logs.setDestination(process.stderr);
      for (const w of open) w.socket.destroy();
      await h.shutdown();
    }
  });

  // The defect: 2,000 idle TLS connections, and the API server's next connection was closed at once.
  test(`more idle TLS connections than WEBHOOK_MAX_CONNECTIONS (${WEBHOOK_MAX_CONNECTIONS}) do not lock out the next review`, async () => {
    const { h, server } = await start({});
    const idle: Wire[] = [];
    const extra = 50;
    try {
      for (let batch = 0; idle.length < WEBHOOK_MAX_CONNECTIONS + extra; batch++) {
        const n = Math.min(32, WEBHOOK_MAX_CONNECTIONS + extra - idle.length);
        idle.push(...(await Promise.all(Array.from({ length: n }, () => connect(server.port!)))));
      }
      const review = await connect(server.port!);
      idle.push(review);
      review.socket.write(reviewRequest('uid-after-flood'));
      await waitFor(() => statuses(review.text()).length === 1);
      expect(statuses(review.text())).toEqual([200]);
      expect(review.text()).toContain('uid-after-flood');
      await waitFor(() => idle.filter((w) => w.socket.destroyed).length === extra + 1);
      // The oldest ones went, in accept order.
      expect(idle.slice(0, extra + 1).every((w) => w.socket.destroyed)).toBe(true);
      expect(idle.slice(extra + 1).every((w) => !w.socket.destroyed)).toBe(true);
      expect(await h.metrics.metrics()).toMatch(
        new RegExp(`${METRIC_IDLE_CONNECTIONS_CLOSED}\\{listener="webhook"\\} ${extra + 1}`),
      );
    } finally {
      for (const w of idle) w.socket.destroy();
      await h.shutdown();
    }
  });

  test(`the default cap is WEBHOOK_MAX_CONNECTIONS (${WEBHOOK_MAX_CONNECTIONS}), counted in TCP connections before any handshake`, async () => {
    const { h, server } = await start({});
    const raws: net.Socket[] = [];
    try {
      for (let i = 0; i < WEBHOOK_MAX_CONNECTIONS; i++) {
        const raw = net.connect(server.port!, '127.0.0.1');
        raw.on('error', () => undefined);
        raws.push(raw);
      }
      await Promise.all(
        raws.map((r) => new Promise((ok) => (r.readyState === 'open' ? ok(undefined) : r.once('connect', ok)))),
      );
      await sleep(100);
      expect(raws.every((r) => !r.destroyed)).toBe(true);
      await expect(connect(server.port!)).rejects.toThrow();
      expect(await h.metrics.metrics()).toMatch(new RegExp(`${METRIC_CONNECTIONS_REJECTED}\\{listener="webhook"\\} 1`));
    } finally {
      for (const r of raws) r.destroy();
      await h.shutdown();
    }
  });
});

describe('webhook pipelining', () => {
  let h: WebhookHarness;
  let server: WebhookServerHandle;
  beforeAll(async () => ({ h, server } = await start({})));
  afterAll(() => h.shutdown());

  test('20 pipelined reviews are answered in order without a listener per request, even when the first answer fills the socket', async () => {
    const warnings = collectWarnings();
    try {
      // The first review's answer echoes a uid of ~390 KB, more than the socket buffers hold
      // while the client is not reading. The first request is sized so that its last bytes and
      // the 19 short ones share the final 16 KiB TLS record, and so reach the server together.
      const rest = Array.from({ length: 19 }, (_, i) => reviewRequest(`uid-${i + 2}`)).join('');
      const RECORD = 16_384;
      const target = RECORD * 24 + 64;
      let pad = 0;
      for (let i = 0; i < 5; i++) pad += target - Buffer.byteLength(reviewRequest(`uid-1-${'x'.repeat(pad)}`));
      const uid = `uid-1-${'x'.repeat(pad)}`;
      expect(Buffer.byteLength(reviewRequest(uid))).toBe(target);
      const w = await connect(server.port!);
      w.socket.pause();
      w.socket.write(reviewRequest(uid) + rest);
      await sleep(300);
      w.socket.resume();
      await sleep(300);
      const text = w.text();
      expect(statuses(text)).toEqual(Array(20).fill(200));
      expect([...text.matchAll(/"uid":"(uid-\d+)/g)].map((m) => m[1])).toEqual(
        Array.from({ length: 20 }, (_, i) => `uid-${i + 1}`),
      );
      w.socket.destroy();
      await sleep(20);
      expect(warnings.names).not.toContain('MaxListenersExceededWarning');
    } finally {
      warnings.stop();
    }
  });

  test(`a client that pipelines more than MAX_PIPELINED_REQUESTS (${MAX_PIPELINED_REQUESTS}) unanswered requests gets 429 naming the limit and is closed`, async () => {
    const warnings = collectWarnings();
    try {
      const w = await connect(server.port!);
      w.socket.pause();
      w.socket.write(ready.repeat(1000));
      await sleep(300);
      w.socket.resume();
      await w.closed;
      const got = statuses(w.text());
      expect(got).toEqual([...Array<number>(MAX_PIPELINED_REQUESTS).fill(200), 429]);
      expect(w.text()).toContain(`more than ${MAX_PIPELINED_REQUESTS} requests`);
      await sleep(20);
      expect(warnings.names).not.toContain('MaxListenersExceededWarning');
      // The listener keeps serving everyone else.
      const other = await connect(server.port!);
      other.socket.end(ready);
      await other.closed;
      expect(statuses(other.text())).toEqual([200]);
    } finally {
      warnings.stop();
    }
  });
});

describe('webhook requests per connection', () => {
  let h: WebhookHarness;
  let server: WebhookServerHandle;
  beforeAll(async () => ({ h, server } = await start({ maxRequestsPerConnection: 3 })));
  afterAll(() => h.shutdown());

  test('the last request a connection may carry is answered with Connection: close, and the connection closes', async () => {
    const w = await connect(server.port!);
    for (let i = 1; i <= 3; i++) {
      w.socket.write(ready);
      await sleep(50);
    }
    await Promise.race([w.closed, sleep(2000)]);
    expect(w.socket.destroyed).toBe(true);
    const answers = w.text().split(/(?=HTTP\/1\.1 )/);
    expect(answers.map((a) => a.includes('Connection: close'))).toEqual([false, false, true]);
  });

  test('pipelined requests past the bound are not answered', async () => {
    const w = await connect(server.port!);
    w.socket.write(ready.repeat(5));
    await w.closed;
    expect(statuses(w.text())).toEqual([200, 200, 200]);
  });
});

describe('webhook graceful close', () => {
  test('close() closes idle connections at once, lets a request under way finish with Connection: close, then resolves', async () => {
    const { h, server } = await start({});
    const idle = await connect(server.port!);
    idle.socket.write(ready);
    const busy = await connect(server.port!);
    const full = reviewRequest('uid-busy');
    busy.socket.write(full.slice(0, 60));
    await sleep(50);
    let resolved = false;
    const closing = server.close(5000).then(() => (resolved = true));
    await idle.closed;
    expect(busy.socket.destroyed).toBe(false);
    expect(resolved).toBe(false);
    busy.socket.write(full.slice(60));
    await busy.closed;
    await closing;
    expect(statuses(busy.text())).toEqual([200]);
    expect(busy.text()).toContain('Connection: close');
    expect(h.readiness.get('webhook')).toBe(false);
    await h.shutdown();
  });

  test('at the close deadline, connections still inside a request are destroyed and close() resolves', async () => {
    const { h, server } = await start({});
    const stuck = await connect(server.port!);
    stuck.socket.write('POST /validate HTTP/1.1\r\nHost: istiod\r\n');
    const handshaking = net.connect(server.port!, '127.0.0.1');
    handshaking.on('error', () => undefined);
    const handshakeClosed = new Promise((r) => handshaking.once('close', r));
    await sleep(50);
    const begun = performance.now();
    await server.close(300);
    const closedAt = await stuck.closed;
    expect(closedAt - begun).toBeGreaterThanOrEqual(280);
    expect(closedAt - begun).toBeLessThan(2000);
    await handshakeClosed;
    await h.shutdown();
  });

  test('forceClose() destroys every connection at once', async () => {
    const { h, server } = await start({});
    const stuck = await connect(server.port!);
    stuck.socket.write('POST /validate HTTP/1.1\r\n');
    await sleep(50);
    const closing = server.close(60_000);
    server.forceClose();
    await stuck.closed;
    await closing;
    await h.shutdown();
  });
});
