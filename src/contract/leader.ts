// Singleton controllers and the leases they run under. The Kubernetes elector (store/kube/leader)
// and the local one (always the leader) implement LeaderElector; the controllers name their lease
// from LEASE_NAMES, the one place those names are written.

/** Runs singleton controllers only while this replica leads; local mode always leads. */
export interface LeaderElector {
  /** Starts `run` when leadership of `lease` is gained; calls the returned stop when it is lost. */
  runWhileLeader(lease: string, run: () => () => void | Promise<void>): void;
}

/** Lease names: istiod's, so a mixed istiod/istiod-ts deployment never double-runs a controller. */
export const LEASE_NAMES = {
  /** Root certificate ConfigMap in every namespace (istiod: NamespaceController). */
  namespaceController: 'istio-namespace-controller-election',
  /** Webhook caBundle / failurePolicy patching (istiod: ValidationController). */
  validationController: 'istio-validation-controller-election',
  /** Removes the istio-cni readiness taint from nodes (istiod: NodeUntaintController). */
  nodeUntaint: 'istio-node-untaint',
  /** ServiceEntry status.addresses allocation (istiod: IPAutoallocateController). */
  ipAutoallocate: 'istio-ip-autoallocate',
  /** Status conditions written for ztunnel's view of resources (istiod: StatusController). */
  status: 'istio-status-leader',
} as const;
