// `istiod-ts xds-client` against a real TLS server: what an operator sees is what ztunnel gets.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runXdsClientCommand } from '../../../src/cli/xds-client';
import { demoCache } from '../../support/xds/fake-cache';
import { GOOD_TOKEN } from '../../support/xds/fake-authenticator';
import { Harness, startHarness } from './fixtures/harness';
import { SERVER_NAME } from '../../support/tls';

let harness: Harness;
let dir: string;

beforeAll(async () => {
  harness = await startHarness(demoCache('proto'));
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xds-cli-'));
  fs.writeFileSync(path.join(dir, 'root.pem'), harness.pki.caPem);
  fs.writeFileSync(path.join(dir, 'token'), `${GOOD_TOKEN}\n`);
});

afterAll(async () => {
  await harness.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function run(...extra: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runXdsClientCommand(
    [
      '--addr',
      `127.0.0.1:${harness.port}`,
      '--rootCert',
      path.join(dir, 'root.pem'),
      '--serverName',
      SERVER_NAME,
      '--node',
      'node-1',
      ...extra,
    ],
    (s) => (out += s),
    (s) => (err += s),
  );
  return { code, out, err };
}

test('prints the workloads, services and policies a wildcard ztunnel receives', async () => {
  const r = await run('--token', GOOD_TOKEN);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  expect(r.out).toContain('WORKLOADS (3)');
  expect(r.out).toMatch(/Kubernetes\/\/Pod\/default\/a\s+default\s+a\s+10\.0\.0\.1\s+node-1/);
  expect(r.out).toContain('SERVICES (1)');
  expect(r.out).toMatch(/default\/echo\.default\.svc\.cluster\.local\s+\/10\.96\.0\.10\s+80->8080/);
  expect(r.out).toContain('POLICIES (1)');
  expect(r.out).toContain('default/allow-echo');
});

test('reads the token from a file and prints JSON', async () => {
  const r = await run('--token', path.join(dir, 'token'), '--output', 'json');
  expect(r.code).toBe(0);
  expect(r.err).toBe('');
  const view = JSON.parse(r.out) as {
    workloads: { name: string; value: { addresses: string[] } }[];
    policies: unknown[];
  };
  expect(view.workloads.map((w) => w.name)).toEqual([
    'Kubernetes//Pod/default/a',
    'Kubernetes//Pod/default/b',
    'Kubernetes//Pod/default/c',
  ]);
  expect(view.workloads[0]!.value.addresses).toEqual(['10.0.0.1']);
  expect(view.policies).toHaveLength(1);
});

test('on-demand names fetch only what they resolve to, plus the workloads of the node', async () => {
  const r = await run('--token', GOOD_TOKEN, '--output', 'json', '--on-demand', '/10.0.0.2');
  expect(r.code).toBe(0);
  const view = JSON.parse(r.out) as { workloads: { name: string }[]; services: unknown[] };
  expect(view.workloads.map((w) => w.name)).toEqual([
    'Kubernetes//Pod/default/a',
    'Kubernetes//Pod/default/b',
    'Kubernetes//Pod/default/c',
  ]);
  expect(view.services).toEqual([]);
});

test('a rejected token ends with exit code 1 and the server status', async () => {
  const r = await run('--token', 'wrong');
  expect(r.code).toBe(1);
  expect(r.err).toContain('code 16');
});

test('missing --addr or --node is a usage error', async () => {
  let err = '';
  const code = await runXdsClientCommand(
    ['--token', 'x'],
    () => undefined,
    (s) => (err += s),
  );
  expect(code).toBe(2);
  expect(err).toContain('missing --addr, --node');
});

test('--watch names each delta (kind, namespace/name, addresses) and the fields an edit changed', async () => {
  const cache = demoCache('proto');
  const own = await startHarness(cache);
  let out = '';
  const done = runXdsClientCommand(
    [
      '--addr',
      `127.0.0.1:${own.port}`,
      '--rootCert',
      path.join(dir, 'root.pem'),
      '--serverName',
      SERVER_NAME,
      '--node',
      'node-1',
      '--token',
      GOOD_TOKEN,
      '--watch',
    ],
    (s) => (out += s),
    () => undefined,
  );
  const waitFor = async (text: string) => {
    while (!out.includes(text)) await new Promise((r) => setTimeout(r, 20));
  };
  await waitFor('POLICIES (1)');
  cache.setWorkload({ uid: 'Kubernetes//Pod/default/d', ip: '10.0.0.4', node: 'node-2' }).commit();
  await waitFor('+ added Workload default/d [10.0.0.4] uid=Kubernetes//Pod/default/d');
  cache.setWorkload({ uid: 'Kubernetes//Pod/default/a', ip: '10.0.0.1', node: 'node-2' }).commit();
  await waitFor('~ changed Workload default/a [10.0.0.1] uid=Kubernetes//Pod/default/a');
  expect(out).toMatch(/~ changed Workload default\/a .* fields=node$/m);
  cache.delete('type.googleapis.com/istio.workload.Address', 'Kubernetes//Pod/default/d').commit();
  // The removal carries only the uid; the name and address printed are the ones last received.
  await waitFor('- removed Workload default/d [10.0.0.4] uid=Kubernetes//Pod/default/d');
  own.xds.close();
  expect(await done).toBe(0);
  await own.close();
});
