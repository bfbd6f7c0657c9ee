// A generated multicluster, multi-network mesh: one generated mesh per cluster (generate.ts), made
// into the clusters of one ambient mesh the way an operator would install them. Each cluster's
// istio-system names its network; some services are made GLOBAL by meshConfig's serviceScopeConfigs
// (a namespace and a Service labelled istio.io/global); the cluster on another network has an
// east-west Gateway, and the local cluster may carry an istio-remote Gateway for a network. istiod's
// recorder loads one folder per cluster; the multicluster goldens hold what a ztunnel of the local
// cluster receives.

import type { Manifest, MeshOptions } from './generate';
import { generateMesh } from './generate';

export interface ClusterMeshOptions {
  /** Cluster id, as the remote secret names it (and as workload uids carry it). */
  id: string;
  /** topology.istio.io/network of the cluster's istio-system. */
  network: string;
  /** The config cluster: the one istiod (and the ztunnel recorded) runs in. Exactly one is. */
  local: boolean;
  mesh: MeshOptions;
  /**
   * Added to the second octet of every 10.x.y.z address (pods, services, endpoints, node CIDRs), to
   * the fd00:10: prefix and to the third octet of the nodes' 172.18.0.x addresses (host-network
   * pods), so that two clusters on one network share no address, as real clusters on a flat network
   * do not. 0 keeps the generator's addresses: clusters on different networks may overlap.
   */
  addressShift: number;
  /** An istio-east-west Gateway of this cluster (a remote one) for its own network, at this IP. */
  eastWestGatewayIp?: string;
  /** istio-remote Gateways of this (local) cluster: network -> the address its HBONE port is reached at. */
  remoteGateways?: Readonly<Record<string, string>>;
}

export interface MulticlusterMeshOptions {
  clusters: readonly ClusterMeshOptions[];
  /** Namespaces labelled istio.io/global=true in every cluster (their Services become GLOBAL). */
  globalNamespaces: readonly string[];
  /** Services (namespace/name) labelled istio.io/global=true in every cluster. */
  globalServices: readonly string[];
}

/** The label meshConfig's serviceScopeConfigs selects, on namespaces and on Services. */
export const GLOBAL_LABEL = 'istio.io/global';

/** meshConfig for the mesh: either selector makes a Service GLOBAL; everything else stays LOCAL. */
export function multiclusterMeshConfig(): Record<string, unknown> {
  const selector = { matchLabels: { [GLOBAL_LABEL]: 'true' } };
  return {
    serviceScopeConfigs: [
      { namespaceSelector: selector, scope: 'GLOBAL' },
      { servicesSelector: selector, scope: 'GLOBAL' },
    ],
  };
}

/**
 * The kinds istiod reads from a remote cluster (pkg/kube/multicluster/cluster.go,
 * buildClusterCollections); Istio config comes from the config cluster only. A remote folder holds
 * only these, so that what it contains is what counts.
 */
const REMOTE_CLUSTER_KINDS = new Set(['Namespace', 'Node', 'Pod', 'Service', 'EndpointSlice', 'Gateway']);

const IPV4_10 = /^10\.(\d+)\.(\d+)\.(\d+)(\/\d+)?$/;
const NODE_IP = /^172\.18\.(\d+)\.(\d+)$/;

function shiftAddress(text: string, shift: number): string {
  const m = IPV4_10.exec(text);
  if (m) return `10.${Number(m[1]) + shift}.${m[2]}.${m[3]}${m[4] ?? ''}`;
  const node = NODE_IP.exec(text);
  if (node) return `172.18.${Number(node[1]) + shift}.${node[2]}`;
  if (text.startsWith('fd00:10:')) return `fd00:${10 + shift}:${text.slice('fd00:10:'.length)}`;
  return text;
}

/** Every string of a manifest that is one of those addresses, shifted; other strings kept. */
function shiftAddresses<T>(value: T, shift: number): T {
  if (shift === 0) return value;
  if (typeof value === 'string') return shiftAddress(value, shift) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => shiftAddresses(v, shift)) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shiftAddresses(v, shift)])) as T;
  return value;
}

function labelsOf(m: Manifest): Record<string, string> {
  const labels = (m.metadata['labels'] ?? {}) as Record<string, string>;
  m.metadata['labels'] = labels;
  return labels;
}

/** The HBONE listener istiod requires of a network gateway (ambient/networks.go). */
const HBONE_TERMINATE = {
  name: 'mesh',
  port: 15008,
  protocol: 'HBONE',
  tls: { mode: 'Terminate', options: { 'gateway.istio.io/tls-terminate-mode': 'ISTIO_MUTUAL' } },
};

function networkGateway(name: string, className: string, network: string, ip: string): Manifest {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: {
      name,
      namespace: 'istio-system',
      creationTimestamp: '2026-01-05T09:00:00Z',
      labels: { 'topology.istio.io/network': network },
    },
    spec: { gatewayClassName: className, listeners: [HBONE_TERMINATE] },
    status: { addresses: [{ type: 'IPAddress', value: ip }] },
  };
}

/** One cluster's manifests. */
export function generateClusterMesh(options: MulticlusterMeshOptions, cluster: ClusterMeshOptions): Manifest[] {
  const globalNs = new Set(options.globalNamespaces);
  const globalSvc = new Set(options.globalServices);
  const out: Manifest[] = [];
  for (const generated of generateMesh(cluster.mesh)) {
    if (!cluster.local && !REMOTE_CLUSTER_KINDS.has(generated.kind)) continue;
    const m = shiftAddresses(generated, cluster.addressShift);
    const { name, namespace } = m.metadata;
    if (m.kind === 'Namespace' && name === 'istio-system') labelsOf(m)['topology.istio.io/network'] = cluster.network;
    if (m.kind === 'Namespace' && globalNs.has(name)) labelsOf(m)[GLOBAL_LABEL] = 'true';
    if (m.kind === 'Service' && globalSvc.has(`${namespace}/${name}`)) labelsOf(m)[GLOBAL_LABEL] = 'true';
    out.push(m);
  }
  if (cluster.eastWestGatewayIp)
    out.push(networkGateway('istio-eastwestgateway', 'istio-east-west', cluster.network, cluster.eastWestGatewayIp));
  for (const [network, ip] of Object.entries(cluster.remoteGateways ?? {}))
    out.push(networkGateway(`istio-remote-${network}`, 'istio-remote', network, ip));
  return out;
}
