// /debug/ on the monitoring port as `serve` wires it (local mode, the demo mesh): a remote caller
// is authenticated by the CA's own authenticator (here a token signed with the --stateDir key) and
// must be in POD_NAMESPACE; ENABLE_DEBUG_ON_HTTP=false takes /debug/ off both HTTP listeners.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseServeOptions } from '../../../src/config/options';
import { logs } from '../../../src/log/logger';
import { loadOrCreateTokenKey, signLocalToken } from '../../../src/security/local-jwt';
import { RunningServer, startServer, type ServerSeams } from '../../../src/server/server';
import { DEMO, LOOPBACK_LISTENER_ARGS } from '../../support/cli';

const dirs: string[] = [];
const servers: RunningServer[] = [];

async function serve(env: Record<string, string>, seams: ServerSeams): Promise<{ server: RunningServer; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'monitoring-debug-'));
  dirs.push(dir);
  const args = ['--configDir', DEMO, '--stateDir', dir, '--meshConfig', path.join(dir, 'no-such-mesh-file')];
  const options = parseServeOptions([...args, '--log_output_level', 'default:error', ...LOOPBACK_LISTENER_ARGS], env);
  const server = await startServer(options, seams);
  servers.push(server);
  await server.secureStarted;
  return { server, dir };
}

function url(server: RunningServer, listener: 'http' | 'monitoring', page: string): string {
  const l = server.listeners.get(listener);
  if (!l) throw new Error(`no ${listener} listener`);
  return `http://127.0.0.1:${l.port}/debug/${page}`;
}

function tokenFor(dir: string, namespace: string): string {
  const subject = { namespace, serviceAccount: 'istioctl', podName: 'istioctl-1', podUid: 'uid-1' };
  return signLocalToken(loadOrCreateTokenKey(dir), subject, ['istio-ca'], 600, Date.now());
}

afterAll(async () => {
  for (const s of servers) await s.stop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('a remote caller on the monitoring port', () => {
  let server: RunningServer;
  let dir: string;

  beforeAll(async () => {
    // Every connection of a test is loopback; this server treats all of them as remote.
    ({ server, dir } = await serve({}, { debugCallerIsLocal: () => false }));
    logs.setLevel('debug', 'silent');
  });

  test('with a token of the system namespace is served', async () => {
    const res = await fetch(url(server, 'monitoring', 'configz'), {
      headers: { authorization: `Bearer ${tokenFor(dir, 'istio-system')}` },
    });
    expect(res.status).toBe(200);
    expect(Array.isArray(await res.json())).toBe(true);
  });

  test('without a token gets 401', async () => {
    expect((await fetch(url(server, 'monitoring', 'configz'))).status).toBe(401);
  });

  test('with a token of another namespace gets 403', async () => {
    const res = await fetch(url(server, 'monitoring', 'configz'), {
      headers: { authorization: `Bearer ${tokenFor(dir, 'default')}` },
    });
    expect(res.status).toBe(403);
  });

  test('the httpAddr rule is unchanged: its callers are checked by address only (loopback here)', async () => {
    expect((await fetch(url(server, 'http', 'configz'))).status).toBe(200);
  });
});

test('ENABLE_DEBUG_ON_HTTP=false: /debug/ is not found on httpAddr nor on monitoringAddr; /metrics still is', async () => {
  const { server } = await serve({ ENABLE_DEBUG_ON_HTTP: 'false' }, {});
  expect((await fetch(url(server, 'http', 'mesh'))).status).toBe(404);
  expect((await fetch(url(server, 'monitoring', 'mesh'))).status).toBe(404);
  const monitoring = server.listeners.get('monitoring');
  expect((await fetch(`http://127.0.0.1:${monitoring?.port ?? 0}/metrics`)).status).toBe(200);
});
