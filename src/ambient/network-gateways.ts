// Network gateways: the Gateways through which a workload on another network is reached. istiod
// reads two kinds: in the config cluster, a Gateway of class istio-remote names another network's
// gateway (its address and HBONE port); in a remote cluster, a Gateway of class istio-east-west is
// that cluster's own east-west gateway (an address only: its HBONE port is not read, so it never
// fills a workload's network_gateway, only the split-horizon workloads). Both need the
// topology.istio.io/network label, a typed status address and an HBONE listener.
//
// One table is shared by the indexes of every cluster: each files its own cluster's gateways, and
// every index reads the merged view (a workload's network_gateway, the NetworkGateway workloads).

import type { KubeObject } from '../store/types';
import { LABEL } from './constants';
import type { GatewayAddress, Workload } from './messages';
import { parseIp } from './ip';
import { gatewaySpec, gatewayStatus, namespaceOf } from './specs';

export const REMOTE_GATEWAY_CLASS = 'istio-remote';
export const EAST_WEST_GATEWAY_CLASS = 'istio-east-west';
/** The HBONE port of a split-horizon workload whose gateway names none (istiod's default). */
export const DEFAULT_HBONE_PORT = 15008;
const GATEWAY_SERVICE_ACCOUNT_ANNOTATION = 'gateway.istio.io/service-account';

export interface NetworkGateway {
  network: string;
  clusterId: string;
  /** An IP or a hostname. */
  addr: string;
  /** 0 for a remote cluster's east-west gateway. */
  hbonePort: number;
  serviceAccount: { namespace: string; name: string };
  source: { namespace: string; name: string };
}

/** istiod's key of a network gateway: `<ns>/<name>/<addr>`; two clusters' gateways with one key are one. */
export function networkGatewayKey(g: NetworkGateway): string {
  return `${g.source.namespace}/${g.source.name}/${g.addr}`;
}

function gatewayServiceAccount(gw: KubeObject, className: string): string {
  const named = gw.metadata.annotations?.[GATEWAY_SERVICE_ACCOUNT_ANNOTATION];
  if (named) return named;
  return className === REMOTE_GATEWAY_CLASS ? `${gw.metadata.name}-${className}` : gw.metadata.name;
}

/**
 * The network gateways a Gateway stands for: one per typed status address (IPAddress or Hostname),
 * when a listener speaks HBONE. `local` is whether the Gateway is in the config cluster.
 */
export function networkGatewaysOf(gw: KubeObject, clusterId: string, local: boolean): NetworkGateway[] {
  const network = gw.metadata.labels?.[LABEL.network];
  if (!network) return [];
  const spec = gatewaySpec(gw);
  const className = spec.gatewayClassName ?? '';
  if (className !== (local ? REMOTE_GATEWAY_CLASS : EAST_WEST_GATEWAY_CLASS)) return [];
  const listener = (spec.listeners ?? []).find(
    (l) =>
      l.protocol === 'HBONE' &&
      // A remote cluster's east-west gateway must terminate TLS on its HBONE listener.
      (local || (l as { tls?: { mode?: string } }).tls?.mode === 'Terminate'),
  );
  if (!listener) return [];
  const ns = namespaceOf(gw);
  const out: NetworkGateway[] = [];
  for (const a of gatewayStatus(gw).addresses ?? []) {
    if ((a.type !== 'IPAddress' && a.type !== 'Hostname') || !a.value) continue;
    out.push({
      network,
      clusterId,
      addr: a.value,
      hbonePort: local ? (listener.port ?? 0) : 0,
      serviceAccount: { namespace: ns, name: gatewayServiceAccount(gw, className) },
      source: { namespace: ns, name: gw.metadata.name },
    });
  }
  return out;
}

/** The uid (and name) of a network gateway's workload. */
export function networkGatewayUid(g: NetworkGateway): string {
  return `NetworkGateway/${g.network}/${g.addr}/${g.hbonePort}`;
}

/** The workload ztunnel resolves a network_gateway hostname or address through. */
export function networkGatewayWorkload(g: NetworkGateway, trustDomain: string): Workload {
  const uid = networkGatewayUid(g);
  const w: Workload = { uid, name: uid, namespace: g.serviceAccount.namespace, serviceAccount: g.serviceAccount.name };
  if (g.network) w.network = g.network;
  if (trustDomain) w.trustDomain = trustDomain;
  const ip = parseIp(g.addr);
  if (ip) w.addresses = [ip];
  else w.hostname = g.addr;
  return w;
}

/** A workload's network_gateway: the first of its network's gateways that names an HBONE port. */
export function gatewayAddressOf(gateways: readonly NetworkGateway[]): GatewayAddress | undefined {
  for (const g of gateways) {
    if (g.hbonePort === 0) continue;
    const ip = parseIp(g.addr);
    return ip
      ? { address: { ...(g.network ? { network: g.network } : {}), address: ip }, hboneMtlsPort: g.hbonePort }
      : { hostname: { namespace: g.serviceAccount.namespace, hostname: g.addr }, hboneMtlsPort: g.hbonePort };
  }
  return undefined;
}

/** What changed in the table: the gateway addresses workloads carry, or only the gateway list. */
export interface NetworkGatewayChange {
  /** Some network's network_gateway changed: every workload of the mesh must be derived again. */
  addresses: boolean;
}

/**
 * Every cluster's network gateways, merged by key with the config cluster's first (istiod's rule),
 * listed in key order so the first gateway of a network is the same on every run.
 */
export class NetworkGatewayTable {
  /** clusterId -> Gateway `<ns>/<name>` -> its network gateways. */
  private readonly byCluster = new Map<string, Map<string, NetworkGateway[]>>();
  private merged: NetworkGateway[] | undefined;
  private byNetwork: Map<string, NetworkGateway[]> | undefined;
  private readonly listeners = new Set<(change: NetworkGatewayChange) => void>();

  constructor(private readonly localClusterId: string) {}

  /** Files the gateways of one Gateway; what changed, told to every listener but `origin`. */
  set(
    clusterId: string,
    gatewayKey: string,
    gateways: readonly NetworkGateway[],
    origin?: unknown,
  ): NetworkGatewayChange | undefined {
    const filed = this.byCluster.get(clusterId);
    if (JSON.stringify(filed?.get(gatewayKey) ?? []) === JSON.stringify(gateways)) return undefined;
    return this.mutate(origin, () => {
      let files = filed;
      if (!files) this.byCluster.set(clusterId, (files = new Map<string, NetworkGateway[]>()));
      if (gateways.length) files.set(gatewayKey, [...gateways]);
      else files.delete(gatewayKey);
      if (files.size === 0) this.byCluster.delete(clusterId);
    });
  }

  /** Forgets a cluster's gateways (its secret is gone). */
  dropCluster(clusterId: string, origin?: unknown): NetworkGatewayChange | undefined {
    if (!this.byCluster.has(clusterId)) return undefined;
    return this.mutate(origin, () => this.byCluster.delete(clusterId));
  }

  /** Hears every change but those whose `origin` is this listener. */
  subscribe(listener: (change: NetworkGatewayChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  all(): readonly NetworkGateway[] {
    return (this.merged ??= this.merge());
  }

  forNetwork(network: string): readonly NetworkGateway[] {
    if (!this.byNetwork) {
      this.byNetwork = new Map();
      for (const g of this.all()) {
        const list = this.byNetwork.get(g.network);
        if (list) list.push(g);
        else this.byNetwork.set(g.network, [g]);
      }
    }
    return this.byNetwork.get(network) ?? [];
  }

  /** The network_gateway of a workload on `network`, if any gateway of it names an HBONE port. */
  addressFor(network: string): GatewayAddress | undefined {
    if (this.byCluster.size === 0) return undefined;
    return gatewayAddressOf(this.forNetwork(network));
  }

  private merge(): NetworkGateway[] {
    const byKey = new Map<string, NetworkGateway>();
    const clusters = [...this.byCluster.keys()].sort((a, b) =>
      a === this.localClusterId ? -1 : b === this.localClusterId ? 1 : a < b ? -1 : a > b ? 1 : 0,
    );
    for (const c of clusters)
      for (const list of this.byCluster.get(c)?.values() ?? [])
        for (const g of list) if (!byKey.has(networkGatewayKey(g))) byKey.set(networkGatewayKey(g), g);
    return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, g]) => g);
  }

  private mutate(origin: unknown, apply: () => void): NetworkGatewayChange {
    const before = this.addressesText();
    apply();
    this.merged = undefined;
    this.byNetwork = undefined;
    const change = { addresses: before !== this.addressesText() };
    for (const l of this.listeners) if (l !== origin) l(change);
    return change;
  }

  /** Only gateways with an HBONE port reach a workload's network_gateway. */
  private addressesText(): string {
    return JSON.stringify(
      this.all()
        .filter((g) => g.hbonePort !== 0)
        .map((g) => [g.network, g.addr, g.hbonePort, g.serviceAccount.namespace]),
    );
  }
}
