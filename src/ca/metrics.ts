// The CA's metrics, with istiod's names so existing dashboards keep working.

import { Counter, Gauge, Registry } from 'prom-client';

export interface CaMetrics {
  csrCount: Counter;
  successCount: Counter;
  authFailures: Counter<'reason'>;
  csrParseErrors: Counter;
  signErrors: Counter;
  nodeAuthDenials: Counter<'reason'>;
  rootExpiry: Gauge;
  chainExpiry: Gauge;
}

export function registerCaMetrics(registry: Registry): CaMetrics {
  const registers = [registry];
  return {
    csrCount: new Counter({ name: 'citadel_server_csr_count', help: 'CSRs received by the CA server', registers }),
    successCount: new Counter({ name: 'citadel_server_success_cert_issuance_count', help: 'Certificates issued', registers }),
    authFailures: new Counter({
      name: 'citadel_server_authentication_failure_count',
      help: 'Requests that failed authentication, by reason',
      labelNames: ['reason'],
      registers,
    }),
    csrParseErrors: new Counter({ name: 'citadel_server_csr_parsing_err_count', help: 'CSRs that could not be parsed or verified', registers }),
    signErrors: new Counter({ name: 'citadel_server_csr_sign_err_count', help: 'CSRs that failed to be signed', registers }),
    nodeAuthDenials: new Counter({
      name: 'citadel_server_node_authorization_denial_count',
      help: 'Impersonation requests denied by node authorization, by failed check',
      labelNames: ['reason'],
      registers,
    }),
    rootExpiry: new Gauge({ name: 'citadel_server_root_cert_expiry_timestamp', help: 'Unix time (seconds) when the root certificate expires', registers }),
    chainExpiry: new Gauge({ name: 'citadel_server_cert_chain_expiry_timestamp', help: 'Unix time (seconds) when the CA certificate chain expires', registers }),
  };
}
