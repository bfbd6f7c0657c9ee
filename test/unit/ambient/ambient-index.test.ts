import { AmbientIndex } from '../../../src/ambient/ambient-index';
import { decodeAddress } from '../../../src/ambient/codec';
import { registerAmbientDebug } from '../../../src/ambient/debug';
import type { DebugRequest, DebugResponse } from '../../../src/server/context';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL, ChangeSet } from '../../../src/contract/xds-resources';
import { authz, indexOf, meshSource, namespace, node, pod, service, storeWith } from '../../support/ambient/fixtures';

const UID = (n: string, ns = 'default') => `Kubernetes//Pod/${ns}/${n}`;
const SVC = 'default/web.default.svc.cluster.local';

function setup() {
  const store = storeWith([
    pod('a', { labels: { app: 'web' }, ip: '10.0.0.1' }),
    pod('b', { labels: { app: 'web' }, ip: '10.0.0.2', spec: { nodeName: 'node2' } }),
    service('web'),
    node('node1'),
  ]);
  const mesh = meshSource();
  const index = indexOf(store, mesh);
  const changes: ChangeSet[][] = [];
  index.subscribe((c) => changes.push([...c]));
  return { store, index, changes, mesh };
}

describe('AmbientIndex as a ResourceCache', () => {
  it('builds every resource from the store content at construction', () => {
    const { index } = setup();
    expect([...index.all(ADDRESS_TYPE_URL)].map((r) => r.name).sort()).toEqual([UID('a'), UID('b'), SVC]);
    expect([...index.all(AUTHORIZATION_TYPE_URL)]).toEqual([]);
  });
  it('version is a hash of the bytes and the bytes decode to the Address', () => {
    const { index } = setup();
    const r = index.get(ADDRESS_TYPE_URL, SVC)!;
    expect(decodeAddress(r.bytes).service!.hostname).toBe('web.default.svc.cluster.local');
    expect(r.version).toMatch(/^[0-9a-f]+$/);
  });
  it('a pod update recomputes one resource and emits one change set naming it', () => {
    const { store, index, changes } = setup();
    store.upsert('Pod', [
      pod('a', { labels: { app: 'web' }, ip: '10.0.0.1', annotations: { 'ambient.istio.io/redirection': 'enabled' } })
        .object,
    ]);
    expect(index.lastBatch.recomputed).toBe(1);
    expect(changes).toEqual([[{ typeUrl: ADDRESS_TYPE_URL, updated: [UID('a')], removed: [] }]]);
  });
  it('a change that does not alter the bytes emits nothing', () => {
    const { store, changes } = setup();
    store.upsert('Pod', [pod('a', { labels: { app: 'web' }, ip: '10.0.0.1', meta: { resourceVersion: '9' } }).object]);
    expect(changes).toEqual([]);
  });
  it('a Service event recomputes the service and the workloads its selector picks', () => {
    const { store, changes } = setup();
    store.upsert('Service', [service('web', { ports: [{ name: 'http', port: 81, targetPort: 8080 }] }).object]);
    expect(changes).toEqual([[{ typeUrl: ADDRESS_TYPE_URL, updated: [UID('a'), UID('b'), SVC], removed: [] }]]);
  });
  it('a root-namespace AuthorizationPolicy selects matching pods in every namespace, and only those are recomputed', () => {
    const store = storeWith([
      pod('a', { ns: 'ns1', labels: { app: 'web' }, ip: '10.0.0.1' }),
      pod('b', { ns: 'ns2', labels: { app: 'web', tier: 'x' }, ip: '10.0.0.2' }),
      pod('c', { ns: 'ns2', labels: { app: 'db' }, ip: '10.0.0.3' }),
    ]);
    const index = indexOf(store, meshSource());
    const changes: ChangeSet[][] = [];
    index.subscribe((c) => changes.push([...c]));
    const policy = { selector: { matchLabels: { app: 'web' } }, rules: [{}] };
    store.upsert('AuthorizationPolicy', [authz('allow-web', 'istio-system', policy).object]);
    expect(index.lastBatch.recomputed).toBe(3); // the policy and the two web pods
    const addressChange = changes[0]?.find((c) => c.typeUrl === ADDRESS_TYPE_URL);
    expect(addressChange?.updated).toEqual([UID('a', 'ns1'), UID('b', 'ns2')]);
    for (const n of [UID('a', 'ns1'), UID('b', 'ns2')])
      expect(decodeAddress(index.get(ADDRESS_TYPE_URL, n)!.bytes).workload!.authorizationPolicies).toEqual([
        'istio-system/allow-web',
      ]);
    expect(decodeAddress(index.get(ADDRESS_TYPE_URL, UID('c', 'ns2'))!.bytes).workload!.authorizationPolicies).toBe(
      undefined,
    );
  });
  it('deleting a pod removes its workload', () => {
    const { store, index, changes } = setup();
    store.remove('Pod', [pod('b').object]);
    expect(changes).toEqual([[{ typeUrl: ADDRESS_TYPE_URL, updated: [], removed: [UID('b')] }]]);
    expect(index.get(ADDRESS_TYPE_URL, UID('b'))).toBeUndefined();
  });
  it('a batch with addresses and authorizations emits Address before Authorization', () => {
    const { store, changes } = setup();
    store.apply([
      {
        kind: 'AuthorizationPolicy',
        object: authz('p', 'default', { selector: { matchLabels: { app: 'web' } } }).object,
      },
    ]);
    expect(changes[0]!.map((c) => c.typeUrl)).toEqual([ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL]);
    expect(changes[0]![1]).toEqual({ typeUrl: AUTHORIZATION_TYPE_URL, updated: ['default/p'], removed: [] });
  });
  it('a Node label change recomputes the pods on it (locality)', () => {
    const { store, changes } = setup();
    store.upsert('Node', [node('node1', { 'topology.kubernetes.io/region': 'r' }).object]);
    expect(changes).toEqual([[{ typeUrl: ADDRESS_TYPE_URL, updated: [UID('a')], removed: [] }]]);
  });
  it('a Namespace or Node update that leaves labels and annotations alone recomputes nothing', () => {
    const { store, index, changes } = setup();
    store.upsert('Node', [{ ...node('node1').object, status: { conditions: [{ type: 'Ready', status: 'True' }] } }]);
    expect(index.lastBatch).toEqual({ events: 1, recomputed: 0 });
    store.upsert('Namespace', [namespace('default').object]);
    store.upsert('Namespace', [{ ...namespace('default').object, status: { phase: 'Active' } }]);
    expect(index.lastBatch).toEqual({ events: 1, recomputed: 0 });
    expect(changes).toEqual([]);
  });
  it('a trust domain change in meshConfig recomputes every workload', () => {
    const { mesh, changes } = setup();
    mesh.set({ trustDomain: 'example.org' });
    expect(changes).toEqual([[{ typeUrl: ADDRESS_TYPE_URL, updated: [UID('a'), UID('b')], removed: [] }]]);
  });
  it('the network comes from the system namespace label unless fixed by the options', () => {
    const { store, index } = setup();
    store.upsert('Namespace', [namespace('istio-system', { 'topology.istio.io/network': 'net1' }).object]);
    expect(decodeAddress(index.get(ADDRESS_TYPE_URL, UID('a'))!.bytes).workload!.network).toBe('net1');
    expect(index.resolveAddress('net1/10.0.0.1')).toEqual([UID('a')]);
    const fixed = new AmbientIndex({
      store,
      mesh: meshSource(),
      clusterId: 'Kubernetes',
      domain: 'cluster.local',
      network: 'n0',
    });
    expect(decodeAddress(fixed.get(ADDRESS_TYPE_URL, UID('a'))!.bytes).workload!.network).toBe('n0');
    fixed.close();
  });
});

describe('AmbientIndex lookups', () => {
  it('resolveAddress finds a workload by uid or <network>/<ip>, and a service with its workloads', () => {
    const { index } = setup();
    expect(index.resolveAddress(UID('a'))).toEqual([UID('a')]);
    expect(index.resolveAddress('/10.0.0.2')).toEqual([UID('b')]);
    expect(index.resolveAddress(SVC).sort()).toEqual([UID('a'), UID('b'), SVC]);
    expect(index.resolveAddress('/10.96.0.10').sort()).toEqual([UID('a'), UID('b'), SVC]);
    expect(index.resolveAddress('/10.9.9.9')).toEqual([]);
  });
  it('workloadsOnNode lists the workloads scheduled on a node', () => {
    const { index, store } = setup();
    expect(index.workloadsOnNode('node2')).toEqual([UID('b')]);
    store.remove('Pod', [pod('b').object]);
    expect(index.workloadsOnNode('node2')).toEqual([]);
  });
  it('workloadsOnNode follows a pod to another node and leaves out pods with no workload', () => {
    const { index, store } = setup();
    // Pending without an IP, and finished: on node2, but no workload.
    store.upsert('Pod', [
      pod('pending', { spec: { nodeName: 'node2' }, status: { podIP: undefined } }).object,
      pod('done', { ip: '10.0.0.9', spec: { nodeName: 'node2' }, status: { phase: 'Succeeded' } }).object,
    ]);
    expect(index.workloadsOnNode('node2')).toEqual([UID('b')]);
    store.upsert('Pod', [
      pod('b', { labels: { app: 'web' }, ip: '10.0.0.2', spec: { nodeName: 'node3' }, meta: { resourceVersion: '2' } })
        .object,
    ]);
    expect(index.workloadsOnNode('node2')).toEqual([]);
    expect(index.workloadsOnNode('node3')).toEqual([UID('b')]);
    // The pending pod gets its IP: now a workload on its node.
    store.upsert('Pod', [
      pod('pending', { ip: '10.0.0.8', spec: { nodeName: 'node2' }, meta: { resourceVersion: '2' } }).object,
    ]);
    expect(index.workloadsOnNode('node2')).toEqual([UID('pending')]);
    expect(index.workloadsOnNode('node1').sort()).toEqual([UID('a')]);
  });
});

describe('registerAmbientDebug', () => {
  function pages() {
    const { index } = setup();
    const handlers = new Map<string, (req: DebugRequest) => DebugResponse | Promise<DebugResponse>>();
    registerAmbientDebug({ add: (name, _d, h) => handlers.set(name, h) }, index);
    const call = async (name: string, query = '') =>
      (
        await handlers.get(name)!({
          path: `/debug/${name}`,
          query: new URLSearchParams(query),
          method: 'GET',
          body: '',
        })
      ).body as Record<string, unknown>[];
    return { handlers, call };
  }
  it('adds ambient/workloads, ambient/services and ambient/policies', () => {
    expect([...pages().handlers.keys()]).toEqual(['ambient/workloads', 'ambient/services', 'ambient/policies']);
  });
  it('workloads are protobuf JSON with text IPs, filtered by node and namespace', async () => {
    const { call } = pages();
    const onNode2 = await call('ambient/workloads', 'node=node2');
    expect(onNode2.map((w) => [w.uid, w.addresses])).toEqual([[UID('b'), ['10.0.0.2']]]);
    expect(await call('ambient/workloads', 'namespace=other')).toEqual([]);
    expect((await call('ambient/workloads')).length).toBe(2);
  });
  it('policies are listed by resource name in protobuf JSON', async () => {
    const index = indexOf(
      storeWith([
        authz('p', 'default', { action: 'DENY', rules: [{ from: [{ source: { ipBlocks: ['10.0.0.0/8'] } }] }] }),
      ]),
    );
    const handlers = new Map<string, (req: DebugRequest) => DebugResponse | Promise<DebugResponse>>();
    registerAmbientDebug({ add: (name, _d, h) => handlers.set(name, h) }, index);
    expect(
      (await handlers.get('ambient/policies')!({ path: '', query: new URLSearchParams(), method: 'GET', body: '' }))
        .body,
    ).toEqual([
      {
        resourceName: 'default/p',
        name: 'p',
        namespace: 'default',
        scope: 'NAMESPACE',
        action: 'DENY',
        rules: [{ clauses: [{ matches: [{ sourceIps: [{ address: '10.0.0.0', length: 8 }] }] }] }],
        resourceVersion: index.get(AUTHORIZATION_TYPE_URL, 'default/p')!.version,
      },
    ]);
    index.close();
  });
  it('services show their addresses as text', async () => {
    const [svc] = await pages().call('ambient/services');
    expect(svc).toMatchObject({
      resourceName: SVC,
      hostname: 'web.default.svc.cluster.local',
      addresses: [{ address: '10.96.0.10' }],
    });
  });
});
