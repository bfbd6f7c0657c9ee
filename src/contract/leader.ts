// Singleton controllers and the leases they run under. The Kubernetes elector (store/kube/leader)
// and the local one (always the leader) implement LeaderElector; the controllers name their lease
// from LEASE_NAMES, the one place those names are written.

/** Runs singleton controllers only while this replica leads; local mode always leads. */
export interface LeaderElector {
  /** Starts `run` when leadership of `lease` is gained; calls the returned stop when it is lost. */
  runWhileLeader(lease: string, run: () => () => void | Promise<void>): void;
}

/**
 * Election names: istiod's, each on the lock kind istiod uses for it (store/kube/leader.ts), so a
 * mixed istiod/istiod-ts deployment never double-runs a controller.
 */
export const LEASE_NAMES = {
  /** Root certificate ConfigMap in every namespace (istiod: NamespaceController, ConfigMap lock). */
  namespaceController: 'istio-namespace-controller-election',
  /**
   * Webhook caBundle / failurePolicy patching. istiod-ts only: istiod's validation controller runs
   * on every replica without an election and no longer takes this name, so this ConfigMap lock
   * orders istiod-ts replicas among themselves, not against istiod.
   */
  validationController: 'istio-validation-controller-election',
  /** Removes the istio-cni readiness taint from nodes (istiod: NodeUntaintController, ConfigMap lock). */
  nodeUntaint: 'istio-node-untaint',
  /** ServiceEntry status.addresses allocation (istiod: IPAutoallocateController, ConfigMap lock). */
  ipAutoallocate: 'istio-ip-autoallocate',
  /** Ambient status conditions (istiod: StatusController; a Lease, istiod's NewLeaseLeaderElection). */
  status: 'istio-status-leader',
} as const;
