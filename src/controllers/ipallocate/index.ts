// ServiceEntry IP auto-allocation, wired for either mode. Kubernetes mode writes status.addresses
// through the status subresource, on the leader of istiod's `istio-ip-autoallocate` lock only.
// Local mode has one replica and no API server: the addresses are kept on the store's copy of each
// entry (see LocalStatusWriter), so ztunnel sees the same VIPs it would get from istiod.

import { Gauge, type Registry } from 'prom-client';
import { LEASE_NAMES, type LeaderElector } from '../../contract/leader';
import { scopedLogger } from '../../log/logger';
import type { KubeWriter } from '../../store/kube/writes';
import type { ObjectStore, StoreWriter } from '../../store/types';
import { IpAutoallocateController } from './controller';
import { KubeAddressStatusWriter, LocalStatusWriter, type AddressStatusWriter } from './status-writer';

export { IpAutoallocateController, IP_ALLOCATE_BACKOFF, IP_ALLOCATE_MAX_ATTEMPTS } from './controller';
export { ServiceEntryAllocator, type Plan } from './allocator';
export { IP_ALLOCATE_QUARANTINE_MS } from './prefix-pool';
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
  /** Kubernetes mode: the one write path (reads back entries, and lists them past discoverySelectors). */
  kubeWriter?: Pick<KubeWriter, 'patch' | 'get' | 'list'>;
  /** Local mode: the store's writing side, standing in for the API server. */
  localStore?: Pick<StoreWriter, 'upsert'>;
  /** Where istiod_ts_ip_autoallocate_waiting_hosts is registered. */
  metrics?: Registry;
  /** Tests: a short quarantine instead of IP_ALLOCATE_QUARANTINE_MS. */
  quarantineMs?: number;
}

/** The metric of hosts waiting for an address; reads the controller of the current leadership term. */
export const WAITING_HOSTS_METRIC = 'istiod_ts_ip_autoallocate_waiting_hosts';

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
  let current: IpAutoallocateController | undefined;
  if (deps.metrics)
    new Gauge({
      name: WAITING_HOSTS_METRIC,
      help: 'ServiceEntry hosts without an auto-allocated address because their range is exhausted (0 when not the leader)',
      registers: [deps.metrics],
      collect() {
        this.set(current?.waitingHosts() ?? 0);
      },
    });
  deps.leader.runWhileLeader(LEASE_NAMES.ipAutoallocate, () => {
    const controller = new IpAutoallocateController({
      store: deps.store,
      writer,
      prefixes,
      ...(deps.quarantineMs !== undefined ? { quarantineMs: deps.quarantineMs } : {}),
    });
    current = controller;
    const stop = controller.start();
    return async () => {
      if (current === controller) current = undefined;
      await stop();
    };
  });
}
