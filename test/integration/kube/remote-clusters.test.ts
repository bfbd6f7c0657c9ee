// The remote-secret controller against three test API servers: the config cluster (where remote
// secrets live, with its own primary source) and two remotes, east and west. Secrets are added,
// changed and removed at runtime; each remote has its own store holding REMOTE_KINDS only; a remote
// that never answers is announced after the sync timeout without holding back the config cluster;
// a remote that goes away after its lists keeps its objects; a 410 re-list changes nothing that did
// not change; a cluster id in two secrets stays with the first.

import { Registry } from 'prom-client';
import { eventually, TestApiServer } from '../../support/apiserver';
import { fatPod, namespace, service } from '../../support/apiserver/fixtures';
import { remoteKubeconfig, remoteSecret, remoteToken } from '../../support/store/remote-secret';
import { FAST_TIMING, startServer, startSource, TEST_LOG_LEVELS } from './helpers';
import { captureLogs } from '../../support/logs';
import { logs } from '../../../src/log/logger';
import { REMOTE_KINDS, type ClusterEvent, type MeshCluster } from '../../../src/store/clusters';
import { KINDS } from '../../../src/store/kinds';
import type { KubeClient } from '../../../src/store/kube/client';
import type { KubeSource } from '../../../src/store/kube/source';
import type { MemoryStore } from '../../../src/store/memory-store';
import type { RemoteCluster } from '../../../src/store/kube/remote-cluster';
import {
  REMOTE_SECRETS_READINESS,
  RemoteClusters,
  remoteClusterReadiness,
  type RemoteClustersOptions,
} from '../../../src/store/kube/remote-clusters';
import type { StoreEvent } from '../../../src/store/types';
import { ReadinessTracker } from '../../../src/server/readiness';

const NS = 'istio-system';
const LOCAL_ID = 'Kubernetes';

let local: TestApiServer;
let localClient: KubeClient;
let localSource: KubeSource;
let localStore: MemoryStore;
let east: TestApiServer;
let west: TestApiServer;
let directory: RemoteClusters | undefined;
let readiness: ReadinessTracker;
let registry: Registry;
let events: ClusterEvent[];

/** A remote with two namespaces, a pod and a service each, and kinds a remote does not contribute. */
function seedRemote(server: TestApiServer, name: string): void {
  server.put(namespace(NS));
  server.put(namespace('apps'));
  server.put(fatPod('apps', `${name}-pod`, name === 'east' ? 1 : 2));
  server.put(service('apps', `${name}-svc`));
  server.put({ apiVersion: 'v1', kind: 'Node', metadata: { name: `${name}-node` } });
  server.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'istio', namespace: NS }, data: {} });
  server.put({
    apiVersion: 'security.istio.io/v1',
    kind: 'AuthorizationPolicy',
    metadata: { name: 'deny', namespace: 'apps' },
    spec: { action: 'DENY' },
  });
}

// The test API servers speak plain HTTP, which client-node allows only with TLS checks off.
const kubeconfigFor = (id: string, server: TestApiServer, token = remoteToken(id)) =>
  remoteKubeconfig(id, { server: server.url, token, cluster: { 'insecure-skip-tls-verify': true } });

beforeEach(async () => {
  ({ server: local, client: localClient } = await startServer());
  east = await TestApiServer.start();
  west = await TestApiServer.start();
  local.put(namespace(NS));
  seedRemote(east, 'east');
  seedRemote(west, 'west');
  ({ source: localSource, store: localStore } = startSource(localClient));
  await localSource.start();
  readiness = new ReadinessTracker();
  registry = new Registry();
  events = [];
});

afterEach(async () => {
  await directory?.stop();
  directory = undefined;
  await localSource.stop();
  await Promise.all([local.close(), east.close(), west.close()]);
});

function startDirectory(extra: Partial<RemoteClustersOptions> = {}): RemoteClusters {
  const localCluster: MeshCluster = {
    id: LOCAL_ID,
    local: true,
    store: localStore,
    client: localClient,
    synced: () => localStore.hasSynced(),
  };
  directory = new RemoteClusters({
    client: localClient,
    local: localCluster,
    systemNamespace: NS,
    syncTimeoutMs: 10_000,
    timing: FAST_TIMING,
    userAgent: 'istiod-ts/test',
    metrics: registry,
    readiness,
    ...extra,
  });
  directory.subscribe((e) => events.push(e));
  directory.start();
  return directory;
}

const described = () => events.map((e) => `${e.type} ${e.cluster.id}`);
const storeNames = (store: MemoryStore, kind: 'Pod' | 'Service' | 'Namespace' | 'Node') =>
  store
    .list(kind)
    .map((o) => o.metadata.name)
    .sort();

async function metric(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  const v = (m?.values as { value: number; labels: Record<string, string | number> }[] | undefined)?.find((x) =>
    Object.entries(labels).every(([k, want]) => x.labels[k] === want),
  );
  return v?.value;
}

test('remote secrets join their clusters: each has its own store of REMOTE_KINDS, announced once synced', async () => {
  local.put(remoteSecret('istio-remote-secret-east', { east: kubeconfigFor('east', east) }));
  local.put(remoteSecret('istio-remote-secret-west', { west: kubeconfigFor('west', west) }));
  // Not labelled: never read.
  local.put(remoteSecret('other', { other: kubeconfigFor('other', west) }, NS, {}));
  const dir = startDirectory();
  await eventually('both remotes are announced', () => events.length === 2);
  expect(described().sort()).toEqual(['added east', 'added west']);
  for (const e of events) expect(e.cluster.synced()).toBe(true);
  expect(dir.list().map((c) => c.id)).toEqual([LOCAL_ID, 'east', 'west']);
  expect(dir.get(LOCAL_ID)?.local).toBe(true);
  expect(dir.get('other')).toBeUndefined();

  const eastStore = (dir.get('east') as RemoteCluster).store;
  expect(storeNames(eastStore, 'Pod')).toEqual(['east-pod']);
  expect(storeNames(eastStore, 'Service')).toEqual(['east-svc']);
  expect(storeNames(eastStore, 'Node')).toEqual(['east-node']);
  expect(storeNames((dir.get('west') as RemoteCluster).store, 'Pod')).toEqual(['west-pod']);
  // Istio config comes from the config cluster only.
  expect(eastStore.list('ConfigMap')).toEqual([]);
  expect(eastStore.list('AuthorizationPolicy')).toEqual([]);
  const remotePlurals = new Set(REMOTE_KINDS.map((k) => KINDS[k].plural));
  expect([...new Set(east.requests.map((r) => r.resource))].every((r) => remotePlurals.has(r))).toBe(true);
  // Each remote client says which cluster it serves.
  expect(east.requests.filter((r) => r.verb === 'list').every((r) => r.userAgent.includes('remote-cluster/east'))).toBe(
    true,
  );
  // The config cluster's Secrets are read in the system namespace, through the label selector only.
  await eventually('the secrets watch is open', () =>
    local.requests.some((r) => r.resource === 'secrets' && r.verb === 'watch'),
  );
  const secretCalls = local.requests.filter((r) => r.resource === 'secrets');
  expect(new Set(secretCalls.map((r) => `${r.verb} ${r.namespace}`))).toEqual(new Set([`list ${NS}`, `watch ${NS}`]));
  // The config cluster's own store holds no Secret and no remote object.
  expect(localStore.list('Pod')).toEqual([]);

  expect(readiness.notReady()).toEqual([]);
  expect(await metric('istiod_ts_remote_clusters', { state: 'synced' })).toBe(2);
});

test('secrets changed at runtime: a key added, a kubeconfig changed (a new store, the old one stopped), a key and a secret removed', async () => {
  local.put(remoteSecret('remote', { east: kubeconfigFor('east', east) }));
  const dir = startDirectory();
  await eventually('east is announced', () => described().join() === 'added east');
  const firstEast = dir.get('east') as RemoteCluster;

  local.put(remoteSecret('remote', { east: kubeconfigFor('east', east), west: kubeconfigFor('west', west) }));
  await eventually('west is announced', () => described().join() === 'added east,added west');

  // A new token for east: a replacement joins beside the running cluster and is announced as an update.
  local.put(
    remoteSecret('remote', {
      east: kubeconfigFor('east', east, 'rotated-token-0123456789'),
      west: kubeconfigFor('west', west),
    }),
  );
  await eventually('east is updated', () => events.length === 3);
  expect(described()[2]).toBe('updated east');
  const secondEast = dir.get('east') as RemoteCluster;
  expect(secondEast).not.toBe(firstEast);
  expect(events[2]!.cluster).toBe(secondEast);
  expect(secondEast.synced()).toBe(true);
  expect(storeNames(secondEast.store, 'Pod')).toEqual(['east-pod']);
  await eventually('the replaced cluster stops', () => firstEast.state === 'closed');

  // The same kubeconfigs again (a label added): no event.
  const same = remoteSecret('remote', {
    east: kubeconfigFor('east', east, 'rotated-token-0123456789'),
    west: kubeconfigFor('west', west),
  });
  local.put({ ...same, metadata: { ...same.metadata, labels: { ...same.metadata.labels, touched: 'yes' } } });
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(events).toHaveLength(3);

  local.put(remoteSecret('remote', { east: kubeconfigFor('east', east, 'rotated-token-0123456789') }));
  await eventually('west is removed', () => events.length === 4);
  expect(described()[3]).toBe('removed west');
  expect(dir.get('west')).toBeUndefined();

  local.delete('v1', 'Secret', NS, 'remote');
  await eventually('east is removed with its secret', () => events.length === 5);
  expect(described()[4]).toBe('removed east');
  expect(dir.list().map((c) => c.id)).toEqual([LOCAL_ID]);
  await eventually('every remote watch is closed', () => east.openWatches === 0 && west.openWatches === 0);

  // A secret that loses its label leaves like a deleted one.
  local.put(remoteSecret('again', { west: kubeconfigFor('west', west) }));
  await eventually('west is back', () => events.length === 6);
  local.put(remoteSecret('again', { west: kubeconfigFor('west', west) }, NS, { 'istio/multiCluster': 'false' }));
  await eventually('west leaves with the label', () => described()[6] === 'removed west');
});

test('a remote that never answers is announced after the timeout; the config cluster is not held back; it syncs later', async () => {
  west.delays.add({ verb: 'list', ms: 60_000 });
  local.put(remoteSecret('remote', { east: kubeconfigFor('east', east), west: kubeconfigFor('west', west) }));
  const started = Date.now();
  const dir = startDirectory({ syncTimeoutMs: 400 });
  await localStore.whenSynced();
  await eventually('both are announced', () => events.length === 2);
  expect(Date.now() - started).toBeGreaterThanOrEqual(350);
  const westCluster = dir.get('west') as RemoteCluster;
  expect(westCluster.synced()).toBe(false);
  expect(westCluster.state).toBe('timeout');
  expect(dir.get('east')!.synced()).toBe(true);
  expect(localStore.hasSynced()).toBe(true);
  // Ready: the timeout passed (istiod's rule), whatever the remote does.
  expect(readiness.notReady()).toEqual([]);
  expect(await metric('istiod_ts_remote_cluster_sync_timeouts_total')).toBe(1);
  expect(await metric('istiod_ts_remote_clusters', { state: 'timeout' })).toBe(1);
  expect(dir.status().remotes.find((r) => r.id === 'west')).toMatchObject({ state: 'timeout', synced: false });

  west.delays.clear();
  await eventually('west syncs late', () => westCluster.synced(), 15_000);
  expect(storeNames(westCluster.store, 'Pod')).toEqual(['west-pod']);
  expect(westCluster.state).toBe('synced');
  expect(await metric('istiod_ts_remote_clusters', { state: 'synced' })).toBe(2);
  expect(described().sort()).toEqual(['added east', 'added west']);
});

test('until then, /ready names the remote and what it waits for; a 403 says what was refused, never the token, in /ready, the status or the log', async () => {
  // An API server that echoes the credential it refused: the controller must not pass it on.
  east.injectFault({
    verb: 'list',
    resource: 'pods',
    status: 403,
    reason: 'Forbidden',
    message: `pods is forbidden: token ${remoteToken('east')} may not list pods`,
    times: 1_000,
  });
  local.put(remoteSecret('remote', { east: kubeconfigFor('east', east) }));
  logs.configure('kube:debug,multicluster:debug');
  const captured = captureLogs();
  const dir = startDirectory({ syncTimeoutMs: 0 });
  try {
    await eventually('the pod list is refused', () => dir.status().remotes[0]?.lastError !== undefined);
  } finally {
    captured.restore();
    logs.configure(TEST_LOG_LEVELS);
  }
  const logged = JSON.stringify(captured.lines());
  expect(logged).toContain('forbidden (HTTP 403): the credentials may not list or watch Pod');
  expect(logged).not.toContain(remoteToken('east'));
  const row = readiness.describeNotReady().find((r) => r.startsWith(remoteClusterReadiness('east')));
  expect(row).toContain('kubernetes Pod');
  expect(row).toContain('forbidden (HTTP 403)');
  expect(row).not.toContain(remoteToken('east'));
  const text = JSON.stringify(dir.status());
  expect(text).toContain('[redacted]');
  expect(text).not.toContain(remoteToken('east'));
  expect(events).toEqual([]);
  // A timeout of 0 waits for the remote however long it takes.
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(events).toEqual([]);
  east.clearFaults();
  await eventually('east is announced once its pods list', () => described().join() === 'added east', 15_000);
  expect(readiness.notReady()).toEqual([]);
});

test('a remote that goes away after its lists keeps its objects; a 410 re-list changes nothing that did not change', async () => {
  local.put(remoteSecret('remote', { east: kubeconfigFor('east', east) }));
  const dir = startDirectory();
  await eventually('east is announced', () => events.length === 1);
  const eastStore = (dir.get('east') as RemoteCluster).store;
  const seen: StoreEvent[] = [];
  eastStore.subscribe((batch) => seen.push(...batch));
  const before = storeNames(eastStore, 'Pod');

  const outage = east.unreachableFor(600);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(storeNames(eastStore, 'Pod')).toEqual(before);
  expect(storeNames(eastStore, 'Service')).toEqual(['east-svc']);
  await outage;

  // History forgotten past the watches' resourceVersions while they are cut (a write to a kind a
  // remote does not contribute moves the server's version on): each resumes into a 410 and lists
  // again, finding every object as it was.
  await eventually('watches are open again after the outage', () => east.openWatches >= REMOTE_KINDS.length, 15_000);
  const lists = () => east.requests.filter((r) => r.verb === 'list' && r.resource === 'pods').length;
  const listsBefore = lists();
  east.dropWatches();
  east.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'unwatched', namespace: NS }, data: {} });
  east.compact();
  await eventually('pods are listed again', () => lists() > listsBefore, 15_000);
  await eventually('watches are open again', () => east.openWatches >= REMOTE_KINDS.length);
  expect(seen).toEqual([]);
  expect(dir.get('east')!.synced()).toBe(true);

  east.put(fatPod('apps', 'east-pod-2', 3));
  await eventually('a real change still arrives', () => seen.length === 1);
  expect(seen.map((e) => `${e.type} ${e.kind} ${e.object.metadata.name}`)).toEqual(['add Pod east-pod-2']);
  expect(described()).toEqual(['added east']);
});

test('a replacement that does not sync: reverting in time keeps the running cluster; otherwise it is announced at the timeout', async () => {
  west.delays.add({ verb: 'list', ms: 60_000 });
  const original = kubeconfigFor('east', east);
  // The same cluster id, now pointing at a server whose lists hang.
  const moved = kubeconfigFor('east', west);
  local.put(remoteSecret('remote', { east: original }));
  const dir = startDirectory({ syncTimeoutMs: 800 });
  await eventually('east is announced', () => events.length === 1);
  const running = dir.get('east') as RemoteCluster;

  local.put(remoteSecret('remote', { east: moved }));
  await eventually('the replacement is joining', () => dir.status().remotes.some((r) => r.role === 'replacement'));
  local.put(remoteSecret('remote', { east: original }));
  await eventually('the replacement is dropped', () => dir.status().remotes.length === 1);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(described()).toEqual(['added east']);
  expect(dir.get('east')).toBe(running);
  expect(running.state).toBe('synced');

  local.put(remoteSecret('remote', { east: moved }));
  await eventually('the replacement is announced at the timeout', () => events.length === 2, 5_000);
  expect(described()[1]).toBe('updated east');
  const replacement = dir.get('east') as RemoteCluster;
  expect(replacement.state).toBe('timeout');
  expect(replacement.client.server).toBe(west.url);
  await eventually('the previous cluster stops', () => running.state === 'closed');
  expect(await metric('istiod_ts_remote_cluster_sync_timeouts_total')).toBe(1);
});

test("a remote's silent watch is restarted by the watchdog, as the config cluster's are", async () => {
  local.put(remoteSecret('remote', { east: kubeconfigFor('east', east) }));
  // Watches ask for 1-2 s; one silent past that and 300 ms more is cut and opened again.
  const dir = startDirectory({ timing: { ...FAST_TIMING, watchTimeoutSeconds: 1, stallMarginMs: 300 } });
  await eventually('east is announced', () => events.length === 1);
  await eventually('its watches are open', () => east.openWatches >= REMOTE_KINDS.length);
  east.stallWatches();
  east.put(service('apps', 'after-stall'));
  const eastStore = (dir.get('east') as RemoteCluster).store;
  await eventually(
    'the change made while stalled arrives',
    () => storeNames(eastStore, 'Service').includes('after-stall'),
    8_000,
  );
  expect(dir.status().remotes[0]!.kinds.Service?.stalledWatches).toBeGreaterThanOrEqual(1);
});

test('a cluster id in two secrets stays with the first; the other joins it when the first lets go', async () => {
  local.put(remoteSecret('a-first', { shared: kubeconfigFor('shared', east) }));
  const dir = startDirectory();
  await eventually('shared is announced from the first secret', () => events.length === 1);
  expect(dir.get('shared')!.client!.server).toBe(east.url);

  local.put(remoteSecret('b-second', { shared: kubeconfigFor('shared', west) }));
  await eventually('the second secret is reported', () =>
    dir.status().secrets.some((s) => s.secret === `${NS}/b-second` && s.problems.length > 0),
  );
  const second = dir.status().secrets.find((s) => s.secret === `${NS}/b-second`)!;
  expect(second.problems.map((p) => [p.key, p.reason])).toEqual([['shared', 'duplicate-cluster-id']]);
  expect(second.problems[0]!.message).toContain(`${NS}/a-first`);
  expect(await metric('istiod_ts_remote_secret_errors_total', { reason: 'duplicate-cluster-id' })).toBe(1);
  expect(dir.get('shared')!.client!.server).toBe(east.url);
  expect(events).toHaveLength(1);

  local.delete('v1', 'Secret', NS, 'a-first');
  await eventually('removed, then added from the second secret', () => events.length === 3);
  expect(described()).toEqual(['added shared', 'removed shared', 'added shared']);
  expect(dir.get('shared')!.client!.server).toBe(west.url);
  expect(dir.status().secrets).toEqual([{ secret: `${NS}/b-second`, clusters: ['shared'], problems: [] }]);
});

test('keys that cannot be joined are reported by reason and counted; the others join', async () => {
  local.put(
    remoteSecret('mixed', {
      [LOCAL_ID]: kubeconfigFor(LOCAL_ID, east),
      broken: 'clusters: [',
      unsafe: remoteKubeconfig('unsafe', {
        server: east.url,
        cluster: { 'insecure-skip-tls-verify': true },
        user: { exec: { command: '/bin/sh' } },
      }),
      east: kubeconfigFor('east', east),
    }),
  );
  const dir = startDirectory();
  await eventually('east joins', () => events.length === 1);
  expect(described()).toEqual(['added east']);
  const problems = dir.status().secrets[0]!.problems.map((p) => [p.key, p.reason]);
  expect(problems).toEqual([
    [LOCAL_ID, 'local-cluster-id'],
    ['broken', 'invalid-kubeconfig'],
    ['unsafe', 'unsafe-kubeconfig'],
  ]);
  for (const reason of ['local-cluster-id', 'invalid-kubeconfig', 'unsafe-kubeconfig'])
    expect({ reason, count: await metric('istiod_ts_remote_secret_errors_total', { reason }) }).toEqual({
      reason,
      count: 1,
    });
  expect(JSON.stringify(dir.status())).not.toContain(remoteToken('east'));
  expect(readiness.notReady()).not.toContain(REMOTE_SECRETS_READINESS);
});
