// The split-horizon workloads: ztunnel never sees the workloads of another network one by one.
// For each GLOBAL service and each other network holding some of its workloads, istiod sends one
// workload that stands for all of them: reached through that network's (first) gateway over HBONE,
// weighted by their summed capacity (a workload without one counts 1).

import type { NetworkGateway } from '../ambient/network-gateways';
import { DEFAULT_HBONE_PORT } from '../ambient/network-gateways';
import { parseIp } from '../ambient/ip';
import { TunnelProtocol, WorkloadType, type Service, type Workload } from '../ambient/messages';

export function splitHorizonUid(network: string, gateway: NetworkGateway, serviceName: string): string {
  return `${network}/SplitHorizonWorkload/${gateway.source.namespace}/${gateway.source.name}/${gateway.addr}/${serviceName}`;
}

export function splitHorizonWorkload(
  serviceName: string,
  service: Service,
  gateway: NetworkGateway,
  capacity: number,
  trustDomain: string,
): Workload {
  const uid = splitHorizonUid(gateway.network, gateway, serviceName);
  const ip = parseIp(gateway.addr);
  const w: Workload = {
    uid,
    name: uid,
    tunnelProtocol: TunnelProtocol.HBONE,
    workloadType: WorkloadType.POD,
    networkGateway: {
      ...(ip
        ? { address: { ...(gateway.network ? { network: gateway.network } : {}), address: ip } }
        : { hostname: { namespace: gateway.source.namespace, hostname: gateway.addr } }),
      hboneMtlsPort: gateway.hbonePort || DEFAULT_HBONE_PORT,
    },
    services: { [serviceName]: service.ports?.length ? { ports: service.ports } : {} },
    capacity: { value: capacity },
  };
  if (service.namespace) w.namespace = service.namespace;
  if (gateway.network) w.network = gateway.network;
  if (trustDomain) w.trustDomain = trustDomain;
  if (gateway.clusterId) w.clusterId = gateway.clusterId;
  return w;
}
