// The multicluster fixture's clusters must be what the goldens say they are: a remote cluster holds
// only what istiod reads from one, each istio-system names its network, clusters sharing a network
// do not share addresses, and the GLOBAL label sits where meshConfig's serviceScopeConfigs look.

import { generateClusterMesh, GLOBAL_LABEL, type MulticlusterMeshOptions } from '../../../interop/mesh/multicluster';
import type { Manifest } from '../../../interop/mesh/generate';

const SMALL = { workloads: 20, nodes: 2, namespaces: 2 };
const options: MulticlusterMeshOptions = {
  clusters: [
    { id: 'c1', network: 'n1', local: true, mesh: SMALL, addressShift: 0, remoteGateways: { n3: '172.30.0.30' } },
    { id: 'c2', network: 'n1', local: false, mesh: SMALL, addressShift: 100 },
    { id: 'c3', network: 'n2', local: false, mesh: SMALL, addressShift: 0, eastWestGatewayIp: '172.30.0.10' },
  ],
  globalNamespaces: ['apps-1'],
  globalServices: ['apps-0/app-0'],
};
const [local, sameNetwork, otherNetwork] = options.clusters.map((c) => generateClusterMesh(options, c)) as [
  Manifest[],
  Manifest[],
  Manifest[],
];

const labels = (m: Manifest | undefined) => (m?.metadata['labels'] ?? {}) as Record<string, string>;
const find = (ms: Manifest[], kind: string, name: string, namespace?: string) =>
  ms.find((m) => m.kind === kind && m.metadata.name === name && m.metadata.namespace === namespace);
const podIps = (ms: Manifest[]) =>
  ms.filter((m) => m.kind === 'Pod').map((m) => (m['status'] as { podIP: string }).podIP);

test('a remote cluster holds only the kinds istiod reads from one; the local one keeps Istio config', () => {
  const kinds = (ms: Manifest[]) => [...new Set(ms.map((m) => m.kind))].sort();
  expect(kinds(sameNetwork)).toEqual(['EndpointSlice', 'Gateway', 'Namespace', 'Node', 'Pod', 'Service']);
  expect(kinds(local)).toEqual(expect.arrayContaining(['AuthorizationPolicy', 'ServiceEntry', 'WorkloadEntry']));
});

test("each cluster's istio-system names its network", () => {
  expect(labels(find(local, 'Namespace', 'istio-system'))['topology.istio.io/network']).toBe('n1');
  expect(labels(find(otherNetwork, 'Namespace', 'istio-system'))['topology.istio.io/network']).toBe('n2');
});

test('clusters on one network get their own addresses; a cluster on another network may reuse them', () => {
  const ips = new Set(podIps(local));
  expect(podIps(sameNetwork).filter((ip) => ips.has(ip))).toEqual([]);
  expect(podIps(sameNetwork)).toEqual(expect.arrayContaining(['10.200.0.2', '172.18.100.2']));
  expect(podIps(otherNetwork)).toEqual(podIps(local));
  expect((find(sameNetwork, 'Service', 'app-0', 'apps-0')?.['spec'] as { clusterIP: string }).clusterIP).toBe(
    '10.196.1.1',
  );
});

test('the GLOBAL label is on the chosen namespace and Service in every cluster', () => {
  for (const ms of [local, sameNetwork, otherNetwork]) {
    expect(labels(find(ms, 'Namespace', 'apps-1'))[GLOBAL_LABEL]).toBe('true');
    expect(labels(find(ms, 'Namespace', 'apps-0'))[GLOBAL_LABEL]).toBeUndefined();
    expect(labels(find(ms, 'Service', 'app-0', 'apps-0'))[GLOBAL_LABEL]).toBe('true');
  }
});

test('network gateways: east-west in the remote cluster, istio-remote in the local one', () => {
  const ew = find(otherNetwork, 'Gateway', 'istio-eastwestgateway', 'istio-system');
  expect(ew?.['spec']).toMatchObject({
    gatewayClassName: 'istio-east-west',
    listeners: [{ protocol: 'HBONE', tls: { mode: 'Terminate' } }],
  });
  expect(labels(ew)['topology.istio.io/network']).toBe('n2');
  const remote = find(local, 'Gateway', 'istio-remote-n3', 'istio-system');
  expect(remote?.['spec']).toMatchObject({ gatewayClassName: 'istio-remote' });
  expect(remote?.['status']).toEqual({ addresses: [{ type: 'IPAddress', value: '172.30.0.30' }] });
  expect(find(sameNetwork, 'Gateway', 'istio-eastwestgateway', 'istio-system')).toBeUndefined();
});
