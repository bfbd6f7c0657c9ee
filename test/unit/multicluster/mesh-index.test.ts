// The mesh index over three clusters held in memory: c1 (config cluster) and c2 on network-1,
// c3 on network-2 behind an east-west gateway. What ztunnel is served is decoded and compared
// with istiod's rules (pilot/pkg/serviceregistry/ambient/multicluster.go, networks.go).

import { decodeAddress } from '../../../src/ambient/codec';
import { ipToText } from '../../../src/ambient/ip';
import type { Address } from '../../../src/ambient/messages';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL, type ChangeSet } from '../../../src/contract/xds-resources';
import { MeshIndex } from '../../../src/multicluster/mesh-index';
import type { ClusterDirectory, ClusterEvent, MeshCluster } from '../../../src/store/clusters';
import type { MemoryStore } from '../../../src/store/memory-store';
import {
  authz,
  gateway,
  meshSource,
  namespace,
  pod,
  service,
  storeWith,
  type Obj,
} from '../../support/ambient/fixtures';

const GLOBAL_SCOPE = {
  serviceScopeConfigs: [{ servicesSelector: { matchLabels: { 'istio.io/global': 'true' } }, scope: 'GLOBAL' }],
};

class FakeDirectory implements ClusterDirectory {
  readonly localId = 'c1';
  private readonly clusters = new Map<string, MeshCluster>();
  private readonly listeners = new Set<(e: ClusterEvent) => void>();
  set(id: string, store: MemoryStore, type?: ClusterEvent['type']): void {
    const c: MeshCluster = { id, local: id === this.localId, store, synced: () => true };
    this.clusters.set(id, c);
    if (type) for (const l of this.listeners) l({ type, cluster: c });
  }
  remove(id: string): void {
    const c = this.clusters.get(id);
    this.clusters.delete(id);
    if (c) for (const l of this.listeners) l({ type: 'removed', cluster: c });
  }
  get(id: string) {
    return this.clusters.get(id);
  }
  list() {
    return [...this.clusters.values()].sort((a, b) => (a.local ? -1 : b.local ? 1 : a.id < b.id ? -1 : 1));
  }
  subscribe(l: (e: ClusterEvent) => void) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}

const systemNs = (network: string) => namespace('istio-system', { 'topology.istio.io/network': network });
const globalSvc = (ip: string) =>
  service('web', { ns: 'apps', labels: { 'istio.io/global': 'true' }, spec: { clusterIP: ip, clusterIPs: [ip] } });
const localSvc = (ip: string) => service('db', { ns: 'apps', spec: { clusterIP: ip, clusterIPs: [ip] } });
const webPod = (name: string, ip: string) => pod(name, { ns: 'apps', ip, labels: { app: 'web' } });
const eastWest = gateway('eastwest', 'istio-system', {
  className: 'istio-east-west',
  labels: { 'topology.istio.io/network': 'network-2' },
  addresses: [{ type: 'IPAddress', value: '172.30.0.1' }],
  listeners: [{ name: 'mesh', port: 15008, protocol: 'HBONE', tls: { mode: 'Terminate' } }],
});

function clusterObjects(network: string, extra: Obj[]): Obj[] {
  return [systemNs(network), namespace('apps'), ...extra];
}

function setup(opts: { eastWest?: boolean } = {}) {
  const directory = new FakeDirectory();
  const mesh = meshSource(GLOBAL_SCOPE);
  const c1 = storeWith(
    clusterObjects('network-1', [
      globalSvc('10.1.0.10'),
      localSvc('10.1.0.20'),
      webPod('web-a', '10.1.1.1'),
      pod('db-a', { ns: 'apps', ip: '10.1.1.2', labels: { app: 'db' } }),
      authz('allow-web', 'apps', { selector: { matchLabels: { app: 'web' } } }),
    ]),
  );
  const c2 = storeWith(
    clusterObjects('network-1', [
      globalSvc('10.2.0.10'),
      localSvc('10.2.0.20'),
      webPod('web-b', '10.2.1.1'),
      pod('db-b', { ns: 'apps', ip: '10.2.1.2', labels: { app: 'db' } }),
    ]),
  );
  const c3 = storeWith(
    clusterObjects('network-2', [
      globalSvc('10.3.0.10'),
      webPod('web-c', '10.3.1.1'),
      webPod('web-d', '10.3.1.2'),
      ...(opts.eastWest === false ? [] : [eastWest]),
    ]),
  );
  directory.set('c1', c1);
  directory.set('c2', c2);
  directory.set('c3', c3);
  const index = new MeshIndex({ clusters: directory, mesh, domain: 'cluster.local', systemNamespace: 'istio-system' });
  const changes: ChangeSet[] = [];
  index.subscribe((c) => changes.push(...c));
  return { directory, mesh, index, changes, c1, c2, c3 };
}

function served(index: MeshIndex): Map<string, Address> {
  const out = new Map<string, Address>();
  for (const r of index.all(ADDRESS_TYPE_URL)) out.set(r.name, decodeAddress(r.bytes));
  return out;
}

const WEB = 'apps/web.apps.svc.cluster.local';
const DB = 'apps/db.apps.svc.cluster.local';

describe('MeshIndex: what a ztunnel of the config cluster is served', () => {
  test('workloads of both clusters on the local network, each with its cluster_id; none of network-2', () => {
    const { index } = setup();
    const workloads = [...served(index).values()].flatMap((a) => (a.workload ? [a.workload] : []));
    const pods = workloads.filter((w) => w.uid.includes('//Pod/'));
    expect(pods.map((w) => [w.uid, w.clusterId, w.network]).sort()).toEqual([
      ['c1//Pod/apps/db-a', 'c1', 'network-1'],
      ['c1//Pod/apps/web-a', 'c1', 'network-1'],
      ['c2//Pod/apps/db-b', 'c2', 'network-1'],
      ['c2//Pod/apps/web-b', 'c2', 'network-1'],
    ]);
    // The config cluster's policies bind the remote pods too.
    expect(pods.find((w) => w.uid === 'c2//Pod/apps/web-b')?.authorizationPolicies).toEqual(['apps/allow-web']);
  });

  test('a GLOBAL service carries every cluster VIP in network/ip order; a LOCAL one only the config cluster', () => {
    const { index } = setup();
    const web = served(index).get(WEB)?.service;
    expect(web?.addresses?.map((a) => `${a.network ?? ''}/${ipToText(a.address)}`)).toEqual([
      'network-1/10.1.0.10',
      'network-1/10.2.0.10',
      'network-2/10.3.0.10',
    ]);
    const db = served(index).get(DB)?.service;
    expect(db?.addresses?.map((a) => ipToText(a.address))).toEqual(['10.1.0.20']);
    // The remote pod selected only by a LOCAL service lists no service.
    expect(served(index).get('c2//Pod/apps/db-b')?.workload?.services).toBeUndefined();
    expect(Object.keys(served(index).get('c2//Pod/apps/web-b')?.workload?.services ?? {})).toEqual([WEB]);
  });

  test('network-2 is one split-horizon workload per GLOBAL service through its east-west gateway', () => {
    const { index } = setup();
    const all = served(index);
    const split = [...all.values()].flatMap((a) =>
      a.workload?.uid.includes('/SplitHorizonWorkload/') ? [a.workload] : [],
    );
    expect(split).toHaveLength(1);
    const [w] = split;
    expect(w?.uid).toBe(`network-2/SplitHorizonWorkload/istio-system/eastwest/172.30.0.1/${WEB}`);
    expect(w?.capacity).toEqual({ value: 2 });
    expect(w?.clusterId).toBe('c3');
    expect(w?.network).toBe('network-2');
    expect(w?.networkGateway?.hboneMtlsPort).toBe(15008);
    expect(ipToText(w!.networkGateway!.address!.address)).toBe('172.30.0.1');
    expect(Object.keys(w?.services ?? {})).toEqual([WEB]);
    // The gateway itself is a workload, so ztunnel can resolve it.
    expect(all.has('NetworkGateway/network-2/172.30.0.1/0')).toBe(true);
    // The remote network's identities are in the service's SANs.
    expect(all.get(WEB)?.service?.subjectAltNames).toEqual(['spiffe://cluster.local/ns/apps/sa/sa']);
  });

  test('without a gateway for network-2 there is no split-horizon workload', () => {
    const { index } = setup({ eastWest: false });
    expect([...served(index).keys()].filter((n) => n.includes('SplitHorizon'))).toEqual([]);
  });

  test('authorizations are the config cluster’s, once', () => {
    const { index } = setup();
    expect([...index.all(AUTHORIZATION_TYPE_URL)].map((r) => r.name)).toEqual(['apps/allow-web']);
  });

  test('on-demand lookups find remote workloads by network/IP and a service brings every cluster’s members', () => {
    const { index } = setup();
    expect(index.resolveAddress('network-1/10.2.1.1')).toEqual(['c2//Pod/apps/web-b']);
    expect(index.resolveAddress('network-2/10.3.1.1')).toEqual([]);
    expect(index.resolveAddress(WEB).sort()).toEqual(
      [
        WEB,
        `network-2/SplitHorizonWorkload/istio-system/eastwest/172.30.0.1/${WEB}`,
        'c1//Pod/apps/web-a',
        'c2//Pod/apps/web-b',
      ].sort(),
    );
  });
});

describe('MeshIndex: changes', () => {
  test('a remote pod change is pushed with its uid; a network-2 pod changes only the split-horizon workload', () => {
    const { index, changes, c2, c3 } = setup();
    c2.apply([webPod('web-b2', '10.2.1.9')].map((o) => ({ kind: o.kind, object: o.object })));
    expect(changes.flatMap((c) => c.updated)).toContain('c2//Pod/apps/web-b2');
    changes.length = 0;
    c3.apply([webPod('web-e', '10.3.1.3')].map((o) => ({ kind: o.kind, object: o.object })));
    const updated = changes.flatMap((c) => c.updated);
    expect(updated).not.toContain('c3//Pod/apps/web-e');
    expect(updated).toContain(`network-2/SplitHorizonWorkload/istio-system/eastwest/172.30.0.1/${WEB}`);
    const split = served(index).get(`network-2/SplitHorizonWorkload/istio-system/eastwest/172.30.0.1/${WEB}`);
    expect(split?.workload?.capacity).toEqual({ value: 3 });
  });

  test("removing a cluster's secret removes its workloads and VIPs in one push", () => {
    const { index, directory, changes } = setup();
    directory.remove('c2');
    expect(changes).toHaveLength(1);
    expect(changes[0]?.removed.slice().sort()).toEqual(['c2//Pod/apps/db-b', 'c2//Pod/apps/web-b']);
    expect(changes[0]?.updated).toContain(WEB);
    expect(
      served(index)
        .get(WEB)
        ?.service?.addresses?.map((a) => ipToText(a.address)),
    ).toEqual(['10.1.0.10', '10.3.0.10']);
    expect([...served(index).keys()].filter((n) => n.startsWith('c2/'))).toEqual([]);
  });

  test('a replaced cluster (changed kubeconfig) with the same objects changes nothing', () => {
    const { directory, changes, c2 } = setup();
    const again = storeWith(c2.list('Namespace').map((o) => ({ kind: 'Namespace' as const, object: o })));
    again.apply((['Service', 'Pod'] as const).flatMap((kind) => c2.list(kind).map((object) => ({ kind, object }))));
    directory.set('c2', again, 'updated');
    expect(changes).toEqual([]);
  });

  test('a service becoming LOCAL leaves the remote clusters and their split-horizon workload', () => {
    const { index, mesh } = setup();
    mesh.set({ serviceScopeConfigs: [] });
    const all = served(index);
    expect(all.get(WEB)?.service?.addresses?.map((a) => ipToText(a.address))).toEqual(['10.1.0.10']);
    expect([...all.keys()].filter((n) => n.includes('SplitHorizon'))).toEqual([]);
    expect(Object.keys(all.get('c2//Pod/apps/web-b')?.workload?.services ?? {})).toEqual([]);
  });

  test('a new remote cluster joins with its workloads in one push', () => {
    const { directory, changes } = setup();
    const c4 = storeWith(clusterObjects('network-1', [globalSvc('10.4.0.10'), webPod('web-z', '10.4.1.1')]));
    directory.set('c4', c4, 'added');
    expect(changes).toHaveLength(1);
    expect(changes[0]?.updated.slice().sort()).toEqual(['c4//Pod/apps/web-z', WEB].sort());
  });
});
