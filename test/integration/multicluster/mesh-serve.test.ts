// The whole server with AMBIENT_ENABLE_MULTI_NETWORK against three test API servers joined by
// remote secrets, as an operator runs it: cluster-1 (the config cluster) and cluster-2 on
// network-1, cluster-3 on network-2 behind an east-west gateway. A ztunnel's Delta xDS stream
// and a remote ztunnel's CreateCertificate see the whole mesh; a remote that stops answering
// keeps its workloads; a removed secret takes its cluster out in one push.

import { AdsClient, HeldResources, ztunnelNodeId, type DeltaResponse } from '../../../src/cli/ads-client';
import { ADDRESS_TYPE_URL } from '../../../src/contract/xds-resources';
import { TestApiServer, eventually, serviceAccountIdentity } from '../../support/apiserver';
import { namespace } from '../../support/apiserver/fixtures';
import { makeCsr } from '../../support/ca/fixtures';
import { ZtunnelLikeClient } from '../../support/ca/harness';
import { remoteKubeconfig, remoteSecret } from '../../support/store/remote-secret';
import { startServing, type InProcessServer } from '../kube/serve-fixture';

const NS = 'istio-system';
const WEB = 'apps/web.apps.svc.cluster.local';
const SPLIT = `network-2/SplitHorizonWorkload/${NS}/eastwest/172.30.0.1/${WEB}`;
const EAST_WEST = 'NetworkGateway/network-2/172.30.0.1/0';

function pod(name: string, ip: string, opts: { ns?: string; app?: string; sa?: string } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: opts.ns ?? 'apps', labels: { app: opts.app ?? 'web' } },
    spec: { serviceAccountName: opts.sa ?? 'web', nodeName: 'node-1', containers: [{ name: 'c', image: 'x' }] },
    status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

function webService(ip: string) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'apps', labels: { 'istio.io/global': 'true' } },
    spec: {
      selector: { app: 'web' },
      clusterIP: ip,
      clusterIPs: [ip],
      ports: [{ name: 'http', port: 80, targetPort: 8080 }],
    },
  };
}

function cluster(api: TestApiServer, network: string, svcIp: string): void {
  api.put(namespace(NS, { 'topology.istio.io/network': network }));
  api.put(namespace('apps'));
  api.put(webService(svcIp));
}

let local: TestApiServer;
let east: TestApiServer;
let west: TestApiServer;
let server: InProcessServer | undefined;
let client: AdsClient | undefined;

const secretFor = (id: string, api: TestApiServer) =>
  remoteSecret(`istio-remote-secret-${id}`, {
    [id]: remoteKubeconfig(id, { server: api.url, cluster: { 'insecure-skip-tls-verify': true } }),
  });

beforeEach(async () => {
  [local, east, west] = await Promise.all([TestApiServer.start(), TestApiServer.start(), TestApiServer.start()]);
  cluster(local, 'network-1', '10.1.0.10');
  local.put({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'istio', namespace: NS },
    data: {
      mesh: 'serviceScopeConfigs:\n- servicesSelector:\n    matchLabels:\n      istio.io/global: "true"\n  scope: GLOBAL\n',
    },
  });
  local.put(pod('web-a', '10.1.1.1'));
  cluster(east, 'network-1', '10.2.0.10');
  east.put(pod('web-b', '10.2.1.1'));
  east.put(pod('ztunnel-east', '10.2.9.9', { ns: NS, app: 'ztunnel', sa: 'ztunnel' }));
  cluster(west, 'network-2', '10.3.0.10');
  west.put(pod('web-c', '10.3.1.1'));
  west.put(pod('web-d', '10.3.1.2'));
  west.put({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'eastwest', namespace: NS, labels: { 'topology.istio.io/network': 'network-2' } },
    spec: {
      gatewayClassName: 'istio-east-west',
      listeners: [{ name: 'mesh', port: 15008, protocol: 'HBONE', tls: { mode: 'Terminate' } }],
    },
    status: { addresses: [{ type: 'IPAddress', value: '172.30.0.1' }] },
  });
  local.put(secretFor('cluster-2', east));
  local.put(secretFor('cluster-3', west));
});

afterEach(async () => {
  client?.close();
  client = undefined;
  await server?.stop();
  server = undefined;
  await Promise.all([local.close(), east.close(), west.close()]);
});

async function start(): Promise<InProcessServer> {
  const s = await (
    await startServing(local, {
      CLUSTER_ID: 'cluster-1',
      AMBIENT_ENABLE_MULTI_NETWORK: 'true',
      PILOT_REMOTE_CLUSTER_TIMEOUT: '10s',
      XDS_AUTH: 'false',
    })
  ).started;
  await eventually('the server is ready', async () => (await s.ready()).status === 200, 20_000);
  return s;
}

/** A ztunnel of cluster-1 holding every Address, and every response it was sent. */
function ztunnel(s: InProcessServer): { held: HeldResources; responses: DeltaResponse[] } {
  client = new AdsClient({
    address: s.address('grpc'),
    node: {
      id: ztunnelNodeId('10.1.9.9', 'ztunnel-local', NS),
      metadata: { NAME: 'ztunnel-local', NAMESPACE: NS, CLUSTER_ID: 'cluster-1' },
    },
  });
  const held = new HeldResources();
  const responses: DeltaResponse[] = [];
  client.onResponse((r) => {
    held.apply(r);
    responses.push(r);
  });
  client.send({ type_url: ADDRESS_TYPE_URL });
  return { held, responses };
}

const holds = (held: HeldResources, names: string[]) => names.every((n) => held.names(ADDRESS_TYPE_URL).includes(n));

test('a ztunnel is served every cluster of its network, one split-horizon workload for the other, and the CA serves a remote ztunnel', async () => {
  server = await start();
  const { held } = ztunnel(server);
  await eventually(
    'both clusters of network-1 and network-2 through its gateway',
    async () =>
      Promise.resolve(holds(held, ['cluster-1//Pod/apps/web-a', 'cluster-2//Pod/apps/web-b', SPLIT, EAST_WEST])),
    20_000,
  );
  const names = held.names(ADDRESS_TYPE_URL);
  expect(names.filter((n) => n.startsWith('cluster-3/'))).toEqual([]);
  expect(names).toContain(WEB);
  // /debug/multicluster says where each cluster's workloads went.
  const summary = (await (await fetch(`http://${server.address('http')}/debug/multicluster`)).json()) as {
    localNetwork: string;
    clusters: { id: string; network: string; workloads: number; hidden: number }[];
  };
  expect(summary.localNetwork).toBe('network-1');
  // cluster-1 lists its pod and the east-west gateway's NetworkGateway workload.
  expect(summary.clusters.map((c) => [c.id, c.network, c.workloads, c.hidden])).toEqual([
    ['cluster-1', 'network-1', 2, 0],
    ['cluster-2', 'network-1', 2, 0],
    ['cluster-3', 'network-2', 0, 2],
  ]);
  // A change in a remote cluster is pushed.
  east.put(pod('web-b2', '10.2.1.2'));
  await eventually('a new remote pod', async () => Promise.resolve(holds(held, ['cluster-2//Pod/apps/web-b2'])));

  // A ztunnel of cluster-2 asks for its node's pod identity: reviewed by cluster-2's API server.
  const ztunnelPod = east.get('v1', 'Pod', NS, 'ztunnel-east')!;
  east.registerToken(
    'east-ztunnel-token',
    serviceAccountIdentity({
      namespace: NS,
      serviceAccount: 'ztunnel',
      podName: 'ztunnel-east',
      podUid: ztunnelPod.metadata.uid!,
      audiences: ['istio-ca'],
    }),
  );
  const root = local.get('v1', 'ConfigMap', NS, 'istio-ca-root-cert')?.['data'] as Record<string, string> | undefined;
  const ca = new ZtunnelLikeClient(Number(server.address('secure-grpc').split(':')[1]), root!['root-cert.pem']!);
  try {
    const csr = (await makeCsr()).pem;
    const identity = 'spiffe://cluster.local/ns/apps/sa/web';
    const issued = await ca.createCertificate(csr, {
      token: 'east-ztunnel-token',
      clusterId: 'cluster-2',
      impersonate: identity,
    });
    expect(issued.cert_chain.length).toBeGreaterThan(0);
    // The same token named as the config cluster's is refused: cluster-1's API server does not know it.
    await expect(
      ca.createCertificate(csr, { token: 'east-ztunnel-token', clusterId: 'cluster-1', impersonate: identity }),
    ).rejects.toMatchObject({
      details: 'request authenticate failure',
    });
  } finally {
    ca.close();
  }
}, 60_000);

test('a remote that stops answering keeps its workloads; removing its secret takes them out in one push', async () => {
  server = await start();
  const { held, responses } = ztunnel(server);
  await eventually(
    'everything is in',
    async () => Promise.resolve(holds(held, ['cluster-2//Pod/apps/web-b', SPLIT])),
    20_000,
  );
  await east.close();
  // The config cluster keeps being served while cluster-2 is silent.
  local.put(pod('web-a2', '10.1.1.2'));
  await eventually('a local change still arrives', async () =>
    Promise.resolve(holds(held, ['cluster-1//Pod/apps/web-a2'])),
  );
  expect(held.names(ADDRESS_TYPE_URL)).toContain('cluster-2//Pod/apps/web-b');

  responses.length = 0;
  local.delete('v1', 'Secret', NS, 'istio-remote-secret-cluster-2');
  await eventually('cluster-2 is gone', async () =>
    Promise.resolve(!held.names(ADDRESS_TYPE_URL).includes('cluster-2//Pod/apps/web-b')),
  );
  expect(responses.filter((r) => r.removed_resources.length > 0).map((r) => [...r.removed_resources].sort())).toEqual([
    ['cluster-2//Pod/apps/web-b', 'cluster-2//Pod/istio-system/ztunnel-east'],
  ]);

  // The other network's cluster leaves with its split-horizon workload and its gateway, in one push.
  responses.length = 0;
  local.delete('v1', 'Secret', NS, 'istio-remote-secret-cluster-3');
  await eventually('cluster-3 is gone', async () => Promise.resolve(!held.names(ADDRESS_TYPE_URL).includes(SPLIT)));
  expect(responses.filter((r) => r.removed_resources.length > 0).map((r) => [...r.removed_resources].sort())).toEqual([
    [SPLIT, EAST_WEST].sort(),
  ]);
}, 60_000);
