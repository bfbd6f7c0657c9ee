// Who is calling, and the seam that decides it. The CA and the xDS server take a CallAuthenticator;
// authenticator.ts implements it (client certificate, then bearer token).

import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';

/** Who is calling, as decided by authentication (client certificate or bearer token). */
export interface CallerIdentity {
  /**
   * SPIFFE ids, e.g. spiffe://cluster.local/ns/istio-system/sa/ztunnel: at least one, the first
   * being the caller's own (the CA signs for it unless the caller asks to impersonate).
   */
  identities: [string, ...string[]];
  namespace: string;
  serviceAccount: string;
  /** From the token's pod claims (TokenReview user.extra or the local token); absent for certificates. */
  podName?: string;
  podUid?: string;
  /**
   * The cluster the caller was authenticated in: the one whose API server reviewed its token (named
   * by its `clusterid` header), or the local cluster for a client certificate, which names none.
   */
  clusterId?: string;
  via: 'certificate' | 'token';
}

/** Authenticates a gRPC call; rejects with an error whose message is the exact reason (for logs). */
export interface CallAuthenticator {
  authenticate(call: ServerSurfaceCall): Promise<CallerIdentity>;
}
