import * as https from 'node:https';
import * as tls from 'node:tls';
import { Writable } from 'node:stream';
import { logs } from '../../../src/log/logger';
import { MAX_REQUEST_BODY_BYTES } from '../../../src/webhook/admission';
import {
  HEADERS_TIMEOUT_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  startWebhookServer,
  WebhookServerHandle,
} from '../../../src/webhook/server';
import { MAX_HEADER_BYTES } from '../../../src/webhook/http1';
import {
  admissionReview,
  policy,
  post,
  SERVER_NAME,
  throwawayCert,
  webhookContext,
  WebhookHarness,
} from '../../support/webhook/harness';
import { parseReview } from '../../support/webhook/review';

const firstCert = throwawayCert('istiod-1');

describe('webhook HTTPS server', () => {
  let h: WebhookHarness;
  let server: WebhookServerHandle;
  let agent: https.Agent;
  const call = (
    opts: Parameters<typeof post>[2] extends infer O ? Omit<O & object, 'ca'> : never,
    ca = firstCert.rootsPem,
  ) => post(agent, server.port!, { ...opts, ca });

  beforeAll(async () => {
    h = webhookContext();
    h.certs.set(firstCert);
    server = await startWebhookServer(h.ctx);
    agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  });

  afterAll(async () => {
    agent.destroy();
    await h.shutdown();
  });

  test('it listens on httpsAddr and reports ready', () => {
    expect(server.enabled).toBe(true);
    expect(server.address).toBe(`127.0.0.1:${server.port}`);
    expect(h.readiness.get('webhook')).toBe(true);
  });

  test('/ready answers 200', async () => {
    expect((await call({ path: '/ready', method: 'GET' })).status).toBe(200);
  });

  test('a valid policy is allowed over TLS, answered in v1 with its uid', async () => {
    const r = await call({
      body: admissionReview(policy({ rules: [{ from: [{ source: { namespaces: ['a'] } }] }] }), { uid: 'u-42' }),
    });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r.body)).toEqual({
      kind: 'AdmissionReview',
      apiVersion: 'admission.k8s.io/v1',
      response: { uid: 'u-42', allowed: true },
    });
  });

  test('v1beta1 reviews get v1beta1 answers', async () => {
    const r = await call({ body: admissionReview(policy({}), { apiVersion: 'admission.k8s.io/v1beta1' }) });
    expect(parseReview(r.body).apiVersion).toBe('admission.k8s.io/v1beta1');
  });

  test('any path under /validate/ is served', async () => {
    const r = await call({ path: '/validate/security', body: admissionReview(policy({})) });
    expect(parseReview(r.body).response.allowed).toBe(true);
  });

  test('other paths are 404', async () => {
    expect((await call({ path: '/inject', body: '{}' })).status).toBe(404);
  });

  test('an invalid policy is denied with HTTP 200 and the field path', async () => {
    const r = await call({
      body: admissionReview(policy({ rules: [{ from: [{ source: { principals: ['a', ''] } }] }] })),
    });
    expect(r.status).toBe(200);
    const response = parseReview(r.body).response;
    expect(response.allowed).toBe(false);
    expect(response.status!.message).toBe(
      'configuration is invalid: spec.rules[0].from[0].source.principals[1]: must not be empty',
    );
  });

  test('warnings reach the caller on allowed responses', async () => {
    const r = await call({ body: admissionReview(policy({ selector: {} })) });
    expect(parseReview(r.body).response).toMatchObject({
      allowed: true,
      warnings: ['spec.selector: workload selector specified without labels'],
    });
  });

  test('DELETE is allowed without looking at the object', async () => {
    const r = await call({ body: admissionReview({ nonsense: true }, { operation: 'DELETE' }) });
    expect(parseReview(r.body).response.allowed).toBe(true);
  });

  test('an unknown kind is denied as unrecognized', async () => {
    const r = await call({
      body: admissionReview({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }),
    });
    expect(parseReview(r.body).response.status!.message).toBe('unrecognized type example.com/v1, Kind=Widget');
  });

  test('the always-reject annotation is denied', async () => {
    const r = await call({
      body: admissionReview(policy({}, { annotations: { 'internal.istio.io/webhook-always-reject': 'true' } }), {
        dryRun: true,
      }),
    });
    expect(parseReview(r.body).response.status!.message).toContain('webhook-always-reject');
  });

  test('a wrong content type is 415', async () => {
    expect((await call({ body: admissionReview(policy({})), contentType: 'text/plain' })).status).toBe(415);
  });

  test('an empty body is 400', async () => {
    const r = await call({ body: '' });
    expect(r.status).toBe(400);
    expect(r.body).toContain('no body found');
  });

  test('a body that is not an AdmissionReview is denied with the decode error', async () => {
    const r = await call({ body: '{"kind":"Pod","apiVersion":"v1"}' });
    expect(parseReview(r.body).response).toMatchObject({
      allowed: false,
      status: { message: 'could not decode body: no kind "Pod" is registered for version "v1"' },
    });
  });

  test('a body over 6 MiB is 400 naming the limit', async () => {
    const r = await post(new https.Agent(), server.port!, {
      body: Buffer.alloc(MAX_REQUEST_BODY_BYTES + 1024, 0x20),
      ca: firstCert.rootsPem,
    });
    expect(r.status).toBe(400);
    expect(r.body).toContain(`limit is ${MAX_REQUEST_BODY_BYTES}`);
  });

  test('requests reuse one keep-alive connection', async () => {
    await call({ path: '/ready', method: 'GET' });
    const second = await call({ body: admissionReview(policy({})) });
    expect(second.reusedSocket).toBe(true);
  });

  test('reviews arriving together on more connections than one write batch holds are all answered, each with its own uid', async () => {
    // Answers written in one round are sent in batches (connection.ts, WriteBatch); 40 callers
    // span more than one batch, and each keeps its connection for a second review.
    const agents = Array.from({ length: 40 }, () => new https.Agent({ keepAlive: true, maxSockets: 1 }));
    try {
      for (const round of [1, 2]) {
        const replies = await Promise.all(
          agents.map((a, i) =>
            post(a, server.port!, {
              body: admissionReview(policy({}), { uid: `u-${round}-${i}` }),
              ca: firstCert.rootsPem,
            }),
          ),
        );
        expect(replies.map((r) => parseReview(r.body).response.uid)).toEqual(agents.map((_, i) => `u-${round}-${i}`));
        expect(replies.every((r) => r.status === 200 && r.reusedSocket === (round === 2))).toBe(true);
      }
    } finally {
      for (const a of agents) a.destroy();
    }
  });

  test("metrics use istiod's names and labels", async () => {
    const text = await h.metrics.metrics();
    expect(text).toMatch(
      /galley_validation_passed\{group="security.istio.io",version="v1",resource="authorizationpolicies"\} [1-9]/,
    );
    expect(text).toMatch(
      /galley_validation_failed\{group="security.istio.io",version="v1",resource="authorizationpolicies",reason="invalid_config"\} [1-9]/,
    );
    expect(text).toMatch(/galley_validation_failed\{[^}]*reason="unknown_type"\} 1/);
    expect(text).toMatch(/galley_validation_failed\{[^}]*reason="unsupported_operation"\} 1/);
    expect(text).toMatch(/galley_validation_http_error\{status="415"\} 1/);
    expect(text).toMatch(/galley_validation_http_error\{status="400"\} 2/);
  });

  test('a renewed certificate is served to new connections while open ones keep working', async () => {
    const before = await call({ path: '/ready', method: 'GET' });
    const renewed = throwawayCert('istiod-2');
    h.certs.set(renewed);
    const onOldConnection = await call({ body: admissionReview(policy({})) });
    expect(onOldConnection.reusedSocket).toBe(true);
    expect(onOldConnection.peerFingerprint).toBe(before.peerFingerprint);
    const fresh = await post(new https.Agent(), server.port!, { path: '/ready', method: 'GET', ca: renewed.rootsPem });
    expect(fresh.status).toBe(200);
    expect(fresh.peerFingerprint).not.toBe(before.peerFingerprint);
  });
});

describe('webhook server lifecycle', () => {
  test('it waits for the serving certificate, logs its address under scope webhook, and closes on shutdown', async () => {
    const lines: string[] = [];
    logs.setDestination(
      new Writable({
        write: (chunk, _enc, done) => {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    try {
      const h = webhookContext();
      const starting = startWebhookServer(h.ctx);
      let started = false;
      void starting.then(() => (started = true));
      await new Promise((r) => setTimeout(r, 50));
      expect(started).toBe(false);
      h.certs.set(firstCert);
      const server = await starting;
      const listening = lines.map((l) => JSON.parse(l) as { msg: string }).find((l) => l.msg === 'listening');
      expect(listening).toMatchObject({ scope: 'webhook', address: server.address });
      await h.shutdown();
      expect(h.readiness.get('webhook')).toBe(false);
      await expect(
        post(new https.Agent(), server.port!, { path: '/ready', method: 'GET', ca: firstCert.rootsPem }),
      ).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      logs.setDestination(process.stderr);
    }
  });

  test('an empty httpsAddr disables the webhook', async () => {
    const h = webhookContext('');
    const server = await startWebhookServer(h.ctx);
    expect(server.enabled).toBe(false);
    expect(h.readiness.has('webhook')).toBe(false);
  });
});

describe('webhook HTTP/1.1 on the wire', () => {
  let h: WebhookHarness;
  let server: WebhookServerHandle;

  beforeAll(async () => {
    h = webhookContext();
    h.certs.set(firstCert);
    server = await startWebhookServer(h.ctx);
  });

  afterAll(() => h.shutdown());

  /** Writes raw bytes on a fresh TLS connection and returns everything read until the server closes it. */
  function exchange(bytes: string | Buffer): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = tls.connect(
        { host: '127.0.0.1', port: server.port!, ca: firstCert.rootsPem, servername: SERVER_NAME },
        () => socket.write(bytes),
      );
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      socket.on('error', reject);
    });
  }

  const review = admissionReview(policy({}));
  const post = (extra = '') =>
    `POST /validate HTTP/1.1\r\nHost: istiod\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(review)}\r\n${extra}\r\n${review}`;
  const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));

  test('pipelined requests are answered in order on one connection; Connection: close ends it', async () => {
    const text = await exchange(post() + 'GET /ready HTTP/1.1\r\nHost: istiod\r\n\r\n' + post('Connection: close\r\n'));
    expect(statuses(text)).toEqual([200, 200, 200]);
    expect(text.match(/"allowed":true/g)).toHaveLength(2);
    expect(text).toMatch(/Connection: close\r\n\r\n[^]*$/);
  });

  test('HTTP/1.0 gets one answer and the connection closes', async () => {
    expect(statuses(await exchange('GET /ready HTTP/1.0\r\n\r\n'))).toEqual([200]);
  });

  test('a chunked body is 411 and the connection closes, with the reason in the body', async () => {
    const text = await exchange(
      'POST /validate HTTP/1.1\r\nHost: istiod\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
    );
    expect(statuses(text)).toEqual([411]);
    expect(text).toContain('Transfer-Encoding is not accepted');
  });

  test(`headers over ${MAX_HEADER_BYTES} bytes are 431; a malformed request line is 400; both close the connection`, async () => {
    expect(statuses(await exchange(`GET /ready HTTP/1.1\r\nX-Big: ${'a'.repeat(MAX_HEADER_BYTES)}\r\n\r\n`))).toEqual([
      431,
    ]);
    expect(statuses(await exchange('HELLO\r\n\r\n' + post()))).toEqual([400]);
  });

  test('a request after a refused one on the same connection is not answered', async () => {
    expect(statuses(await exchange('GET /ready HTTP/1.1\r\nContent-Length: x\r\n\r\n' + post()))).toEqual([400]);
  });

  test('protocol refusals count as galley_validation_http_error by status', async () => {
    const text = await h.metrics.metrics();
    expect(text).toMatch(/galley_validation_http_error\{status="411"\} 1/);
    expect(text).toMatch(/galley_validation_http_error\{status="431"\} 1/);
  });

  test('shutting down answers a request already under way, then closes', async () => {
    const socket = tls.connect({
      host: '127.0.0.1',
      port: server.port!,
      ca: firstCert.rootsPem,
      servername: SERVER_NAME,
    });
    await new Promise((r) => socket.once('secureConnect', r));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const ended = new Promise((r) => socket.once('end', r));
    const full = post();
    socket.write(full.slice(0, 40));
    await new Promise((r) => setTimeout(r, 50));
    const closed = h.shutdown();
    socket.write(full.slice(40));
    await ended;
    await closed;
    const text = Buffer.concat(chunks).toString('utf8');
    expect(statuses(text)).toEqual([200]);
    expect(text).toContain('Connection: close');
  });
});

describe('webhook connection timeouts', () => {
  let h: WebhookHarness;
  let server: WebhookServerHandle;
  const timeouts = { headersMs: 150, keepAliveMs: 300 };

  beforeAll(async () => {
    h = webhookContext();
    h.certs.set(firstCert);
    server = await startWebhookServer(h.ctx, timeouts);
  });

  afterAll(() => h.shutdown());

  function connect(): Promise<{ socket: tls.TLSSocket; text: () => string; ended: Promise<number> }> {
    return new Promise((resolve) => {
      const socket = tls.connect(
        { host: '127.0.0.1', port: server.port!, ca: firstCert.rootsPem, servername: SERVER_NAME },
        () => {
          const chunks: Buffer[] = [];
          socket.on('data', (c: Buffer) => chunks.push(c));
          const ended = new Promise<number>((done) => socket.once('close', () => done(performance.now())));
          resolve({ socket, text: () => Buffer.concat(chunks).toString('utf8'), ended });
        },
      );
    });
  }

  test(`istiod's values are the defaults: ${HEADERS_TIMEOUT_MS} ms for a request, ${KEEP_ALIVE_TIMEOUT_MS} ms idle`, () => {
    expect([HEADERS_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS]).toEqual([30_000, 90_000]);
  });

  test('an idle keep-alive connection is closed after the keep-alive timeout, without an answer', async () => {
    const c = await connect();
    const start = performance.now();
    c.socket.write('GET /ready HTTP/1.1\r\nHost: istiod\r\n\r\n');
    const closedAt = await c.ended;
    expect(closedAt - start).toBeGreaterThanOrEqual(timeouts.keepAliveMs - 20);
    expect(c.text().match(/HTTP\/1\.1 /g)).toHaveLength(1);
  });

  test('a request that stops arriving is answered 408 after the request timeout and closed', async () => {
    const c = await connect();
    const start = performance.now();
    c.socket.write('POST /validate HTTP/1.1\r\nHost: istiod\r\nContent-Length: 100\r\n\r\n{"kind"');
    const closedAt = await c.ended;
    expect(closedAt - start).toBeGreaterThanOrEqual(timeouts.headersMs - 20);
    expect(c.text()).toMatch(
      /^HTTP\/1\.1 408 Request Timeout\r\n[^]*Connection: close\r\n\r\nrequest not received in time\n$/,
    );
  });
});
