import * as path from 'node:path';
import { LocalSource } from '../../../src/store/local/local-source';
import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject, ObjectMeta } from '../../../src/store/types';

const DEMO_DIR = path.join(__dirname, '../../../examples/demo');

/** The fields of the demo's objects these tests read; the store keeps spec and status as untyped JSON. */
interface Pod {
  metadata: ObjectMeta;
  spec: {
    nodeName: string;
    serviceAccountName?: string;
    hostNetwork?: boolean;
    containers: { ports: { name?: string }[] }[];
  };
  status: { podIP: string; podIPs?: { ip: string }[]; phase?: string; conditions?: object[] };
}
interface NodeStatus {
  addresses: { type: string; address: string }[];
}
interface ServiceSpec {
  selector: Record<string, string>;
  ports: { targetPort?: number | string }[];
}
interface AuthorizationPolicySpec {
  rules: { from: { source: { principals?: string[] } }[] }[];
}

describe('the demo mesh in examples/demo', () => {
  const store = new MemoryStore();
  let source: LocalSource;

  beforeAll(async () => {
    source = new LocalSource({ dir: DEMO_DIR, writer: store, watch: false });
    await source.start();
  });
  afterAll(() => source.stop());

  const names = (objects: KubeObject[]) => objects.map((o) => o.metadata.name).sort();
  const pods = (ns?: string) => store.list('Pod', ns) as Pod[];

  test('parses with zero errors and syncs the store', () => {
    expect(source.errors()).toEqual([]);
    expect(store.hasSynced()).toBe(true);
  });

  test('has istio-system, an ambient app namespace and a namespace not enrolled', () => {
    expect(names(store.list('Namespace'))).toEqual(['bookinfo', 'istio-system', 'legacy']);
    expect(store.get('Namespace', undefined, 'bookinfo')?.metadata.labels?.['istio.io/dataplane-mode']).toBe('ambient');
    expect(store.get('Namespace', undefined, 'legacy')?.metadata.labels?.['istio.io/dataplane-mode']).toBeUndefined();
  });

  test('has two nodes with region, zone and an InternalIP', () => {
    expect(names(store.list('Node'))).toEqual(['node-a', 'node-b']);
    for (const node of store.list('Node')) {
      expect(node.metadata.labels?.['topology.kubernetes.io/region']).toBeTruthy();
      expect(node.metadata.labels?.['topology.kubernetes.io/zone']).toBeTruthy();
      const internal = (node.status as NodeStatus).addresses.find((a) => a.type === 'InternalIP');
      expect(internal?.address).toMatch(/^172\.18\.0\.\d+$/);
    }
  });

  test('runs one ztunnel per node in istio-system with service account ztunnel, owned by the ztunnel DaemonSet', () => {
    const ztunnels = pods('istio-system').filter((p) => p.metadata.labels?.['app'] === 'ztunnel');
    expect(ztunnels.map((p) => p.spec.nodeName).sort()).toEqual(['node-a', 'node-b']);
    for (const z of ztunnels) {
      expect(z.spec.serviceAccountName).toBe('ztunnel');
      expect(z.spec.hostNetwork).toBe(false);
      expect(z.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'DaemonSet', name: 'ztunnel', controller: true });
      expect(z.status.podIP).toMatch(/^10\.244\.\d+\.\d+$/);
    }
  });

  test('has app pods on both nodes, and every pod in the ambient namespace is redirected', () => {
    const apps = [...pods('bookinfo'), ...pods('legacy')];
    expect(new Set(apps.map((p) => p.spec.nodeName))).toEqual(new Set(['node-a', 'node-b']));
    for (const p of pods('bookinfo')) expect(p.metadata.annotations?.['ambient.istio.io/redirection']).toBe('enabled');
    for (const p of pods('legacy')) expect(p.metadata.annotations?.['ambient.istio.io/redirection']).toBeUndefined();
  });

  test('app pods look like a Deployment made them: ReplicaSet owner <name>-<pod-template-hash>, Running, Ready, with IPs and named ports', () => {
    for (const p of [...pods('bookinfo'), ...pods('legacy')]) {
      const owner = p.metadata.ownerReferences?.[0];
      expect(owner?.kind).toBe('ReplicaSet');
      expect(owner?.name.endsWith(`-${p.metadata.labels?.['pod-template-hash']}`)).toBe(true);
      expect(p.metadata.generateName).toBe(`${owner?.name}-`);
      expect(p.metadata.labels).toEqual(
        expect.objectContaining({ app: expect.any(String) as unknown, version: expect.any(String) as unknown }),
      );
      expect(p.status.phase).toBe('Running');
      expect(p.status.podIPs).toEqual([{ ip: p.status.podIP }]);
      expect(p.status.conditions).toContainEqual({ type: 'Ready', status: 'True' });
      expect(p.spec.serviceAccountName).toBeTruthy();
      expect(p.spec.containers[0]!.ports[0]!.name).toBeTruthy();
    }
  });

  test("pod IPs are unique and inside their node's pod CIDR", () => {
    const all = pods();
    expect(new Set(all.map((p) => p.status.podIP)).size).toBe(all.length);
    const prefix: Record<string, string> = { 'node-a': '10.244.1.', 'node-b': '10.244.2.' };
    for (const p of all) expect(p.status.podIP.startsWith(prefix[p.spec.nodeName]!)).toBe(true);
  });

  test('every Service selects at least one pod, and productpage targets its port by name', () => {
    for (const svc of store.list('Service')) {
      const selected = pods(svc.metadata.namespace).filter((p) =>
        Object.entries((svc.spec as ServiceSpec).selector).every(([k, v]) => p.metadata.labels?.[k] === v),
      );
      expect(selected.length).toBeGreaterThan(0);
    }
    const productpage = store.get('Service', 'bookinfo', 'productpage')!.spec as ServiceSpec;
    expect(productpage.ports[0]!.targetPort).toBe('http');
  });

  test('has an ALLOW AuthorizationPolicy with a selector and a principal, and a STRICT PeerAuthentication, in the ambient namespace', () => {
    const [ap] = store.list('AuthorizationPolicy', 'bookinfo');
    expect(ap?.spec).toMatchObject({ action: 'ALLOW', selector: { matchLabels: { app: 'ratings' } } });
    expect((ap?.spec as AuthorizationPolicySpec).rules[0]!.from[0]!.source.principals).toEqual([
      'cluster.local/ns/bookinfo/sa/bookinfo-reviews',
    ]);
    const [pa] = store.list('PeerAuthentication', 'bookinfo');
    expect((pa?.spec as { mtls: { mode: string } }).mtls.mode).toBe('STRICT');
  });
});
