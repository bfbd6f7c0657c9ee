// Network gateways as istiod reads them (pilot/pkg/serviceregistry/ambient/networks.go): which
// Gateways count, what workload each becomes, and the network_gateway of workloads on its network.

import { decodeAddress } from '../../../src/ambient/codec';
import { ipToText } from '../../../src/ambient/ip';
import { networkGatewaysOf } from '../../../src/ambient/network-gateways';
import { ADDRESS_TYPE_URL } from '../../../src/contract/xds-resources';
import { gateway, indexOf, namespace, storeWith, workloadEntry, type Obj } from '../../support/ambient/fixtures';

const remoteGw = (opts: Parameters<typeof gateway>[2] = {}): Obj =>
  gateway('to-net2', 'istio-system', {
    className: 'istio-remote',
    labels: { 'topology.istio.io/network': 'net2' },
    addresses: [{ type: 'IPAddress', value: '192.0.2.7' }],
    listeners: [{ name: 'mesh', port: 15009, protocol: 'HBONE' }],
    ...opts,
  });
const vm = (name: string, network: string) =>
  workloadEntry(name, 'default', { address: '172.16.0.5', serviceAccount: 'vm', network });

function workload(index: ReturnType<typeof indexOf>, uid: string) {
  const r = index.get(ADDRESS_TYPE_URL, uid);
  return r ? decodeAddress(r.bytes).workload : undefined;
}

describe('which Gateways are network gateways', () => {
  test('config cluster: class istio-remote, a network label, a typed address, an HBONE listener', () => {
    expect(networkGatewaysOf(remoteGw().object, 'c1', true)).toEqual([
      {
        network: 'net2',
        clusterId: 'c1',
        addr: '192.0.2.7',
        hbonePort: 15009,
        serviceAccount: { namespace: 'istio-system', name: 'to-net2-istio-remote' },
        source: { namespace: 'istio-system', name: 'to-net2' },
      },
    ]);
    expect(networkGatewaysOf(remoteGw({ labels: {} }).object, 'c1', true)).toEqual([]);
    expect(networkGatewaysOf(remoteGw({ className: 'istio-waypoint' }).object, 'c1', true)).toEqual([]);
    expect(networkGatewaysOf(remoteGw({ listeners: [{ port: 80, protocol: 'HTTP' }] }).object, 'c1', true)).toEqual([]);
    expect(networkGatewaysOf(remoteGw({ addresses: [{ value: '192.0.2.7' }] }).object, 'c1', true)).toEqual([]);
  });

  test('remote cluster: class istio-east-west whose HBONE listener terminates TLS; its port is not read', () => {
    const ew = (tls?: unknown) =>
      remoteGw({
        className: 'istio-east-west',
        listeners: [{ name: 'mesh', port: 15008, protocol: 'HBONE', ...(tls ? { tls } : {}) }],
      }).object;
    expect(
      networkGatewaysOf(ew({ mode: 'Terminate' }), 'c3', false).map((g) => [g.hbonePort, g.serviceAccount.name]),
    ).toEqual([[0, 'to-net2']]);
    expect(networkGatewaysOf(ew(), 'c3', false)).toEqual([]);
    // A config-cluster rule never applies to a remote's Gateway, nor the other way round.
    expect(networkGatewaysOf(remoteGw().object, 'c3', false)).toEqual([]);
    expect(networkGatewaysOf(ew({ mode: 'Terminate' }), 'c1', true)).toEqual([]);
  });

  test('the gateway service account annotation wins', () => {
    const gw = remoteGw({ annotations: { 'gateway.istio.io/service-account': 'ew-sa' } });
    expect(networkGatewaysOf(gw.object, 'c1', true)[0]?.serviceAccount.name).toBe('ew-sa');
  });
});

describe('the index with network gateways', () => {
  test('the gateway is a workload, and workloads on its network carry network_gateway', () => {
    const index = indexOf(
      storeWith([namespace('istio-system'), remoteGw(), vm('on-net2', 'net2'), vm('on-net3', 'net3')]),
    );
    const gw = workload(index, 'NetworkGateway/net2/192.0.2.7/15009');
    expect(gw?.serviceAccount).toBe('to-net2-istio-remote');
    expect(gw?.namespace).toBe('istio-system');
    expect(gw?.addresses?.map(ipToText)).toEqual(['192.0.2.7']);
    const on2 = workload(index, 'Kubernetes/networking.istio.io/WorkloadEntry/default/on-net2');
    expect(on2?.networkGateway?.hboneMtlsPort).toBe(15009);
    expect(on2?.networkGateway?.address?.network).toBe('net2');
    expect(ipToText(on2!.networkGateway!.address!.address)).toBe('192.0.2.7');
    expect(
      workload(index, 'Kubernetes/networking.istio.io/WorkloadEntry/default/on-net3')?.networkGateway,
    ).toBeUndefined();
  });

  test('a hostname address gives a hostname gateway in the gateway namespace', () => {
    const index = indexOf(
      storeWith([remoteGw({ addresses: [{ type: 'Hostname', value: 'ew.example.com' }] }), vm('on-net2', 'net2')]),
    );
    expect(workload(index, 'Kubernetes/networking.istio.io/WorkloadEntry/default/on-net2')?.networkGateway).toEqual({
      hostname: { namespace: 'istio-system', hostname: 'ew.example.com' },
      hboneMtlsPort: 15009,
    });
    expect(workload(index, 'NetworkGateway/net2/ew.example.com/15009')?.hostname).toBe('ew.example.com');
  });

  test('a gateway added, moved and removed later updates its workloads in the same push', () => {
    const store = storeWith([vm('on-net2', 'net2')]);
    const index = indexOf(store);
    const pushed: string[][] = [];
    index.subscribe((c) => pushed.push(c.flatMap((x) => [...x.updated, ...x.removed])));
    const uid = 'Kubernetes/networking.istio.io/WorkloadEntry/default/on-net2';
    store.apply([remoteGw()]);
    expect(pushed.pop()?.sort()).toEqual([uid, 'NetworkGateway/net2/192.0.2.7/15009'].sort());
    store.apply([remoteGw({ addresses: [{ type: 'IPAddress', value: '192.0.2.8' }] })]);
    expect(ipToText(workload(index, uid)!.networkGateway!.address!.address)).toBe('192.0.2.8');
    store.apply([{ ...remoteGw(), deleted: true }]);
    expect(workload(index, uid)?.networkGateway).toBeUndefined();
    expect(workload(index, 'NetworkGateway/net2/192.0.2.8/15009')).toBeUndefined();
  });
});
