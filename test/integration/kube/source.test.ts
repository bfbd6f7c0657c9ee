import { eventually } from '../../support/apiserver';
import { fatPod, namespace, service } from '../../support/apiserver/fixtures';
import { serverKeys, startServer, startSource, storeKeys } from './helpers';
import { syncPart } from '../../../src/store/kube/source';
import { LAST_APPLIED_ANNOTATION } from '../../../src/store/kube/slim';
import type { TestApiServer } from '../../support/apiserver';
import type { KubeClient } from '../../../src/store/kube/client';
import type { KubeSource } from '../../../src/store/kube/source';
import type { MeshConfig, MeshConfigSource } from '../../../src/mesh/types';

let server: TestApiServer;
let client: KubeClient;
let source: KubeSource | undefined;

beforeEach(async () => {
  ({ server, client } = await startServer());
});

afterEach(async () => {
  await source?.stop();
  source = undefined;
  await server.close();
});

function seed(): void {
  server.put(namespace('istio-system'));
  server.put(namespace('default'));
  server.put(namespace('team-a', { mesh: 'on' }));
  server.put({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'istio', namespace: 'istio-system' },
    data: { mesh: 'trustDomain: cluster.local' },
  });
  server.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other', namespace: 'istio-system' }, data: {} });
  server.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'istio', namespace: 'default' }, data: {} });
  server.put(fatPod('default', 'web-7d9f8c6b5-abcde', 1));
  server.put(fatPod('team-a', 'api-7d9f8c6b5-fghij', 2));
  server.put(service('default', 'web'));
  server.put({
    apiVersion: 'security.istio.io/v1',
    kind: 'AuthorizationPolicy',
    metadata: { name: 'deny', namespace: 'team-a' },
    spec: { action: 'DENY' },
  });
}

function meshWith(
  selectors: MeshConfig['discoverySelectors'],
): MeshConfigSource & { set(s: MeshConfig['discoverySelectors']): void } {
  let mesh: MeshConfig = {
    trustDomain: 'cluster.local',
    trustDomainAliases: [],
    rootNamespace: 'istio-system',
    defaultConfig: {},
    discoverySelectors: selectors,
  };
  const listeners = new Set<(m: MeshConfig, p: MeshConfig) => void>();
  return {
    current: () => mesh,
    subscribe: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    set(s) {
      const previous = mesh;
      mesh = { ...mesh, discoverySelectors: s };
      for (const l of listeners) l(mesh, previous);
    },
  };
}

test('initial lists fill the store and mark every kind synced', async () => {
  seed();
  const started = startSource(client);
  source = started.source;
  const { store } = started;
  await source.start();
  expect(store.hasSynced()).toBe(false);
  expect(store.unsyncedParts()).toContain(syncPart('Pod'));
  await store.whenSynced();
  expect(storeKeys(store, 'Pod')).toEqual(serverKeys(server, 'Pod'));
  expect(storeKeys(store, 'Namespace')).toEqual(serverKeys(server, 'Namespace'));
  expect(storeKeys(store, 'AuthorizationPolicy')).toEqual(serverKeys(server, 'AuthorizationPolicy'));
  expect(store.get('Service', 'default', 'web')?.kind).toBe('Service');
});

test('only ConfigMaps of the system namespace are read (the mesh and shared mesh layers)', async () => {
  seed();
  server.put({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'istio-canary', namespace: 'istio-system' },
    data: {},
  });
  const { store, source: s } = startSource(client);
  source = s;
  await s.start();
  await store.whenSynced();
  const names = store
    .list('ConfigMap')
    .map((c) => `${c.metadata.namespace}/${c.metadata.name}`)
    .sort();
  expect(names.length).toBeGreaterThan(0);
  expect(names).toContain('istio-system/istio');
  expect(names).toContain('istio-system/istio-canary');
  expect(names.every((n) => n.startsWith('istio-system/'))).toBe(true);
  await eventually('the ConfigMap watch is open', () =>
    server.requests.some((r) => r.resource === 'configmaps' && r.verb === 'watch'),
  );
  const calls = server.requests.filter((r) => r.resource === 'configmaps');
  expect(new Set(calls.map((r) => r.namespace))).toEqual(new Set(['istio-system']));
});

test('stored pods are slimmed to what the rules read', async () => {
  seed();
  const { store, source: s } = startSource(client, { kinds: ['Pod'] });
  source = s;
  await s.start();
  await store.whenSynced();
  const pod = store.get('Pod', 'default', 'web-7d9f8c6b5-abcde')!;
  expect(pod.metadata).not.toHaveProperty('managedFields');
  expect(pod.metadata.annotations).toEqual({ 'ambient.istio.io/redirection': 'enabled' });
  expect(pod.metadata.annotations).not.toHaveProperty(LAST_APPLIED_ANNOTATION);
  expect(pod.spec).toEqual({
    nodeName: 'node-1',
    serviceAccountName: 'web',
    containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] }],
  });
  expect(pod.status).toEqual({
    phase: 'Running',
    podIP: '10.0.0.1',
    hostIP: '192.168.0.1',
    podIPs: [{ ip: '10.0.0.1' }],
    conditions: [{ type: 'Ready', status: 'True' }],
  });
});

test('changes after the initial list reach the store: add, update, delete', async () => {
  seed();
  const { store, source: s } = startSource(client);
  source = s;
  await s.start();
  await store.whenSynced();
  server.put(fatPod('default', 'web-7d9f8c6b5-zzzzz', 3));
  server.put({
    ...service('default', 'web'),
    spec: { ...service('default', 'web').spec, clusterIP: '10.96.0.11', clusterIPs: ['10.96.0.11'] },
  });
  server.delete('security.istio.io/v1', 'AuthorizationPolicy', 'team-a', 'deny');
  await eventually(
    'store follows the server',
    () =>
      storeKeys(store, 'Pod').join() === serverKeys(server, 'Pod').join() &&
      store.list('AuthorizationPolicy').length === 0 &&
      (store.get('Service', 'default', 'web')?.spec as { clusterIP?: string } | undefined)?.clusterIP === '10.96.0.11',
  );
});

test('a kind whose CRD is not installed is empty, synced, and picked up once installed', async () => {
  seed();
  server.setInstalled('gateway.networking.k8s.io', 'gateways', false);
  const { store, source: s } = startSource(client);
  source = s;
  await s.start();
  await store.whenSynced();
  expect(store.list('Gateway')).toEqual([]);
  expect(source.status().Gateway).toMatchObject({ synced: true, missing: true, objects: 0 });
  expect(source.status().Pod).toMatchObject({ synced: true, missing: false, objects: 2, consecutiveFailures: 0 });
  server.setInstalled('gateway.networking.k8s.io', 'gateways', true);
  server.put({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'waypoint', namespace: 'default' },
    spec: { gatewayClassName: 'istio-waypoint', listeners: [] },
  });
  await eventually('the Gateway appears after the CRD is installed', () => store.list('Gateway').length === 1);
});

test('discoverySelectors keep unselected namespaces out, and follow selector and label changes', async () => {
  seed();
  const mesh = meshWith([{ matchLabels: { mesh: 'on' } }]);
  const { store, source: s } = startSource(client, { mesh });
  source = s;
  await s.start();
  await store.whenSynced();
  expect(store.list('Pod').map((p) => p.metadata.namespace)).toEqual(['team-a']);
  expect(store.list('Namespace').map((n) => n.metadata.name)).toEqual(['team-a']);
  // meshConfig's ConfigMaps are never filtered out, whatever the selectors say.
  expect(store.list('ConfigMap').map((c) => c.metadata.namespace)).toEqual(['istio-system', 'istio-system']);

  // A namespace gains the label: its objects arrive from the informer cache.
  server.put(namespace('default', { mesh: 'on' }));
  await eventually(
    'default joins',
    () => store.list('Pod').length === 2 && store.get('Service', 'default', 'web') !== undefined,
  );

  // Selectors change: objects of namespaces no longer selected leave the store.
  mesh.set([{ matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['default'] }] }]);
  expect(store.list('Pod').map((p) => p.metadata.namespace)).toEqual(['default']);
  expect(store.list('AuthorizationPolicy')).toEqual([]);

  // No selectors: everything.
  mesh.set(undefined);
  expect(store.list('Pod')).toHaveLength(2);
  expect(store.list('AuthorizationPolicy')).toHaveLength(1);
});

test('a second source in the same process is refused: one set of watches per process', async () => {
  const first = startSource(client);
  source = first.source;
  await first.source.start();
  const second = startSource(client);
  await expect(second.source.start()).rejects.toThrow(/already watching/);
});

test('an object without a name is skipped; the rest of the list is stored', async () => {
  seed();
  server.storage.write('/pods', { metadata: { name: '', namespace: 'default' } }, 'ADDED');
  const { store, source: s } = startSource(client, { kinds: ['Pod'] });
  source = s;
  await s.start();
  await store.whenSynced();
  expect(store.list('Pod')).toHaveLength(2);
});

test('a CRD removed while watched empties its kind and is looked for again', async () => {
  seed();
  const { store, source: s } = startSource(client, { kinds: ['AuthorizationPolicy'] });
  source = s;
  await s.start();
  await store.whenSynced();
  expect(store.list('AuthorizationPolicy')).toHaveLength(1);
  server.setInstalled('security.istio.io', 'authorizationpolicies', false);
  await eventually('the kind is empty', () => store.list('AuthorizationPolicy').length === 0);
  await eventually(
    'the missing kind is listed again',
    () => server.requests.filter((r) => r.resource === 'authorizationpolicies' && r.verb === 'list').length >= 3,
  );
  server.setInstalled('security.istio.io', 'authorizationpolicies', true);
  server.put({
    apiVersion: 'security.istio.io/v1',
    kind: 'AuthorizationPolicy',
    metadata: { name: 'back', namespace: 'default' },
    spec: {},
  });
  await eventually('the kind is back', () => store.get('AuthorizationPolicy', 'default', 'back') !== undefined);
});
