// The wait for the API server at start-up: the last error for /ready, one warning per distinct
// error, and done as soon as GET /version answers.

import { logs } from '../../../src/log/logger';
import { KubeClient } from '../../../src/store/kube/client';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { ApiServerReachability, REACHABILITY_BACKOFF } from '../../../src/store/kube/reachability';
import { TestApiServer } from '../../support/apiserver';

let api: TestApiServer;
let logged: { level: string; scope: string; msg: string; err?: string }[];

beforeEach(async () => {
  api = await TestApiServer.start();
  logged = [];
  logs.setLevel('kube', 'warn');
  logs.setDestination({ write: (line: string) => logged.push(JSON.parse(line) as (typeof logged)[number]) });
});

afterEach(async () => {
  logs.setDestination(process.stderr);
  await api.close();
});

test('REACHABILITY_BACKOFF starts at 1 s and stops growing at 30 s', () => {
  expect(REACHABILITY_BACKOFF).toEqual({ initialMs: 1_000, maxMs: 30_000 });
});

test('an unreachable API server is retried with one warning, reported as the reason, and left behind once it answers', async () => {
  const outage = api.unreachableFor(1_000);
  const reach = new ApiServerReachability(new KubeClient(loadKubeConfig(api.writeKubeconfig())), {
    backoff: { initialMs: 50, maxMs: 100 },
  });
  await new Promise((resolve) => setTimeout(resolve, 400));
  expect(reach.isReachable).toBe(false);
  expect(reach.waitingFor()).toEqual([expect.stringContaining(`cannot reach the Kubernetes API server at ${api.url}`)]);
  await outage;
  await reach.reachable;
  expect(reach.waitingFor()).toEqual([]);
  const warnings = logged.filter((l) => l.scope === 'kube' && l.level === 'warn');
  expect(warnings).toHaveLength(1);
  expect(warnings[0]?.msg).toBe('waiting for the API server');
  expect(warnings[0]?.err).toContain(api.url);
});
