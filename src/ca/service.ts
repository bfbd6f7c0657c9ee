// IstioCertificateService/CreateCertificate: authenticate, authorize impersonation, check the
// CSR and the requested lifetime, sign, audit. Each refusal gets istiod's gRPC code and a log
// line with the precise reason; the server keeps serving everyone else.

import * as grpc from '@grpc/grpc-js';
import { scopedLogger } from '../log/logger';
import { podNodeName } from '../store/fields';
import type { ObjectStore } from '../store/types';
import { AuthError } from '../security/auth-error';
import type { Authenticated } from '../security/authenticator';
import type { NodeAuthorizer } from '../security/node-authorizer';
import type { CertificateAuthority } from './signing/authority';
import { CsrError, ParsedCsr, parseCsr } from './signing/csr';
import { FairnessDenial, NodeFairQueue } from './signing/fair-queue';
import { IssuerValidityError } from './signing/leaf-signer';
import type { CaMetrics } from './metrics';
import { IstioCertificateRequest, IstioCertificateResponse, certificateServiceDefinition } from './proto';

const log = scopedLogger('ca');
const audit = scopedLogger('ca.audit');

export const IMPERSONATED_IDENTITY_KEY = 'ImpersonatedIdentity';
export const AUTHENTICATE_FAILURE = 'request authenticate failure';
export const IMPERSONATION_FAILURE = 'request impersonation authentication failure';
/** When the API server cannot review the token: as opaque as a refusal, but UNAVAILABLE so the caller retries. */
export const AUTHENTICATE_UNAVAILABLE = 'request authenticate failure: try again later';

/** A caller's cluster as the CA reads it: node names and pods mean something only inside one cluster. */
export interface CallerCluster {
  /** The config cluster: its node names are the fair queue's lanes as they are. */
  local: boolean;
  /** The cluster's pods: where the caller's own pod, and so its node, is looked up. */
  store: ObjectStore;
  /** Over the same store; absent when impersonation is disabled. */
  nodeAuthorizer: NodeAuthorizer | undefined;
}

export interface CertificateServiceDeps {
  authority: CertificateAuthority;
  authenticator: { authenticate(call: grpc.ServerUnaryCall<unknown, unknown>): Promise<Authenticated> };
  /** The cluster a caller was authenticated in, by id; undefined once it has left the mesh. */
  clusters: (clusterId: string) => CallerCluster | undefined;
  metrics: CaMetrics;
  defaultTtlMs: () => number;
  maxTtlMs: () => number;
  /** Per-node fair scheduling of CSR checks and signing; absent, calls run in arrival order. */
  fairQueue?: NodeFairQueue;
}

class Refusal extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

/** validity_duration in seconds -> lifetime in ms; 0 or less means the default. */
export function requestedTtlMs(validity: string | number | undefined, defaultMs: number, maxMs: number): number {
  let seconds: bigint;
  try {
    seconds = BigInt(validity ?? 0);
  } catch {
    throw new Refusal(grpc.status.INVALID_ARGUMENT, `validity_duration "${String(validity)}" is not an integer`);
  }
  // istiod gives the default lifetime to any non-positive request, a negative one included.
  if (seconds <= 0n) return defaultMs;
  if (seconds * 1000n > BigInt(maxMs)) {
    throw new Refusal(
      grpc.status.INVALID_ARGUMENT,
      `requested TTL ${seconds}s is greater than the max allowed TTL ${maxMs / 1000}s`,
    );
  }
  return Number(seconds) * 1000;
}

function impersonationRequest(req: IstioCertificateRequest): string | undefined {
  const value = req.metadata?.fields?.[IMPERSONATED_IDENTITY_KEY];
  if (value === undefined) return undefined;
  if (value.kind !== 'stringValue' || typeof value.stringValue !== 'string') {
    throw new Refusal(
      grpc.status.INVALID_ARGUMENT,
      `metadata ${IMPERSONATED_IDENTITY_KEY} must be a string, got ${value.kind ?? 'no value'}`,
    );
  }
  return value.stringValue === '' ? undefined : value.stringValue;
}

/** Calls per lane between authentication and their answer; an entry lives only while a call does. */
export class LaneCalls {
  private readonly calls = new Map<string, number>();

  /** Counts a call in; true when it is the lane's only one. */
  enter(lane: string): boolean {
    const n = (this.calls.get(lane) ?? 0) + 1;
    this.calls.set(lane, n);
    return n === 1;
  }

  leave(lane: string): void {
    const n = (this.calls.get(lane) ?? 1) - 1;
    if (n <= 0) this.calls.delete(lane);
    else this.calls.set(lane, n);
  }
}

export function createCertificateService(deps: CertificateServiceDeps): {
  definition: grpc.ServiceDefinition;
  implementation: grpc.UntypedServiceImplementation;
} {
  const { metrics } = deps;
  const laneCalls = new LaneCalls();

  async function handle(
    call: grpc.ServerUnaryCall<IstioCertificateRequest, IstioCertificateResponse>,
  ): Promise<IstioCertificateResponse> {
    metrics.csrCount.inc();
    const req = call.request;
    let caller: Authenticated;
    try {
      caller = await deps.authenticator.authenticate(call);
    } catch (err) {
      const reason = err instanceof AuthError ? err.reason : 'invalid_token';
      const cluster = (err instanceof AuthError ? err.cluster : undefined) ?? '';
      metrics.authFailures.inc({ reason, cluster });
      log.warn({ peer: call.getPeer(), reason, cluster, detail: (err as Error).message }, AUTHENTICATE_FAILURE);
      // The API server could not say who the caller is: not the caller's fault, so ztunnel retries.
      if (err instanceof AuthError && err.retryable)
        throw new Refusal(grpc.status.UNAVAILABLE, AUTHENTICATE_UNAVAILABLE);
      throw new Refusal(grpc.status.UNAUTHENTICATED, AUTHENTICATE_FAILURE);
    }
    const [callerId] = caller.identities;
    const { clusterId } = caller;
    // The cluster may have left the mesh while the caller's TokenReview was in flight.
    const cluster = deps.clusters(clusterId);
    if (!cluster) {
      metrics.authFailures.inc({ reason: 'unknown_cluster', cluster: clusterId });
      log.warn(
        {
          peer: call.getPeer(),
          reason: 'unknown_cluster',
          cluster: clusterId,
          detail: `cluster "${clusterId}" left the mesh`,
        },
        AUTHENTICATE_FAILURE,
      );
      throw new Refusal(grpc.status.UNAUTHENTICATED, AUTHENTICATE_FAILURE);
    }
    const requested = impersonationRequest(req);
    let identity = callerId;
    let node =
      caller.nodeName ??
      (caller.podName ? podNodeName(cluster.store.get('Pod', caller.namespace, caller.podName)) : undefined);
    if (requested !== undefined && requested !== callerId) {
      // The caller's own cluster only: its node, and the pods on it, are that cluster's.
      const decision = cluster.nodeAuthorizer
        ? cluster.nodeAuthorizer.authorize(caller, requested)
        : ({ allowed: false, reason: 'impersonation_disabled', detail: 'CA_TRUSTED_NODE_ACCOUNTS is empty' } as const);
      if (!decision.allowed) {
        // istiod counts a refused impersonation as an authentication failure; the reason label and
        // the denial counter say which check refused it.
        metrics.authFailures.inc({ reason: decision.reason, cluster: clusterId });
        metrics.nodeAuthDenials.inc({ reason: decision.reason, cluster: clusterId });
        log.warn(
          { caller: callerId, cluster: clusterId, requested, reason: decision.reason, detail: decision.detail },
          IMPERSONATION_FAILURE,
        );
        throw new Refusal(grpc.status.UNAUTHENTICATED, IMPERSONATION_FAILURE);
      }
      identity = requested;
      node = decision.node;
    }
    let ttlMs: number;
    try {
      ttlMs = requestedTtlMs(req.validity_duration, deps.defaultTtlMs(), deps.maxTtlMs());
    } catch (err) {
      metrics.signErrors.inc({ error: 'TTL_ERROR' });
      throw err;
    }
    let csr: ParsedCsr;
    let issued;
    // A node agent's calls queue under the node it is bound to, so all of one node's ztunnel
    // traffic is one turn; anyone else's under its own identity. Node names repeat across
    // clusters, so a remote cluster's nodes are lanes of their own.
    const lane = identity !== callerId && node ? (cluster.local ? node : `${clusterId}/${node}`) : callerId;
    // A node's lone call (no other call of it past authentication) may be signed on the event
    // loop at once (csr-verifier-pool.ts, INLINE_SHARE); a burst goes through the workers.
    const alone = laneCalls.enter(lane);
    const check = async () => {
      const parsed = parseCsr(req.csr);
      return {
        csr: parsed,
        issued: await deps.authority.issueForCsr(parsed, [{ uri: identity }], ttlMs, Date.now(), lane, alone),
      };
    };
    try {
      // A lone call that will sign on the event loop needs no worker slot; `check` reaches the
      // signing in the same synchronous run, so the answer holds when it gets there.
      const queue = deps.fairQueue;
      ({ csr, issued } = await (queue ? queue.run(lane, check, deps.authority.signsInline(alone)) : check()));
    } catch (err) {
      if (err instanceof FairnessDenial) throw new Refusal(grpc.status.RESOURCE_EXHAUSTED, err.message);
      if (err instanceof CsrError) {
        metrics.csrParseErrors.inc();
        metrics.signErrors.inc({ error: 'CSR_ERROR' });
        throw new Refusal(grpc.status.INVALID_ARGUMENT, err.message);
      }
      metrics.signErrors.inc({ error: 'CERT_GEN_ERROR' });
      log.error({ caller: callerId, identity, detail: (err as Error).message }, 'signing failed');
      // The operator's material, not the caller, is at fault: say what, with istiod's words.
      if (err instanceof IssuerValidityError)
        throw new Refusal(grpc.status.FAILED_PRECONDITION, `CSR signing error (${err.message})`);
      throw new Refusal(grpc.status.INTERNAL, 'failed to sign the certificate');
    } finally {
      laneCalls.leave(lane);
    }
    metrics.successCount.inc({ cluster: clusterId });
    audit.info(
      {
        caller: callerId,
        cluster: clusterId,
        callerPod: caller.podName ? `${caller.namespace}/${caller.podName}` : undefined,
        callerNode: node,
        via: caller.via,
        san: identity,
        impersonated: identity !== callerId,
        serial: issued.serialHex,
        notAfter: issued.notAfter.toISOString(),
        key: csr.keyDescription,
      },
      'certificate issued',
    );
    return { cert_chain: issued.chain };
  }

  const implementation: grpc.UntypedServiceImplementation = {
    CreateCertificate: (
      call: grpc.ServerUnaryCall<IstioCertificateRequest, IstioCertificateResponse>,
      callback: grpc.sendUnaryData<IstioCertificateResponse>,
    ) => {
      handle(call).then(
        (res) => callback(null, res),
        (err: unknown) => {
          if (err instanceof Refusal) {
            if (err.code === grpc.status.INVALID_ARGUMENT)
              log.warn({ peer: call.getPeer(), detail: err.message }, 'CSR refused');
            callback({ code: err.code, details: err.message });
          } else {
            log.error({ err: (err as Error).message }, 'CreateCertificate failed unexpectedly');
            callback({ code: grpc.status.INTERNAL, details: 'internal error' });
          }
        },
      );
    },
  };
  return { definition: certificateServiceDefinition(), implementation };
}
