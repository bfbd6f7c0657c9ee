// ServiceEntry IP auto-allocation, wired for either mode. Kubernetes mode writes status.addresses
// through the status subresource, on the leader of istiod's `istio-ip-autoallocate` lock only.
// Local mode has one replica and no API server: the addresses are kept on the store's copy of each
// entry (see LocalStatusWriter), so ztunnel sees the same VIPs it would get from istiod.

import { LEASE_NAMES, type LeaderElector } from '../../contract/leader';
import { scopedLogger } from '../../log/logger';
import type { KubeWriter } from '../../store/kube/writes';
import type { ObjectStore, StoreWriter } from '../../store/types';
import { IpAutoallocateController } from './controller';
import { KubeAddressStatusWriter, LocalStatusWriter, type AddressStatusWriter } from './status-writer';

export { IpAutoallocateController, IP_ALLOCATE_BACKOFF, IP_ALLOCATE_MAX_ATTEMPTS } from './controller';
export { ServiceEntryAllocator, type Plan } from './allocator';
export { KubeAddressStatusWriter, LocalStatusWriter, StaleStatusError, addressesPatch } from './status-writer';

const log = scopedLogger('ipallocate');

export interface IpAutoallocateEnv {
  PILOT_ENABLE_IP_AUTOALLOCATE: boolean;
  PILOT_IP_AUTOALLOCATE_IPV4_PREFIX: string;
  PILOT_IP_AUTOALLOCATE_IPV6_PREFIX: string;
}

export interface IpAutoallocateDeps {
  env: IpAutoallocateEnv;
  store: ObjectStore;
  leader: LeaderElector;
  /** Kubernetes mode: the one write path. */
  kubeWriter?: Pick<KubeWriter, 'patch'>;
  /** Local mode: the store's writing side, standing in for the API server. */
  localStore?: Pick<StoreWriter, 'upsert'>;
}

/** Starts the controller under its lock; does nothing when PILOT_ENABLE_IP_AUTOALLOCATE is false. */
export function startIpAutoallocate(deps: IpAutoallocateDeps): void {
  if (!deps.env.PILOT_ENABLE_IP_AUTOALLOCATE) {
    log.info('ServiceEntry IP auto-allocation is off (PILOT_ENABLE_IP_AUTOALLOCATE=false)');
    return;
  }
  let writer: AddressStatusWriter;
  if (deps.kubeWriter) writer = new KubeAddressStatusWriter(deps.kubeWriter);
  else if (deps.localStore) writer = new LocalStatusWriter(deps.store, deps.localStore);
  else return;
  const prefixes = {
    ipv4: deps.env.PILOT_IP_AUTOALLOCATE_IPV4_PREFIX,
    ipv6: deps.env.PILOT_IP_AUTOALLOCATE_IPV6_PREFIX,
  };
  deps.leader.runWhileLeader(LEASE_NAMES.ipAutoallocate, () =>
    new IpAutoallocateController({ store: deps.store, writer, prefixes }).start(),
  );
}
