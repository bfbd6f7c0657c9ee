// `istiod-ts explain` on the demo mesh (examples/demo), read from the folder as `serve` reads it, and
// /debug/explain on a running local-mode server over the same folder: the same decision records.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runExplainCommand } from '../../../src/cli/explain';
import { parseServeOptions } from '../../../src/config/options';
import type { ExplainRecord, WorkloadRecord } from '../../../src/explain/explainer';
import { RunningServer, startServer } from '../../../src/server/server';
import { DEMO, LOOPBACK_LISTENER_ARGS } from '../../support/cli';

const id = (ns: string, sa: string) => `spiffe://cluster.local/ns/${ns}/sa/${sa}`;
const PRODUCTPAGE = 'bookinfo/productpage-v1-5b8f6d9c4-x7k2p';
const RATINGS = 'bookinfo/ratings-v1-84c9d7f6b-r5t8w';
const SLEEP = 'legacy/sleep-v1-7b8c9d6f5-k9m2n';
const QUIET = ['--log_output_level', 'default:error'];

async function explain(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runExplainCommand(
    args,
    (s) => (out += s),
    (s) => (err += s),
    {},
  );
  return { code, out, err };
}

const local = (...args: string[]) => explain(...args, '--configDir', DEMO, ...QUIET);

async function localJson(...args: string[]): Promise<{ code: number; record: ExplainRecord }> {
  const r = await local(...args, '--output', 'json');
  expect(r.err).toBe('');
  return { code: r.code, record: JSON.parse(r.out) as ExplainRecord };
}

describe('explain identity on the demo mesh', () => {
  it('allows the identity of a pod on the node (exit 0) and names the pod that grants it', async () => {
    const r = await local('identity', '--node', 'node-a', '--identity', id('bookinfo', 'bookinfo-productpage'));
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`identity ${id('bookinfo', 'bookinfo-productpage')} for a ztunnel on node node-a: ALLOWED`);
    expect(r.out).toContain('asked as node agent pod istio-system/ztunnel-7k2xq');
    expect(r.out).toContain(`pods filed under node-a/bookinfo/bookinfo-productpage: ${PRODUCTPAGE}`);
  });

  it('records every check of the node authorizer in its order, asked as the node agent pod', async () => {
    const { code, record } = await localJson(
      'identity',
      '--node',
      'node-a',
      '--identity',
      id('bookinfo', 'bookinfo-productpage'),
    );
    expect(code).toBe(0);
    expect(record).toMatchObject({ kind: 'identity', allowed: true, askedAs: 'istio-system/ztunnel-7k2xq' });
    expect(record.steps.map((s) => s.rule)).toEqual([
      'explain.caller',
      'caller.trusted',
      'identity.in-mesh',
      'caller.pod',
      'identity.on-node',
    ]);
  });

  it('denies an identity whose only pod runs on another node (exit 1) and says where that pod is filed', async () => {
    const { code, record } = await localJson(
      'identity',
      '--node',
      'node-a',
      '--identity',
      id('bookinfo', 'bookinfo-ratings'),
    );
    expect(code).toBe(1);
    expect(record).toMatchObject({ allowed: false, reason: 'no_pod_on_node' });
    const filed = record.steps.find((s) => s.rule === 'index.filed');
    expect(filed?.outcome).toBe('filed under node-b/bookinfo/bookinfo-ratings');
    expect(filed?.facts).toContainEqual({ name: `pod ${RATINGS} spec.nodeName`, value: 'node-b' });
  });

  it('denies an unknown service account (exit 1): no pod runs as it', async () => {
    const r = await local('identity', '--node', 'node-b', '--identity', id('bookinfo', 'nobody'));
    expect(r.code).toBe(1);
    expect(r.out).toContain('DENIED (no_pod_on_node)');
    expect(r.out).toContain('-> no pod runs as bookinfo/nobody');
  });

  it('with impersonation disabled (CA_TRUSTED_NODE_ACCOUNTS empty) denies as the CA does', async () => {
    let out = '';
    const code = await runExplainCommand(
      [
        'identity',
        '--node',
        'node-a',
        '--identity',
        id('bookinfo', 'bookinfo-productpage'),
        '--configDir',
        DEMO,
        '-o',
        'json',
      ],
      (s) => (out += s),
      () => undefined,
      { CA_TRUSTED_NODE_ACCOUNTS: '' },
    );
    expect(code).toBe(1);
    expect(JSON.parse(out)).toMatchObject({ allowed: false, reason: 'impersonation_disabled' });
  });
});

describe('explain workload on the demo mesh', () => {
  it('shows protocol, services, waypoint and policies of an ambient pod, each with the rule that decided', async () => {
    const r = await local('workload', RATINGS);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/protocol: +HBONE/);
    expect(r.out).toMatch(/services: +bookinfo\/ratings\.bookinfo\.svc\.cluster\.local/);
    expect(r.out).toMatch(/waypoint: +\(none\)/);
    expect(r.out).toMatch(/policies: +bookinfo\/ratings-from-reviews, istio-system\/istio_converted_static_strict/);
    for (const rule of ['protocol.redirection', 'services.selector', 'waypoint.unlabelled', 'policies.selector'])
      expect(r.out).toContain(`[${rule}]`);
    expect(r.out).toContain('annotation ambient.istio.io/redirection: enabled');
    expect(r.out).toContain('namespace label istio.io/dataplane-mode: ambient');
  });

  it('a pod without the redirection annotation gets TCP (protocol NONE), and the record says why', async () => {
    const { code, record } = await localJson('workload', SLEEP);
    expect(code).toBe(0);
    expect(record).toMatchObject({ kind: 'workload', found: true, protocol: 'NONE' });
    const protocol = record.steps.find((s) => s.topic === 'protocol');
    expect(protocol?.rule).toBe('protocol.none');
    expect(protocol?.facts).toContainEqual({ name: 'annotation ambient.istio.io/redirection', value: null });
  });

  it('the record carries the Workload as ztunnel gets it', async () => {
    const { record } = await localJson('workload', PRODUCTPAGE);
    expect((record as WorkloadRecord).resource).toMatchObject({
      name: 'productpage-v1-5b8f6d9c4-x7k2p',
      namespace: 'bookinfo',
      addresses: ['10.244.1.10'],
      tunnelProtocol: 'HBONE',
      node: 'node-a',
    });
  });

  it('NS/POD may also come after the flags, as the serve flags leave it over', async () => {
    const r = await explain('workload', '--configDir', DEMO, ...QUIET, RATINGS, '-o', 'json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ kind: 'workload', namespace: 'bookinfo', found: true });
  });

  it('a pod that does not exist is not found (exit 1)', async () => {
    const r = await local('workload', 'bookinfo/no-such-pod');
    expect(r.code).toBe(1);
    expect(r.out).toContain('workload bookinfo/no-such-pod: NOT FOUND');
  });
});

describe('explain: bad questions exit 2 with one line naming what is wrong', () => {
  it.each([
    [['identity', '--identity', id('a', 'b'), '--configDir', DEMO], 'node is missing'],
    [['identity', '--node', 'node-a', '--configDir', DEMO], 'identity is missing'],
    [
      ['identity', '--node', 'node-a', '--identity', 'cluster.local/ns/a/sa/b', '--configDir', DEMO],
      'does not start with spiffe://',
    ],
    [
      ['identity', '--node', 'Node_A', '--identity', id('a', 'b'), '--configDir', DEMO],
      'node "Node_A" is not a Kubernetes object name',
    ],
    [['workload', 'just-a-pod', '--configDir', DEMO], 'workload "just-a-pod" is not NAMESPACE/POD'],
    [['workload', '--configDir', DEMO], 'workload is missing'],
    [['pods'], 'explain what? "pods" is neither identity nor workload'],
    [['workload', RATINGS, '--output', 'yaml', '--configDir', DEMO], '--output must be text or json, got "yaml"'],
    [['workload', RATINGS], 'give --configDir DIR to explain a folder of manifests, or --server'],
    [['workload', RATINGS, '--server', 'localhost:1'], 'is not a URL: give http://HOST:PORT'],
    [['workload', RATINGS, '--server', 'ftp://127.0.0.1:1'], 'is not http(s)://HOST:PORT'],
    [
      ['workload', RATINGS, '--server', 'http://127.0.0.1:1', '--configDir', DEMO],
      '--configDir has no effect with --server',
    ],
  ])('%j', async (args, message) => {
    const r = await explain(...args);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain(message);
    expect(r.err.trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('/debug/explain on a running server over the demo mesh', () => {
  let server: RunningServer;
  let dir: string;
  let base: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'explain-demo-'));
    server = await startServer(
      parseServeOptions(['--configDir', DEMO, '--stateDir', dir, ...QUIET, ...LOOPBACK_LISTENER_ARGS], {}),
    );
    await server.secureStarted;
    const http = server.listeners.get('http');
    if (!http) throw new Error('no http listener');
    base = `http://127.0.0.1:${http.port}`;
  });

  afterAll(async () => {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    [
      `identity=${encodeURIComponent(id('bookinfo', 'bookinfo-productpage'))}&node=node-a`,
      ['identity', '--node', 'node-a', '--identity', id('bookinfo', 'bookinfo-productpage')],
    ],
    [
      `identity=${encodeURIComponent(id('bookinfo', 'bookinfo-ratings'))}&node=node-a`,
      ['identity', '--node', 'node-a', '--identity', id('bookinfo', 'bookinfo-ratings')],
    ],
    [`workload=${RATINGS}`, ['workload', RATINGS]],
  ])('?%s gives the record the local command prints', async (query, args) => {
    const res = await fetch(`${base}/debug/explain?${query}`);
    expect(res.status).toBe(200);
    const { record } = await localJson(...args);
    expect(await res.json()).toEqual(record);
  });

  it('explain --server prints what the local command prints, with the same exit status', async () => {
    for (const args of [
      ['identity', '--node', 'node-a', '--identity', id('bookinfo', 'bookinfo-ratings')],
      ['workload', PRODUCTPAGE],
    ]) {
      const remote = await explain(...args, '--server', base);
      const here = await local(...args);
      expect(remote.err).toBe('');
      expect(remote).toEqual(here);
    }
  });

  it('a server that cannot be reached is a failure (exit 1), not a bad question', async () => {
    const r = await explain('workload', RATINGS, '--server', 'http://127.0.0.1:1');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^istiod-ts explain: cannot ask http:\/\/127\.0\.0\.1:1\/debug\/explain: /);
  });

  it('a bad question is a 400 naming what is wrong, and --server turns it into exit 2', async () => {
    const res = await fetch(`${base}/debug/explain?workload=nope`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'workload "nope" is not NAMESPACE/POD' });
    const none = await fetch(`${base}/debug/explain`);
    expect(none.status).toBe(400);
    const both = await fetch(`${base}/debug/explain?workload=${RATINGS}&node=node-a`);
    expect(((await both.json()) as { error: string }).error).toContain('not both');
  });
});
