// EXTERNAL_ISTIOD against two test API servers: the whole server in cluster-1 joins cluster-2 by a
// remote secret, and writes istio-ca-root-cert into cluster-2's namespaces while cluster-2's
// system Namespace names it in topology.istio.io/controlPlaneClusters, under the namespace
// controller's lock held in cluster-2 with istiod's remote key ("^" + revision). A remote that
// stops naming it, or whose secret goes away, gets no further writes and its lock back.

import { LEADER_RECORD_ANNOTATION } from '../../../src/store/kube/leader-record';
import { TestApiServer, eventually } from '../../support/apiserver';
import { namespace } from '../../support/apiserver/fixtures';
import { remoteKubeconfig, remoteSecret } from '../../support/store/remote-secret';
import { startServing, type InProcessServer } from '../kube/serve-fixture';

const NS = 'istio-system';
const ROOT_CM = 'istio-ca-root-cert';
const LOCK = 'istio-namespace-controller-election';
const ANNOTATION = 'topology.istio.io/controlPlaneClusters';
const SECRET = 'istio-remote-secret-cluster-2';

let local: TestApiServer;
let remote: TestApiServer;
let server: InProcessServer | undefined;

function systemNamespace(api: TestApiServer, controlPlanes: string | undefined): void {
  const ns = namespace(NS);
  api.put(
    controlPlanes === undefined
      ? ns
      : { ...ns, metadata: { ...ns.metadata, annotations: { [ANNOTATION]: controlPlanes } } },
  );
}

beforeEach(async () => {
  [local, remote] = await Promise.all([TestApiServer.start(), TestApiServer.start()]);
  local.put(namespace(NS));
  remote.put(namespace('apps'));
  remote.put(namespace('kube-public'));
  local.put(
    remoteSecret(SECRET, {
      'cluster-2': remoteKubeconfig('cluster-2', { server: remote.url, cluster: { 'insecure-skip-tls-verify': true } }),
    }),
  );
});

afterEach(async () => {
  await server?.stop();
  server = undefined;
  await Promise.all([local.close(), remote.close()]);
});

async function start(env: Record<string, string>): Promise<InProcessServer> {
  const s = await (
    await startServing(local, {
      CLUSTER_ID: 'cluster-1',
      PILOT_REMOTE_CLUSTER_TIMEOUT: '10s',
      XDS_AUTH: 'false',
      ...env,
    })
  ).started;
  await eventually('the server is ready', async () => (await s.ready()).status === 200, 20_000);
  return s;
}

const rootIn = (api: TestApiServer, ns: string) =>
  (api.get('v1', 'ConfigMap', ns, ROOT_CM) as { data?: Record<string, string> } | undefined)?.data?.['root-cert.pem'];

function lockRecord(api: TestApiServer): { holderIdentity: string; holderKey: string } | undefined {
  const annotations = api.get('v1', 'ConfigMap', NS, LOCK)?.metadata.annotations as Record<string, string> | undefined;
  const raw = annotations?.[LEADER_RECORD_ANNOTATION];
  return raw === undefined ? undefined : (JSON.parse(raw) as { holderIdentity: string; holderKey: string });
}

async function managed(s: InProcessServer): Promise<string[]> {
  const res = await fetch(`http://${s.address('http')}/debug/remote-roots`);
  return ((await res.json()) as { managed: string[] }).managed;
}

test("a remote naming this control plane gets the primary's root in every namespace, under its own remote-keyed lock; naming another stops it", async () => {
  systemNamespace(remote, 'cluster-0,cluster-1');
  server = await start({ EXTERNAL_ISTIOD: 'true' });
  await eventually('the primary wrote its own root', () => rootIn(local, NS) !== undefined, 10_000);
  const root = rootIn(local, NS)!;
  expect(root).toContain('BEGIN CERTIFICATE');

  await eventually(
    'the root in the remote system namespace and in apps',
    () => rootIn(remote, NS) === root && rootIn(remote, 'apps') === root,
    15_000,
  );
  expect(rootIn(remote, 'kube-public')).toBeUndefined();
  const cm = remote.get('v1', 'ConfigMap', 'apps', ROOT_CM)!;
  expect(cm.metadata.labels).toEqual({ 'istio.io/config': 'true' });
  // istiod's key for a control plane outside the cluster, so an istiod inside it takes precedence.
  expect(lockRecord(remote)).toMatchObject({ holderIdentity: 'istiod-test', holderKey: '^default' });
  expect(await managed(server)).toEqual(['cluster-2']);

  // A namespace created later is written at once (the Namespace event), not at the next resync.
  remote.put(namespace('late'));
  await eventually('the new namespace has the root', () => rootIn(remote, 'late') === root, 10_000);

  // The remote is handed to another control plane: writing stops and the lock is released.
  systemNamespace(remote, 'cluster-9');
  await eventually('no longer managed', async () => (await managed(server!)).length === 0, 10_000);
  await eventually('the lock released', () => lockRecord(remote)?.holderIdentity === '', 10_000);
  remote.put(namespace('after'));
  await new Promise((r) => setTimeout(r, 1_000));
  expect(rootIn(remote, 'after')).toBeUndefined();
});

test("'*' names every control plane; removing the remote secret stops the writes and releases the lock", async () => {
  systemNamespace(remote, '*');
  server = await start({ EXTERNAL_ISTIOD: 'true' });
  await eventually('the remote has the root', () => rootIn(remote, 'apps') !== undefined, 15_000);
  expect(lockRecord(remote)?.holderKey).toBe('^default');

  local.delete('v1', 'Secret', NS, SECRET);
  await eventually('the lock released', () => lockRecord(remote)?.holderIdentity === '', 10_000);
  expect(await managed(server)).toEqual([]);
});

test('without EXTERNAL_ISTIOD (the default) nothing is written into a remote, whatever its annotation says', async () => {
  systemNamespace(remote, '*');
  server = await start({});
  await eventually('the primary wrote its own root', () => rootIn(local, 'istio-system') !== undefined, 10_000);
  // The remote is joined (its Namespaces are in), and it stays untouched.
  await eventually('cluster-2 synced', async () => {
    const res = await fetch(`http://${server!.address('http')}/debug/clusters`);
    const body = (await res.json()) as { clusters: { id: string; synced: boolean }[] };
    return body.clusters.some((c) => c.id === 'cluster-2' && c.synced);
  });
  await new Promise((r) => setTimeout(r, 1_000));
  expect(remote.list('v1', 'ConfigMap')).toEqual([]);
  expect((await fetch(`http://${server.address('http')}/debug/remote-roots`)).status).toBe(404);
});
