// The CA's metrics, with istiod's names so existing dashboards keep working. The `cluster` label
// (issue 36) is added to istiod's series; a sum over it is istiod's value.

import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface CaMetrics {
  csrCount: Counter;
  /** By the caller's cluster. */
  successCount: Counter<'cluster'>;
  /**
   * Every refused authentication, node-authorization denials included (istiod counts both here), by
   * reason and by the known cluster that refused ("" before one was decided, or for an unknown id).
   */
  authFailures: Counter<'reason' | 'cluster'>;
  csrParseErrors: Counter;
  /** By istiod's error type: TTL_ERROR, CSR_ERROR, CERT_GEN_ERROR. */
  signErrors: Counter<'error'>;
  /** By failed check and the caller's cluster. */
  nodeAuthDenials: Counter<'reason' | 'cluster'>;
  rootExpiry: Gauge;
  chainExpiry: Gauge;
  /** Calls refused by the per-node fair queue: queue_full or rate_limited. No node label. */
  fairnessDenials: Counter<'reason'>;
  /** How long calls waited for a signing slot; the fairness signal at any number of nodes. */
  queueWait: Histogram;
  /** Denials of the last log interval for its TOP_DENIED_NODES nodes only, so cardinality stays bounded. */
  topDeniedNodes: Gauge<'node' | 'reason'>;
  /** Changes to the plugged-in CA files that were not applied (incomplete, unverifiable, expired). */
  reloadRefusals: Counter;
  /** Serving-certificate renewals held back because the CA chain ends too soon (or has ended). */
  servingRenewalsLimited: Counter;
}

export function registerCaMetrics(registry: Registry): CaMetrics {
  const registers = [registry];
  return {
    csrCount: new Counter({ name: 'citadel_server_csr_count', help: 'CSRs received by the CA server', registers }),
    servingRenewalsLimited: new Counter({
      name: 'istiod_ts_serving_cert_renewals_limited_total',
      help: "Renewals of istiod's serving certificate held back because the CA chain ends too soon or has ended",
      registers,
    }),
    reloadRefusals: new Counter({
      name: 'istiod_ts_ca_reload_refused_total',
      help: 'Changes to the plugged-in CA files that were refused; the previous CA stays in use',
      registers,
    }),
    successCount: new Counter({
      name: 'citadel_server_success_cert_issuance_count',
      help: "Certificates issued, by the caller's cluster",
      labelNames: ['cluster'],
      registers,
    }),
    authFailures: new Counter({
      name: 'citadel_server_authentication_failure_count',
      help: 'Requests that failed authentication, by reason and cluster ("" when no known cluster was decided)',
      labelNames: ['reason', 'cluster'],
      registers,
    }),
    csrParseErrors: new Counter({
      name: 'citadel_server_csr_parsing_err_count',
      help: 'CSRs that could not be parsed or verified',
      registers,
    }),
    signErrors: new Counter({
      name: 'citadel_server_csr_sign_err_count',
      help: 'CSRs that failed to be signed, by error type (TTL_ERROR, CSR_ERROR, CERT_GEN_ERROR)',
      labelNames: ['error'],
      registers,
    }),
    nodeAuthDenials: new Counter({
      name: 'citadel_server_node_authorization_denial_count',
      help: "Impersonation requests denied by node authorization, by failed check and the caller's cluster",
      labelNames: ['reason', 'cluster'],
      registers,
    }),
    fairnessDenials: new Counter({
      name: 'citadel_server_csr_throttled_count',
      help: 'CSRs refused by per-node fairness, by reason (queue_full, rate_limited)',
      labelNames: ['reason'],
      registers,
    }),
    queueWait: new Histogram({
      name: 'citadel_server_csr_queue_wait_seconds',
      help: 'Time a CSR waited for a signing slot behind other nodes',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    }),
    topDeniedNodes: new Gauge({
      name: 'citadel_server_csr_throttled_top_nodes',
      help: 'CSRs refused by per-node fairness during the last log interval, for the most refused nodes only',
      labelNames: ['node', 'reason'],
      registers,
    }),
    rootExpiry: new Gauge({
      name: 'citadel_server_root_cert_expiry_timestamp',
      help: 'Unix time (seconds) when the root certificate expires',
      registers,
    }),
    chainExpiry: new Gauge({
      name: 'citadel_server_cert_chain_expiry_timestamp',
      help: 'Unix time (seconds) when the CA certificate chain expires',
      registers,
    }),
  };
}
