// /debug/ on the monitoring port, by istiod's rules: loopback callers are served; anyone else
// authenticates as xDS and CA callers do (here a bearer token checked by TokenReview against the
// test API server) and must be in the system namespace. Refusals tell the caller nothing; the log
// and istiod_ts_debug_auth_failures_total say why.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { parseServeOptions } from '../../../src/config/options';
import { callAuthenticatorFactory } from '../../../src/server/authenticator';
import { DebugRouter } from '../../../src/server/debug';
import {
  DEBUG_AUTH_FAILURES_METRIC,
  DEBUG_FORBIDDEN_MESSAGE,
  DEBUG_UNAUTHENTICATED_MESSAGE,
  MonitoringDebugAccess,
} from '../../../src/server/debug-access';
import { monitoringHandler } from '../../../src/server/http';
import { logs } from '../../../src/log/logger';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { singleCluster } from '../../../src/store/clusters';
import { MemoryStore } from '../../../src/store/memory-store';
import { TestApiServer, serviceAccountIdentity } from '../../support/apiserver';
import { staticMesh } from '../../support/ca/harness';
import { captureLogs } from '../../support/logs';

const SYSTEM_TOKEN = 'token-istio-system-istioctl';
const OTHER_TOKEN = 'token-default-sleep';

let api: TestApiServer;
let registry: Registry;
const servers: http.Server[] = [];
let remotePort: number;
let loopbackPort: number;
let access: MonitoringDebugAccess;

async function serve(a: MonitoringDebugAccess, router: DebugRouter): Promise<number> {
  const server = http.createServer(monitoringHandler(registry, { router, access: a }));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function get(port: number, token?: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/debug/mesh`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return { status: res.status, body: await res.text() };
}

async function failures(reason: string): Promise<number> {
  const metric = await registry.getSingleMetric(DEBUG_AUTH_FAILURES_METRIC)?.get();
  return metric?.values.find((v) => v.labels['reason'] === reason)?.value ?? 0;
}

beforeAll(async () => {
  // The refusals' warnings are read where a test asks for them, not printed.
  logs.setLevel('debug', 'silent');
  api = await TestApiServer.start();
  api.registerToken(
    SYSTEM_TOKEN,
    serviceAccountIdentity({ namespace: 'istio-system', serviceAccount: 'istioctl', audiences: ['istio-ca'] }),
  );
  api.registerToken(
    OTHER_TOKEN,
    serviceAccountIdentity({ namespace: 'default', serviceAccount: 'sleep', audiences: ['istio-ca'] }),
  );
  const options = parseServeOptions(['--log_output_level', 'default:error'], { POD_NAMESPACE: 'istio-system' });
  const mesh = staticMesh();
  const kubeConfig = loadKubeConfig(api.writeKubeconfig());
  const store = new MemoryStore();
  const clusters = singleCluster({ id: 'Kubernetes', local: true, store, synced: () => true });
  const authenticator = callAuthenticatorFactory(options, mesh, clusters, { kubeConfig })(() => []);
  registry = new Registry();
  const router = new DebugRouter();
  router.add('mesh', 'meshConfig', () => ({ body: mesh.current() }));
  // Every test connection comes from loopback; this listener treats its callers as remote.
  access = new MonitoringDebugAccess('istio-system', registry, () => false);
  access.setAuthenticator(authenticator);
  remotePort = await serve(access, router);
  const local = new MonitoringDebugAccess('istio-system', new Registry());
  local.setAuthenticator(authenticator);
  loopbackPort = await serve(local, router);
});

afterAll(async () => {
  for (const s of servers) await new Promise((resolve) => s.close(resolve));
  await api.close();
});

test('a loopback caller is served without credentials', async () => {
  const res = await get(loopbackPort);
  expect(res.status).toBe(200);
  expect(JSON.parse(res.body)).toMatchObject({ trustDomain: 'cluster.local' });
});

test('a remote caller without a token gets 401 with a generic message; the log and metric say why', async () => {
  const before = await failures('no_credentials');
  const captured = captureLogs();
  logs.setLevel('debug', 'warn');
  try {
    const res = await get(remotePort);
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toEqual({ error: DEBUG_UNAUTHENTICATED_MESSAGE });
    expect(captured.lines().some((l) => l['reason'] === 'no_credentials' && l['path'] === '/debug/mesh')).toBe(true);
  } finally {
    logs.setLevel('debug', 'silent');
    captured.restore();
  }
  expect(await failures('no_credentials')).toBe(before + 1);
});

test('a remote caller with a token TokenReview refuses gets 401 and never learns why', async () => {
  const before = await failures('invalid_token');
  const res = await get(remotePort, 'not-a-registered-token');
  expect(res.status).toBe(401);
  expect(res.body).not.toContain('lookup');
  expect(await failures('invalid_token')).toBeGreaterThan(before);
});

test('a remote caller authenticated outside the system namespace gets 403', async () => {
  const before = await failures('not_system_namespace');
  const res = await get(remotePort, OTHER_TOKEN);
  expect(res.status).toBe(403);
  expect(JSON.parse(res.body)).toEqual({ error: DEBUG_FORBIDDEN_MESSAGE });
  expect(await failures('not_system_namespace')).toBe(before + 1);
});

test('a remote caller with a system-namespace token is served', async () => {
  const res = await get(remotePort, SYSTEM_TOKEN);
  expect(res.status).toBe(200);
  expect(JSON.parse(res.body)).toMatchObject({ rootNamespace: 'istio-system' });
});

test('before the authenticator has started, a remote caller gets 503 and a loopback caller is still served', async () => {
  const router = new DebugRouter();
  router.add('mesh', 'meshConfig', () => ({ body: {} }));
  const early = await serve(new MonitoringDebugAccess('istio-system', new Registry(), () => false), router);
  expect((await get(early, SYSTEM_TOKEN)).status).toBe(503);
  const earlyLocal = await serve(new MonitoringDebugAccess('istio-system', new Registry()), router);
  expect((await get(earlyLocal)).status).toBe(200);
});
