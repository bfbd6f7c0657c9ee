// `serve` in Kubernetes mode with remote secrets: the whole server against three test API servers
// (the config cluster and two remotes, one of which never answers its lists). /ready waits for the
// slow remote only until PILOT_REMOTE_CLUSTER_TIMEOUT, /debug/clusters shows every cluster without
// a credential, and the metrics follow the remotes.

import { TestApiServer, eventually } from '../../support/apiserver';
import { fatPod, namespace } from '../../support/apiserver/fixtures';
import { remoteKubeconfig, remoteSecret, remoteToken } from '../../support/store/remote-secret';
import { remoteClusterReadiness } from '../../../src/store/kube/remote-clusters';
import { readyAt, startServing, type InProcessServer } from './serve-fixture';

const NS = 'istio-system';

let local: TestApiServer;
let east: TestApiServer;
let west: TestApiServer;
let server: InProcessServer | undefined;

beforeEach(async () => {
  [local, east, west] = await Promise.all([TestApiServer.start(), TestApiServer.start(), TestApiServer.start()]);
  local.put(namespace(NS));
  for (const [name, remote] of [
    ['east', east],
    ['west', west],
  ] as const) {
    remote.put(namespace('apps'));
    remote.put(fatPod('apps', `${name}-pod`, name === 'east' ? 1 : 2));
  }
});

afterEach(async () => {
  await server?.stop();
  server = undefined;
  await Promise.all([local.close(), east.close(), west.close()]);
});

const kubeconfigFor = (id: string, remote: TestApiServer) =>
  remoteKubeconfig(id, { server: remote.url, cluster: { 'insecure-skip-tls-verify': true } });

interface ClusterRow {
  id: string;
  local: boolean;
  synced: boolean;
  state?: string;
  secret?: string;
  kinds: Record<string, { synced: boolean; objects: number }>;
}

async function clustersPage(s: InProcessServer): Promise<{ text: string; clusters: ClusterRow[] }> {
  const res = await fetch(`http://${s.address('http')}/debug/clusters`);
  const text = await res.text();
  return { text, clusters: (JSON.parse(text) as { clusters: ClusterRow[] }).clusters };
}

async function metricsText(s: InProcessServer): Promise<string> {
  return (await fetch(`http://${s.address('monitoring')}/metrics`)).text();
}

test('a remote that never answers holds /ready back only until the timeout; /debug/clusters and the metrics show each cluster, never a token', async () => {
  west.delays.add({ verb: 'list', ms: 120_000 });
  local.put(remoteSecret('istio-remote-secret-east', { east: kubeconfigFor('east', east) }));
  local.put(remoteSecret('istio-remote-secret-west', { west: kubeconfigFor('west', west) }));
  const { httpAddress, started } = await startServing(local, { PILOT_REMOTE_CLUSTER_TIMEOUT: '3s' });

  await eventually('/ready names the remote that has not listed yet', async () => {
    const ready = await readyAt(httpAddress).catch(() => undefined);
    return ready?.status === 503 && ready.body.includes(`${remoteClusterReadiness('west')} (lists not in:`);
  });
  server = await started;
  await eventually('ready once the timeout has passed', async () => (await server!.ready()).status === 200, 15_000);

  const { text, clusters } = await clustersPage(server);
  expect(clusters.map((c) => [c.id, c.local, c.synced])).toEqual([
    ['Kubernetes', true, true],
    ['east', false, true],
    ['west', false, false],
  ]);
  expect(clusters[1]).toMatchObject({ state: 'synced', secret: `${NS}/istio-remote-secret-east` });
  expect(clusters[1]!.kinds['Pod']).toMatchObject({ synced: true, objects: 1 });
  expect(clusters[2]).toMatchObject({ state: 'timeout' });
  for (const id of ['east', 'west']) expect(text).not.toContain(remoteToken(id));

  const metrics = await metricsText(server);
  expect(metrics).toMatch(/^istiod_ts_remote_clusters\{state="synced"\} 1$/m);
  expect(metrics).toMatch(/^istiod_ts_remote_clusters\{state="timeout"\} 1$/m);
  expect(metrics).toMatch(/^istiod_ts_remote_cluster_sync_timeouts_total 1$/m);

  // The secret goes: so does the cluster, from the page and the gauge.
  local.delete('v1', 'Secret', NS, 'istio-remote-secret-west');
  await eventually('west is gone', async () => (await clustersPage(server!)).clusters.length === 2);
  expect(await metricsText(server)).toMatch(/^istiod_ts_remote_clusters\{state="timeout"\} 0$/m);
  expect((await server.ready()).status).toBe(200);
});

test('a remote secret key refused is counted by reason and shown on /debug/clusters', async () => {
  local.put(remoteSecret('istio-remote-secret', { Kubernetes: kubeconfigFor('Kubernetes', east), broken: '{' }));
  server = await (await startServing(local, { PILOT_REMOTE_CLUSTER_TIMEOUT: '1s' })).started;
  await eventually('ready', async () => (await server!.ready()).status === 200, 15_000);
  const page = JSON.parse((await clustersPage(server)).text) as {
    secrets: { secret: string; problems: { key: string; reason: string }[] }[];
  };
  expect(page.secrets.map((s) => [s.secret, s.problems.map((p) => `${p.key}: ${p.reason}`)])).toEqual([
    [`${NS}/istio-remote-secret`, ['Kubernetes: local-cluster-id', 'broken: invalid-kubeconfig']],
  ]);
  const metrics = await metricsText(server);
  expect(metrics).toMatch(/^istiod_ts_remote_secret_errors_total\{reason="local-cluster-id"\} 1$/m);
  expect(metrics).toMatch(/^istiod_ts_remote_secret_errors_total\{reason="invalid-kubeconfig"\} 1$/m);
});
