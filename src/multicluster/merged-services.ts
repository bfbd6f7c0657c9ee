// One Service per `<ns>/<hostname>` for the whole mesh, from what each cluster's index derived
// (istiod's mergeServiceInfosWithCluster and SplitHorizonServices):
// - the config cluster's entry is the base (a ServiceEntry first), else the first remote's by id;
// - a base that is not GLOBAL is not merged: the config cluster's is served as it is, and a
//   remote's only when it is the sole entry (remote feeds hold only GLOBAL Services, so that case
//   is a GLOBAL one);
// - a GLOBAL base carries every cluster's VIPs (each tagged with its network; VIPs are unique per
//   network) and every SAN, plus the identities of its workloads on other networks, which are
//   reached through a gateway and checked by the SANs.
// istiod leaves SANs in set order; they are sorted here so equal inputs give equal bytes.

import { scopedLogger } from '../log/logger';
import { ipToText } from '../ambient/ip';
import type { NetworkAddress, Port, Service } from '../ambient/messages';

const log = scopedLogger('multicluster');

/** A Kubernetes Service's scope; a ServiceEntry's Service is neither (istiod leaves it unset). */
export type MergeScope = 'GLOBAL' | 'LOCAL' | 'ENTRY';

export interface ClusterService {
  clusterId: string;
  service: Service;
  scope: MergeScope;
}

export interface MergedService {
  service: Service;
  scope: MergeScope;
}

function vipKey(a: NetworkAddress): string {
  const bits = a.length ?? a.address.length * 8;
  return `${a.network ?? ''}/${ipToText(a.address)}/${bits}`;
}

function portsText(ports: readonly Port[] | undefined): string {
  return JSON.stringify((ports ?? []).map((p) => [p.servicePort ?? 0, p.targetPort ?? 0]).sort());
}

/** `entries` in any order; the config cluster is `localId`. */
export function mergeServices(entries: readonly ClusterService[], localId: string): MergedService | undefined {
  if (entries.length === 0) return undefined;
  const ordered = [...entries].sort((a, b) =>
    a.clusterId === localId ? -1 : b.clusterId === localId ? 1 : a.clusterId < b.clusterId ? -1 : 1,
  );
  const [first] = ordered;
  if (!first) return undefined;
  if (ordered.length === 1) return { service: first.service, scope: first.scope };
  let base = first;
  for (const e of ordered) {
    if (e.clusterId !== localId) continue;
    base = e;
    if (e.scope === 'ENTRY') break;
  }
  if (base.scope !== 'GLOBAL')
    return base.clusterId === localId ? { service: base.service, scope: base.scope } : undefined;
  const vips = new Map<string, NetworkAddress>();
  const sans = new Set<string>();
  const basePorts = portsText(base.service.ports);
  for (const e of ordered) {
    for (const a of e.service.addresses ?? []) vips.set(vipKey(a), a);
    for (const s of e.service.subjectAltNames ?? []) sans.add(s);
    if (portsText(e.service.ports) !== basePorts)
      log.warn(
        { service: `${base.service.namespace ?? ''}/${base.service.hostname}`, cluster: e.clusterId },
        'a cluster serves this GLOBAL service on other ports than the base; the base ports are served',
      );
  }
  const service: Service = { ...base.service };
  const sortedVips = [...vips.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, a]) => a);
  if (sortedVips.length) service.addresses = sortedVips;
  else delete service.addresses;
  if (sans.size) service.subjectAltNames = [...sans].sort();
  else delete service.subjectAltNames;
  return { service, scope: 'GLOBAL' };
}

/** A GLOBAL service with the identities of its workloads on other networks added to its SANs. */
export function withRemoteNetworkSans(merged: MergedService, identities: ReadonlySet<string>): Service {
  if (merged.scope !== 'GLOBAL' || identities.size === 0) return merged.service;
  const sans = new Set([...(merged.service.subjectAltNames ?? []), ...identities]);
  return { ...merged.service, subjectAltNames: [...sans].sort() };
}
