import {
  intern,
  internTableSize,
  INTERN_MAX_LENGTH,
  INTERN_TABLE_LIMIT,
  slimObject,
  slimMetadata,
  LAST_APPLIED_ANNOTATION,
} from '../../../src/store/kube/slim';
import { fatPod } from '../../support/apiserver/fixtures';
import type { KubeObject } from '../../../src/store/types';

const pod = () => fatPod('default', 'web-7d9f8c6b5-abcde', 1) as unknown as KubeObject;
/** The pod spec fields these tests set and read; KubeObject keeps spec as untyped JSON. */
type PodSpec = { hostNetwork?: boolean; initContainers?: object[] };

test('metadata keeps identity, labels, annotations and owners, and drops managedFields and last-applied', () => {
  const meta = slimMetadata({
    ...pod().metadata,
    managedFields: [{}],
    selfLink: '/x',
    finalizers: ['f'],
  } as KubeObject['metadata']);
  const present = Object.entries(meta)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k);
  expect(present.sort()).toEqual(['annotations', 'generateName', 'labels', 'name', 'namespace', 'ownerReferences']);
  expect(meta.annotations).not.toHaveProperty(LAST_APPLIED_ANNOTATION);
  expect(meta.ownerReferences).toEqual([
    {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      name: 'web-7d9f8c6b5',
      uid: '5f0c7a34-1d0e-4c55-9a6e-2f7d1e9b8a01',
      controller: true,
    },
  ]);
});

test('an annotations map holding only last-applied disappears', () => {
  expect(slimMetadata({ name: 'x', annotations: { [LAST_APPLIED_ANNOTATION]: '{}' } })).toEqual({ name: 'x' });
});

test('a pod keeps node, service account, host network, container ports, phase, IPs and the Ready condition', () => {
  const p = pod();
  (p.spec as PodSpec).hostNetwork = true;
  const slim = slimObject('Pod', p);
  expect(slim.apiVersion).toBe('v1');
  expect(slim.kind).toBe('Pod');
  expect(slim.spec).toEqual({
    nodeName: 'node-1',
    serviceAccountName: 'web',
    hostNetwork: true,
    containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] }],
  });
  expect(slim.status).toEqual({
    phase: 'Running',
    podIP: '10.0.0.1',
    hostIP: '192.168.0.1',
    podIPs: [{ ip: '10.0.0.1' }],
    conditions: [{ type: 'Ready', status: 'True' }],
  });
});

test('native sidecars (init containers with restartPolicy Always) keep their ports; other init containers go', () => {
  const p = pod();
  (p.spec as PodSpec).initContainers = [
    { name: 'setup', image: 'x', ports: [{ containerPort: 1 }] },
    { name: 'proxy', image: 'y', restartPolicy: 'Always', ports: [{ name: 'tcp', containerPort: 15008 }] },
  ];
  expect((slimObject('Pod', p).spec as PodSpec).initContainers).toEqual([
    { name: 'proxy', restartPolicy: 'Always', ports: [{ name: 'tcp', containerPort: 15008, protocol: 'TCP' }] },
  ]);
});

test('a pod without status or IPs slims without inventing fields', () => {
  const slim = slimObject('Pod', { metadata: { name: 'p', namespace: 'n' }, spec: { containers: [{ name: 'c' }] } });
  expect(slim.spec).toEqual({ containers: [{ name: 'c' }] });
  expect(slim.status).toEqual({});
});

test('a node keeps its labels and addresses but not its image list or conditions', () => {
  const node = slimObject('Node', {
    metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': 'z1' } },
    spec: { podCIDR: '10.0.0.0/24' },
    status: {
      addresses: [{ type: 'InternalIP', address: '192.168.0.1' }],
      images: [{ names: ['a'], sizeBytes: 1 }],
      conditions: [{ type: 'Ready' }],
    },
  });
  expect(node).toEqual({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': 'z1' } },
    spec: { podCIDR: '10.0.0.0/24' },
    status: { addresses: [{ type: 'InternalIP', address: '192.168.0.1' }] },
  });
});

test('other kinds keep spec, data and status, typed with their watched apiVersion', () => {
  const se = slimObject('ServiceEntry', {
    metadata: { name: 'se', namespace: 'n', managedFields: [] } as KubeObject['metadata'],
    spec: { hosts: ['a.example'] },
    status: { x: 1 },
  });
  expect(se).toEqual({
    apiVersion: 'networking.istio.io/v1',
    kind: 'ServiceEntry',
    metadata: { name: 'se', namespace: 'n' },
    spec: { hosts: ['a.example'] },
    status: { x: 1 },
  });
  const cm = slimObject('ConfigMap', {
    metadata: { name: 'istio', namespace: 'istio-system' },
    data: { mesh: 'a: b' },
  });
  expect(cm.data).toEqual({ mesh: 'a: b' });
});

// That sharing saves memory is measured by bench/scenarios/kube-memory.ts (JS cannot observe it).
test(`the intern table never holds more than ${INTERN_TABLE_LIMIT} strings`, () => {
  for (let i = 0; i < INTERN_TABLE_LIMIT + 10; i++) intern(`value-${i}`);
  expect(internTableSize()).toBeLessThanOrEqual(INTERN_TABLE_LIMIT);
});

test(`strings longer than ${INTERN_MAX_LENGTH} characters are not kept in the intern table`, () => {
  const before = internTableSize();
  intern(`long-${'x'.repeat(INTERN_MAX_LENGTH)}`);
  expect(internTableSize()).toBe(before);
  intern(`short-${Math.random()}`);
  expect(internTableSize()).toBe(before + 1);
});
