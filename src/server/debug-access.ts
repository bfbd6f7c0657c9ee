// Who may read /debug/ on the monitoring port (:15014), by istiod's rules: loopback callers always;
// anyone else authenticates as xDS and CA callers do (a bearer service-account token, checked by the
// same CallAuthenticator) and must be in the system namespace (POD_NAMESPACE). A refusal tells the
// caller only 401 or 403 with a generic message; the log and a metric carry the exact reason.

import { EventEmitter } from 'node:events';
import type * as http from 'node:http';
import * as grpc from '@grpc/grpc-js';
import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';
import { Counter, type Registry } from 'prom-client';
import { scopedLogger } from '../log/logger';
import { AuthError } from '../security/auth-error';
import { AUTHORIZATION_HEADER, CLUSTER_ID_HEADER } from '../security/authenticator';
import type { CallAuthenticator } from '../security/identity';
import { clientText } from '../xds/wire/client-limits';
import { isLoopback, type DebugAccess } from './http';

const log = scopedLogger('debug');

/** Counter of refused remote debug requests, by reason (an AuthFailureReason or `not_system_namespace`). */
export const DEBUG_AUTH_FAILURES_METRIC = 'istiod_ts_debug_auth_failures_total';

/** What a refused caller reads: nothing about why. */
export const DEBUG_UNAUTHENTICATED_MESSAGE = 'authentication failed';
export const DEBUG_FORBIDDEN_MESSAGE = 'permission denied';
export const DEBUG_UNAVAILABLE_MESSAGE = 'authentication is unavailable; try again';

/**
 * grpc-js's call surface, as much as the CallAuthenticator reads of it: the two headers it checks
 * (Authorization, clusterid), no TLS peer (the monitoring port is plain HTTP), and a `cancelled`
 * event when the HTTP client goes away so a TokenReview made for it stops.
 */
function callOf(req: http.IncomingMessage, res: http.ServerResponse): ServerSurfaceCall {
  const metadata = new grpc.Metadata();
  const auth = req.headers[AUTHORIZATION_HEADER];
  if (typeof auth === 'string') metadata.set(AUTHORIZATION_HEADER, auth);
  const cluster = req.headers[CLUSTER_ID_HEADER];
  if (typeof cluster === 'string') metadata.set(CLUSTER_ID_HEADER, cluster);
  const events = new EventEmitter();
  const call = Object.assign(events, {
    metadata,
    cancelled: false,
    getAuthContext: () => ({}),
    getPeer: () => req.socket.remoteAddress ?? 'unknown',
    getDeadline: () => Infinity,
  });
  res.once('close', () => {
    if (res.writableFinished) return;
    call.cancelled = true;
    events.emit('cancelled');
  });
  return call as unknown as ServerSurfaceCall;
}

export class MonitoringDebugAccess {
  private authenticator: CallAuthenticator | undefined;
  private readonly failures: Counter<'reason'>;

  /**
   * `isLocal` decides which callers skip authentication: loopback addresses. Tests, whose every
   * connection is loopback, stand a remote caller in with it.
   */
  constructor(
    private readonly systemNamespace: string,
    registry: Registry,
    private readonly isLocal: (address: string | undefined) => boolean = isLoopback,
  ) {
    this.failures = new Counter({
      name: DEBUG_AUTH_FAILURES_METRIC,
      help: 'Remote /debug/ requests on the monitoring port refused, by reason.',
      labelNames: ['reason'],
      registers: [registry],
    });
  }

  /** The CA's authenticator, once it has started; until then remote callers get 503. */
  setAuthenticator(authenticator: CallAuthenticator): void {
    this.authenticator = authenticator;
  }

  async check(req: http.IncomingMessage, res: http.ServerResponse): Promise<DebugAccess> {
    // istiod answers itself and a port-forward from the pod without credentials.
    if (this.isLocal(req.socket.remoteAddress)) return { allowed: true };
    const who = { peer: req.socket.remoteAddress, path: clientText((req.url ?? '').split('?')[0]) };
    if (!this.authenticator) {
      log.warn(who, 'remote debug request refused: the authenticator has not started yet');
      return { allowed: false, status: 503, message: DEBUG_UNAVAILABLE_MESSAGE };
    }
    let namespace: string;
    let identity: string;
    try {
      const caller = await this.authenticator.authenticate(callOf(req, res));
      namespace = caller.namespace;
      identity = caller.identities[0];
    } catch (err) {
      const reason = err instanceof AuthError ? err.reason : 'invalid_token';
      this.failures.inc({ reason });
      log.warn({ ...who, reason, err: clientText((err as Error).message) }, 'remote debug request not authenticated');
      if (err instanceof AuthError && err.retryable)
        return { allowed: false, status: 503, message: DEBUG_UNAVAILABLE_MESSAGE };
      return { allowed: false, status: 401, message: DEBUG_UNAUTHENTICATED_MESSAGE };
    }
    if (namespace !== this.systemNamespace) {
      this.failures.inc({ reason: 'not_system_namespace' });
      log.warn(
        { ...who, identity, namespace, systemNamespace: this.systemNamespace },
        'remote debug request refused: the caller is not in the system namespace',
      );
      return { allowed: false, status: 403, message: DEBUG_FORBIDDEN_MESSAGE };
    }
    return { allowed: true };
  }
}
