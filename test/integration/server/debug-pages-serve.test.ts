// The debug pages as `serve` wires them on the demo mesh: /debug/configz, /debug/connections,
// /debug/push_status and /debug/mesh answer on httpAddr and, for loopback callers, on monitoringAddr.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseServeOptions } from '../../../src/config/options';
import { DEBUG_CONTINUE_HEADER } from '../../../src/contract/debug-page';
import { meshConfigJson } from '../../../src/server/debug-mesh';
import { RunningServer, startServer } from '../../../src/server/server';
import { DEMO, LOOPBACK_LISTENER_ARGS } from '../../support/cli';

let server: RunningServer;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'debug-pages-serve-'));
  const options = parseServeOptions(
    [
      '--configDir',
      DEMO,
      '--stateDir',
      dir,
      '--meshConfig',
      path.join(dir, 'no-such-mesh-file'),
      '--log_output_level',
      'default:error',
      ...LOOPBACK_LISTENER_ARGS,
    ],
    {},
  );
  server = await startServer(options);
  await server.secureStarted;
});

afterAll(async () => {
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

function url(listener: 'http' | 'monitoring', page: string): string {
  const l = server.listeners.get(listener);
  if (!l) throw new Error(`no ${listener} listener`);
  return `http://127.0.0.1:${l.port}/debug/${page}`;
}

describe.each(['http', 'monitoring'] as const)('on %s', (listener) => {
  test('the index lists connections, push_status, configz and mesh', async () => {
    const index = (await (await fetch(url(listener, ''))).json()) as { endpoints: { path: string }[] };
    const paths = index.endpoints.map((e) => e.path);
    for (const p of ['connections', 'push_status', 'configz', 'mesh']) expect(paths).toContain(`/debug/${p}`);
  });

  test("/debug/configz lists the demo's Istio config as Kubernetes objects, never Pods or Services", async () => {
    const res = await fetch(url(listener, 'configz'));
    expect(res.status).toBe(200);
    const objects = (await res.json()) as { apiVersion: string; kind: string; metadata: { name: string } }[];
    expect(objects.map((o) => `${o.apiVersion} ${o.kind}`).sort()).toEqual([
      'security.istio.io/v1 AuthorizationPolicy',
      'security.istio.io/v1 PeerAuthentication',
    ]);
    for (const o of objects) expect(o).toHaveProperty('spec');
  });

  test('/debug/configz pages: limit=1 gives one object and a token for the next', async () => {
    const first = await fetch(url(listener, 'configz?limit=1'));
    const token = first.headers.get(DEBUG_CONTINUE_HEADER);
    expect(((await first.json()) as unknown[]).length).toBe(1);
    expect(first.headers.get('link')).toMatch(/^<\/debug\/configz\?limit=1&continue=[A-Za-z0-9_-]+>; rel="next"$/);
    const second = await fetch(url(listener, `configz?limit=1&continue=${token ?? ''}`));
    expect(((await second.json()) as unknown[]).length).toBe(1);
    expect(second.headers.get(DEBUG_CONTINUE_HEADER)).toBeNull();
  });

  test('/debug/connections and /debug/push_status answer in their shapes with no client connected', async () => {
    expect(await (await fetch(url(listener, 'connections'))).json()).toEqual({ totalClients: 0, clients: [] });
    const status = (await (await fetch(url(listener, 'push_status'))).json()) as Record<string, unknown>;
    expect(status).toMatchObject({ pilot_total_xds_rejects: {}, rejectsTotal: 0 });
    expect(typeof status['totalPushes']).toBe('number');
  });

  test("/debug/mesh is the effective meshConfig as istiod's JSON shows it", async () => {
    const mesh = (await (await fetch(url(listener, 'mesh'))).json()) as Record<string, unknown>;
    expect(mesh).toEqual(meshConfigJson(server.ctx.mesh.current()));
    expect(mesh).toMatchObject({ trustDomain: 'cluster.local', rootNamespace: 'istio-system' });
    expect(mesh).not.toHaveProperty('accessLogFile');
  });

  test('a bad page request is a 400 naming the parameter', async () => {
    const res = await fetch(url(listener, 'ambient/workloads?limit=zero'));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/^limit must be a whole number/);
  });
});
