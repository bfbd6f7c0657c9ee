// The remote-secret controller's metrics (docs/operations.md). Labels stay bounded: a state or a
// reason from fixed lists, never a cluster id or a secret name.

import { Counter, Gauge, type Registry } from 'prom-client';
import { REMOTE_SECRET_ERROR_REASONS, type RemoteSecretErrorReason } from './remote-secret';
import type { RemoteClusterState } from './remote-cluster';

const STATES: readonly RemoteClusterState[] = ['syncing', 'synced', 'timeout'];

export interface RemoteClusterMetrics {
  secretError(reason: RemoteSecretErrorReason): void;
  syncTimeout(): void;
}

/** `states()` is read at each scrape: the clusters joined now, by state. */
export function remoteClusterMetrics(
  registry: Registry | undefined,
  states: () => Iterable<RemoteClusterState>,
): RemoteClusterMetrics {
  if (!registry) return { secretError: () => undefined, syncTimeout: () => undefined };
  new Gauge({
    name: 'istiod_ts_remote_clusters',
    help: 'Remote clusters joined by remote secrets, by state: syncing, synced, or timeout (PILOT_REMOTE_CLUSTER_TIMEOUT passed before the initial lists were in)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const counts = new Map<RemoteClusterState, number>(STATES.map((s) => [s, 0]));
      for (const s of states()) if (counts.has(s)) counts.set(s, (counts.get(s) ?? 0) + 1);
      for (const [state, n] of counts) this.set({ state }, n);
    },
  });
  const timeouts = new Counter({
    name: 'istiod_ts_remote_cluster_sync_timeouts_total',
    help: 'Remote clusters that had not synced when PILOT_REMOTE_CLUSTER_TIMEOUT passed; the server went on without them',
    registers: [registry],
  });
  const errors = new Counter({
    name: 'istiod_ts_remote_secret_errors_total',
    help: 'Keys of remote secrets that were not joined, by reason',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of REMOTE_SECRET_ERROR_REASONS) errors.inc({ reason }, 0);
  return {
    secretError: (reason) => errors.inc({ reason }),
    syncTimeout: () => timeouts.inc(),
  };
}
