// The node untaint controller as the server starts it: Kubernetes mode, only when
// PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS is on, and only on the replica that holds istiod's lock
// istio-node-untaint, so istiod and istiod-ts replicas never untaint at the same time. The
// istio-cni pod watch lives as long as the leadership: followers hold none of it.

import { Counter, type Registry } from 'prom-client';
import { LEASE_NAMES, type LeaderElector } from '../../contract/leader';
import type { BackoffPolicy } from '../../store/kube/backoff';
import type { KubeClient } from '../../store/kube/client';
import type { WatchTiming } from '../../store/kube/kind-watcher';
import { KubeWriter } from '../../store/kube/writes';
import type { ObjectStore } from '../../store/types';
import { CniPodWatch } from './cni-pods';
import { NodeUntaintController, UNTAINT_FAILURES_METRIC } from './controller';

export {
  NodeUntaintController,
  UNTAINT_BACKOFF,
  UNTAINT_CONCURRENCY,
  UNTAINT_FAILURES_METRIC,
  UNTAINT_MAX_ATTEMPTS,
} from './controller';
export { CniPodWatch, CNI_PODS_BY_NODE } from './cni-pods';
export * from './decision';

/** The lock istiod's untainter runs under. */
export const NODE_UNTAINT_LEASE = LEASE_NAMES.nodeUntaint;

/** What the controller reads of its host. */
export interface NodeUntaintHost {
  options: {
    mode: string;
    flags: { cniNamespace: string };
    env: { PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS: boolean; PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME: string };
  };
  /** The shared store: Nodes. */
  store: ObjectStore;
  leader: LeaderElector;
  /** Where istiod_ts_node_untaint_failures_total is registered. */
  metrics?: Registry;
}

/** Faster timings for tests. */
export interface NodeUntaintTuning {
  watchTiming?: Partial<WatchTiming>;
  backoff?: BackoffPolicy;
  /** Replaces the writer built on `client` (a test that counts or disturbs writes). */
  writer?: Pick<KubeWriter, 'get' | 'patch'>;
}

/** Registers the controller under its lock; false (nothing runs) unless enabled in Kubernetes mode. */
export function startNodeUntaintController(
  host: NodeUntaintHost,
  client: KubeClient,
  tuning: NodeUntaintTuning = {},
): boolean {
  const { mode, flags, env } = host.options;
  if (mode !== 'kubernetes' || !env.PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS) return false;
  const failures = host.metrics
    ? new Counter({
        name: UNTAINT_FAILURES_METRIC,
        help: 'Failed attempts to remove the istio-cni readiness taint from a node, by HTTP status (error: none)',
        labelNames: ['code'],
        registers: [host.metrics],
      })
    : undefined;
  host.leader.runWhileLeader(NODE_UNTAINT_LEASE, () => {
    const pods = new CniPodWatch({
      client,
      namespace: flags.cniNamespace,
      ...(tuning.watchTiming ? { timing: tuning.watchTiming } : {}),
    });
    const controller = new NodeUntaintController({
      nodes: host.store,
      cniPods: pods.store,
      writer: tuning.writer ?? new KubeWriter(client),
      rule: { taintKey: env.PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME, cniNamespace: flags.cniNamespace },
      ...(tuning.backoff ? { backoff: tuning.backoff } : {}),
      ...(failures ? { failures } : {}),
    });
    controller.start();
    pods.start();
    return async () => {
      await controller.stop();
      await pods.stop();
    };
  });
  return true;
}
