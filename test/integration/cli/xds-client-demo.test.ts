// `istiod-ts xds-client` against an in-process local-mode server on examples/demo, as the README's
// quick start runs it: the operator sees what the demo's ztunnel on node-a is told.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runXdsClientCommand } from '../../../src/cli/xds-client';
import { opensslVerify } from '../../support/ca/fixtures';
import { parseServeOptions } from '../../../src/config/options';
import { loadOrCreateTokenKey, signLocalToken } from '../../../src/security/local-jwt';
import { RunningServer, startServer } from '../../../src/server/server';

const DEMO = path.join(__dirname, '../../../examples/demo');
/** The demo's ztunnel on node-a; local mode derives the pod uid from namespace and name (README). */
const ZTUNNEL = {
  namespace: 'istio-system',
  serviceAccount: 'ztunnel',
  podName: 'ztunnel-7k2xq',
  podUid: '086e903e-f072-5600-98e5-474373f45cea',
  nodeName: 'node-a',
};

let server: RunningServer;
let dir: string;
let token: string;
let port: number;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xds-client-demo-'));
  const loopback = ['grpcAddr', 'secureGRPCAddr', 'httpsAddr', 'monitoringAddr', 'httpAddr'].flatMap((f) => [
    `--${f}`,
    '127.0.0.1:0',
  ]);
  const options = parseServeOptions(
    ['--configDir', DEMO, '--stateDir', dir, '--log_output_level', 'default:error', ...loopback],
    {},
  );
  server = await startServer(options);
  await server.secureStarted;
  const secure = server.listeners.get('secure-grpc');
  if (!secure) throw new Error('no secure-grpc listener');
  port = secure.port;
  token = signLocalToken(loadOrCreateTokenKey(dir), ZTUNNEL, ['istio-ca'], 3600, Date.now());
});

afterAll(async () => {
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const common = ['--addr', `127.0.0.1:${port}`, '--rootCert', path.join(dir, 'root-cert.pem')];
  const code = await runXdsClientCommand(
    [...common, '--serverName', 'istiod.istio-system.svc', '--token', token, ...args],
    (s) => (out += s),
    (s) => (err += s),
  );
  return { code, out, err };
}

test("a Service port with a named targetPort shows the number the workloads' port maps resolve it to", async () => {
  const r = await run('--node', 'node-a');
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  // productpage: port 9080, targetPort "http", which is containerPort 9080 on its pod.
  expect(r.out).toMatch(/bookinfo\/productpage\.bookinfo\.svc\.cluster\.local\s+\S+\s+9080->9080(\s|$)/m);
  expect(r.out).not.toContain('->0');
});

describe('xds-client cert', () => {
  const certArgs = (identity: string, ...extra: string[]) => {
    const common = ['--addr', `127.0.0.1:${port}`, '--rootCert', path.join(dir, 'root-cert.pem')];
    return [
      'cert',
      '--identity',
      identity,
      ...common,
      '--serverName',
      'istiod.istio-system.svc',
      '--token',
      token,
      ...extra,
    ];
  };
  const runCert = async (args: string[]) => {
    let out = '';
    let err = '';
    const code = await runXdsClientCommand(
      args,
      (s) => (out += s),
      (s) => (err += s),
    );
    return { code, out, err };
  };

  test("an identity of a pod on the ztunnel's node gets a certificate: SAN, validity and a chain that verifies", async () => {
    const id = 'spiffe://cluster.local/ns/bookinfo/sa/bookinfo-productpage';
    const chainFile = path.join(dir, 'chain.pem');
    const r = await runCert(certArgs(id, '--chainOut', chainFile));
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`^SANS +URI:${id}$`, 'm'));
    expect(r.out).toMatch(/^NOT BEFORE \d{4}-\d\d-\d\dT/m);
    expect(r.out).toMatch(/^NOT AFTER {2}\d{4}-\d\d-\d\dT/m);
    expect(r.out).toMatch(/^ {2}0 {2}subject=\S*.* {2}issuer=.+$/m);
    expect(r.out).not.toMatch(/PRIVATE KEY/);
    const pems =
      fs.readFileSync(chainFile, 'utf8').match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
    expect(pems.length).toBeGreaterThan(0);
    const [leaf, ...rest] = pems;
    const verified = opensslVerify(
      fs.readFileSync(path.join(dir, 'root-cert.pem'), 'utf8'),
      leaf ?? '',
      rest.join('\n'),
    );
    expect(verified).toContain('OK');
  });

  test("an identity with no pod on the ztunnel's node is refused as istiod refuses it (UNAUTHENTICATED, impersonation): one line, exit 1", async () => {
    const r = await runCert(certArgs('spiffe://cluster.local/ns/bookinfo/sa/bookinfo-ratings'));
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err.trimEnd().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/^istiod-ts xds-client cert: UNAUTHENTICATED \(code 16\): .*impersonation/);
  });

  test('a rejected token is UNAUTHENTICATED on one line, exit 1', async () => {
    const args = certArgs('spiffe://cluster.local/ns/bookinfo/sa/bookinfo-productpage');
    args[args.indexOf('--token') + 1] = 'not-a-token';
    const r = await runCert(args);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^istiod-ts xds-client cert: UNAUTHENTICATED \(code 16\): [^\n]*\n$/);
  });
});

test('xds-client cert --help names its flags; a missing --identity is a usage error (exit 2)', async () => {
  let out = '';
  expect(await runXdsClientCommand(['cert', '--help'], (s) => (out += s))).toBe(0);
  expect(out).toMatch(/^Usage: istiod-ts xds-client cert --identity /);
  expect(out).toContain('--chainOut');
  let err = '';
  const code = await runXdsClientCommand(
    ['cert', '--addr', '127.0.0.1:1'],
    () => undefined,
    (s) => (err += s),
  );
  expect(code).toBe(2);
  expect(err).toBe('istiod-ts xds-client cert: missing --identity (see --help)\n');
});
