// `istiod-ts xds-client` against an in-process local-mode server on examples/demo, as the README's
// quick start runs it: the operator sees what the demo's ztunnel on node-a is told.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runXdsClientCommand } from '../../../src/cli/xds-client';
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
