// Shutdown as an operator and Kubernetes see it: SIGTERM or SIGINT stops accepting, lets
// in-flight work finish, ends xDS streams with a status (so ztunnel reconnects to another
// replica), closes whatever is left at --shutdownDuration, and exits 0.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { AdsClient, ztunnelNodeId } from '../../src/cli/ads-client';
import { ADDRESS_TYPE_URL } from '../../src/contract/xds-resources';
import { localServeArgs, runCli, ServerProcess } from '../support/cli';

/** A deadline far below the default 10 s, so a test that waits for it still ends quickly. */
const SHORT_DEADLINE = '1s';

const REVIEW = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'shutdown-test',
    kind: { group: 'networking.istio.io', version: 'v1', kind: 'Gateway' },
    resource: { group: 'networking.istio.io', version: 'v1', resource: 'gateways' },
    operation: 'CREATE',
    object: {
      apiVersion: 'networking.istio.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'default' },
      spec: { servers: [{ port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*'] }] },
    },
  },
});

function reviewHead(bodyBytes: number): string {
  return `POST /validate HTTP/1.1\r\nHost: istiod\r\nContent-Type: application/json\r\nContent-Length: ${bodyBytes}\r\n\r\n`;
}

interface Started {
  server: ServerProcess;
  state: string;
}

function startServer(extraArgs: string[]): Started {
  const state = mkdtempSync(join(tmpdir(), 'istiod-ts-shutdown-'));
  const server = ServerProcess.start(
    [...localServeArgs(state), ...extraArgs],
    // The plaintext port without authentication, so the test can connect as a ztunnel without a token.
    { XDS_AUTH: 'false' },
  );
  return { server, state };
}

/** A ztunnel on node-a (from the demo mesh) with its initial sync received. */
async function connectZtunnel(port: number): Promise<AdsClient> {
  const client = new AdsClient({
    address: `127.0.0.1:${port}`,
    node: {
      id: ztunnelNodeId('10.244.1.2', 'ztunnel-7k2xq', 'istio-system'),
      metadata: {
        NAME: 'ztunnel-7k2xq',
        NAMESPACE: 'istio-system',
        INSTANCE_IPS: '10.244.1.2',
        NODE_NAME: 'node-a',
        CLUSTER_ID: 'Kubernetes',
      },
    },
  });
  const synced = new Promise<void>((resolve) => client.onResponse((r) => r.type_url === ADDRESS_TYPE_URL && resolve()));
  client.send({ type_url: ADDRESS_TYPE_URL });
  await synced;
  return client;
}

/** A TLS connection to the webhook that has had one full review answered, so the server is reading it. */
async function openWebhookConnection(
  port: number,
): Promise<{ socket: tls.TLSSocket; received: () => string; closed: Promise<void> }> {
  const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
  let text = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  socket.write(reviewHead(Buffer.byteLength(REVIEW)) + REVIEW);
  await until(() => /\r\n\r\n/.test(text) && text.includes('shutdown-test'));
  text = '';
  return { socket, received: () => text, closed };
}

/** Sends the head and the first half of a review; resolves once the bytes are handed to the kernel. */
function sendHalfReview(socket: tls.TLSSocket): Promise<string> {
  const half = REVIEW.slice(0, Math.floor(REVIEW.length / 2));
  return new Promise((resolve) =>
    socket.write(reviewHead(Buffer.byteLength(REVIEW)) + half, () => resolve(REVIEW.slice(half.length))),
  );
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(['SIGTERM', 'SIGINT'] as const)('%s', (signal) => {
  let started: Started;

  afterEach(async () => {
    await started.server.stop();
    rmSync(started.state, { recursive: true, force: true });
  });

  it(`with a webhook request half-sent, ${signal} ends xDS streams with OK and exits 0 at --shutdownDuration`, async () => {
    started = startServer(['--shutdownDuration', SHORT_DEADLINE]);
    const { server } = started;
    const ztunnel = await connectZtunnel(await server.port('grpc'));
    const webhook = await openWebhookConnection(await server.port('webhook'));
    await sendHalfReview(webhook.socket);
    // Let the half request reach the server's reader before the signal.
    await new Promise((r) => setTimeout(r, 200));

    server.child.kill(signal);
    const status = await ztunnel.status;
    const exit = await server.exited;
    await webhook.closed;
    ztunnel.close();

    // OK is how the server ends a stream on purpose; a cut connection would be UNAVAILABLE or CANCELLED.
    expect({ code: status.code, details: status.details }).toEqual({ code: 0, details: 'OK' });
    expect(exit).toEqual({ code: 0, signal: null });
    expect(server.logs.some((l) => l.msg === 'stopped')).toBe(true);
    // The request never completed, so it got no answer; its connection was closed at the deadline.
    expect(webhook.received()).toBe('');
  });

  it(`a webhook request in flight at ${signal} is answered, then the connection closes and the process exits 0`, async () => {
    started = startServer(['--shutdownDuration', '20s']);
    const { server } = started;
    const webhook = await openWebhookConnection(await server.port('webhook'));
    const rest = await sendHalfReview(webhook.socket);
    await new Promise((r) => setTimeout(r, 200));

    server.child.kill(signal);
    await server.waitForLog((l) => l.msg === 'signal received');
    webhook.socket.write(rest);
    await webhook.closed;
    const exit = await server.exited;

    expect(webhook.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(webhook.received()).toMatch(/\r\nconnection: close\r\n/i);
    expect(webhook.received()).toContain('"uid":"shutdown-test"');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(server.logs.find((l) => l.msg === 'stopped')?.['forced']).toEqual([]);
  });
});

describe('--shutdownDuration', () => {
  it('a value that is not a Go duration exits 2 with one line naming the flag', () => {
    const r = runCli(['--shutdownDuration', 'soon']);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'istiod-ts: invalid value for --shutdownDuration: invalid duration "soon": expected a number and a unit (ns, us, ms, s, m, h), e.g. "10s" or "1h30m"',
    ]);
  });

  it('a zero or negative value exits 2 with one line saying it must be greater than 0', () => {
    for (const value of ['0s', '-5s']) {
      const r = runCli([`--shutdownDuration=${value}`]);
      expect(r.status).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual([
        'istiod-ts: invalid value for --shutdownDuration: must be greater than 0',
      ]);
    }
  });

  it('--help shows it with its default of 10s', () => {
    const r = runCli(['--help']);
    expect(r.stdout).toMatch(/--shutdownDuration\s+.*\(default "10s"\)/);
  });
});
