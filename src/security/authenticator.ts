// Authenticates gRPC calls to the CA and to xDS, in istiod's order: a client certificate chaining
// to the mesh roots, then a bearer service-account token with its `clusterid`. The first that
// succeeds decides the caller; failures carry a reason for the log and metrics. A token is reviewed
// by the cluster its `clusterid` names (store/clusters.ts), with that cluster's own verifier and
// cache: a token means nothing outside the cluster that issued it.

import * as crypto from 'node:crypto';
import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';
import type { ClusterDirectory, MeshCluster } from '../store/clusters';
import type { CallAuthenticator, CallerIdentity } from './identity';
import { AuthError } from './auth-error';
import { MAX_TOKEN_BYTES, VerifiedToken, verifyLocalToken } from './local-jwt';
import { parseSpiffeId, spiffeId } from './spiffe';
import { refusedPeerCertificate } from './tls-peer';
import { callSignal } from './call-signal';

export interface TokenVerifier {
  /** `signal` fires when the caller has gone: work done only for it may stop. */
  verify(token: string, opts?: { signal?: AbortSignal }): Promise<VerifiedToken>;
}

/** Verified local tokens are remembered this long at most (and never past their expiry). */
export const LOCAL_TOKEN_CACHE_TTL_MS = 5 * 60 * 1000;
export const LOCAL_TOKEN_CACHE_MAX_ENTRIES = 10_000;

/**
 * Local mode: tokens signed by the server's own token key. A ztunnel sends the same token on
 * every call, so successful verifications are cached like TokenReviews are in Kubernetes mode.
 */
export class LocalTokenVerifier implements TokenVerifier {
  private readonly cache = new Map<string, { until: number; token: VerifiedToken }>();

  constructor(
    private readonly publicKey: crypto.KeyObject,
    private readonly audiences: () => readonly string[],
    private readonly now: () => number = Date.now,
  ) {}

  /** Checks at once, and settles the promise with the outcome (a refusal rejects it). */
  verify(token: string): Promise<VerifiedToken> {
    return new Promise((resolve) => resolve(this.check(token)));
  }

  private check(token: string): VerifiedToken {
    const t = this.now();
    const hit = this.cache.get(token);
    if (hit && hit.until > t) return hit.token;
    if (hit) this.cache.delete(token);
    const verified = verifyLocalToken(this.publicKey, token, this.audiences(), t);
    if (this.cache.size >= LOCAL_TOKEN_CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(token, { until: Math.min(t + LOCAL_TOKEN_CACHE_TTL_MS, verified.exp * 1000), token: verified });
    return verified;
  }
}

export interface AuthenticatorOptions {
  trustDomain: () => string;
  /**
   * The mesh's clusters: a `clusterid` of "", the local id or an alias of it means the local
   * cluster; a remote id (or an alias of one) that cluster; any other id is refused.
   */
  clusters: ClusterDirectory;
  /** --clusterAliases: a `clusterid` naming an alias means the cluster it maps to (istiod's kube JWT authenticator). */
  clusterAliases?: ReadonlyMap<string, string>;
  /** Certificates a mesh client certificate may be issued by (signing cert, intermediates, roots). */
  meshIssuers: () => readonly crypto.X509Certificate[];
  /**
   * The verifier of one cluster's tokens (TokenReview against that cluster's API server, with its own
   * cache); undefined when that cluster's tokens cannot be checked here (a cluster with no client).
   */
  tokens: (clusterId: string) => TokenVerifier | undefined;
  now?: () => number;
}

export const AUTHORIZATION_HEADER = 'authorization';
export const CLUSTER_ID_HEADER = 'clusterid';
const BEARER = /^bearer\s+(\S+)\s*$/i;

/** An authenticated caller plus why it was accepted; `clusterId` is always decided. */
export type Authenticated = CallerIdentity & { nodeName?: string; clusterId: string };

/** What the CA takes: callers with their cluster, and a close that ends the per-cluster verifiers. */
export interface ClusterCallAuthenticator extends CallAuthenticator {
  authenticate(call: ServerSurfaceCall): Promise<Authenticated>;
  close?(): void;
}

/** The longest `clusterid` a log line quotes: a cluster id is a short name, the header is the caller's. */
const MAX_LOGGED_CLUSTER_ID = 128;

/** The header as it may be logged: quoted, escaped and bounded. */
function loggedClusterId(id: string): string {
  return JSON.stringify(id.length > MAX_LOGGED_CLUSTER_ID ? `${id.slice(0, MAX_LOGGED_CLUSTER_ID)}…` : id);
}

/**
 * The cluster a `clusterid` names, in istiod's order: "" (a single-cluster caller), the local id or
 * an alias of it is the local cluster; then a remote of that id; then the remote an alias names.
 */
export function resolveCluster(
  clusters: ClusterDirectory,
  aliases: ReadonlyMap<string, string> | undefined,
  named: string,
): MeshCluster | undefined {
  const alias = aliases?.get(named);
  if (named === '' || named === clusters.localId || alias === clusters.localId) return clusters.get(clusters.localId);
  return clusters.get(named) ?? (alias === undefined ? undefined : clusters.get(alias));
}

export function createCallAuthenticator(opts: AuthenticatorOptions): ClusterCallAuthenticator {
  const now = opts.now ?? Date.now;

  function fromCertificate(call: ServerSurfaceCall): Authenticated | AuthError | undefined {
    const peer = call.getAuthContext().sslPeerCertificate;
    if (!peer?.raw) return refusedByTls(call);
    let leaf: crypto.X509Certificate;
    try {
      leaf = new crypto.X509Certificate(peer.raw);
    } catch {
      return new AuthError('untrusted_certificate', 'client certificate cannot be parsed');
    }
    const t = now();
    if (new Date(leaf.validTo).getTime() < t)
      return new AuthError('expired_certificate', `client certificate expired at ${leaf.validTo}`);
    if (new Date(leaf.validFrom).getTime() > t) {
      return new AuthError(
        'untrusted_certificate',
        `client certificate is outside its validity (${leaf.validFrom} to ${leaf.validTo})`,
      );
    }
    // The TLS layer checked the chain against the roots it was configured with; checking the
    // issuer again here keeps a root rotation from trusting certificates of the previous root.
    const issuer = opts.meshIssuers().find((c) => leaf.checkIssued(c) && leaf.verify(c.publicKey));
    if (!issuer) return new AuthError('untrusted_certificate', 'client certificate is not issued by the mesh CA');
    const identities = (leaf.subjectAltName ?? '')
      .split(', ')
      .filter((s) => s.startsWith('URI:'))
      .map((s) => s.slice(4));
    const noSan = new AuthError('untrusted_certificate', 'client certificate has no SPIFFE service-account URI SAN');
    const [first, ...rest] = identities;
    if (first === undefined) return noSan;
    for (const id of identities) {
      try {
        const parsed = parseSpiffeId(id);
        return {
          identities: [first, ...rest],
          namespace: parsed.namespace,
          serviceAccount: parsed.serviceAccount,
          // A mesh certificate names no cluster and carries no pod, so nothing node-scoped is read
          // for it (it can never impersonate); it is filed under the local cluster, its clusterid
          // header unread, as istiod's certificate authenticator leaves it unread.
          clusterId: opts.clusters.localId,
          via: 'certificate',
        };
      } catch {
        // Another URI SAN may still be a service-account identity.
      }
    }
    return noSan;
  }

  /** A certificate TLS refused is a failed credential, never "no credentials". */
  function refusedByTls(call: ServerSurfaceCall): AuthError | undefined {
    const refused = refusedPeerCertificate(call);
    if (!refused) return undefined;
    let validTo = '';
    try {
      validTo = new crypto.X509Certificate(refused.raw).validTo;
    } catch {
      return new AuthError('untrusted_certificate', `client certificate cannot be parsed (TLS: ${refused.error})`);
    }
    if (refused.error === 'CERT_HAS_EXPIRED' || new Date(validTo).getTime() < now())
      return new AuthError('expired_certificate', `client certificate expired at ${validTo} (TLS: ${refused.error})`);
    return new AuthError('untrusted_certificate', `client certificate refused by TLS: ${refused.error}`);
  }

  async function fromToken(call: ServerSurfaceCall): Promise<Authenticated | AuthError | undefined> {
    const auth = call.metadata.get(AUTHORIZATION_HEADER);
    if (auth.length === 0) return undefined;
    const header = String(auth[0]);
    if (header.length > MAX_TOKEN_BYTES + 16)
      return new AuthError('malformed_token', `authorization header is longer than ${MAX_TOKEN_BYTES} bytes`);
    const bearer = BEARER.exec(header)?.[1];
    if (bearer === undefined) return new AuthError('malformed_token', 'authorization header is not "Bearer <token>"');
    const clusterHeader = call.metadata.get(CLUSTER_ID_HEADER);
    // istiod reads the header only when it has exactly one value.
    const named = clusterHeader.length === 1 ? String(clusterHeader[0]) : '';
    const cluster = resolveCluster(opts.clusters, opts.clusterAliases, named);
    if (!cluster) {
      const remotes = opts.clusters.list().filter((c) => !c.local);
      return new AuthError(
        'unknown_cluster',
        `clusterid ${loggedClusterId(named)} is not a cluster of this mesh (local "${opts.clusters.localId}", ` +
          `remote [${remotes.map((c) => c.id).join(', ')}])`,
      );
    }
    const verifier = opts.tokens(cluster.id);
    if (!verifier)
      return new AuthError(
        'unknown_cluster',
        `cluster "${cluster.id}" has no API server to review tokens against`,
        cluster.id,
      );
    let token: VerifiedToken;
    const lifetime = callSignal(call);
    try {
      // callSignal's signal is made on first read, so a cache hit never makes it.
      token = await verifier.verify(bearer, lifetime);
    } catch (err) {
      const failure = err instanceof AuthError ? err : new AuthError('invalid_token', (err as Error).message);
      return new AuthError(failure.reason, `cluster "${cluster.id}": ${failure.message}`, cluster.id);
    } finally {
      lifetime.dispose();
    }
    // Removed while its review was in flight: its API server no longer speaks for this mesh.
    if (!opts.clusters.get(cluster.id))
      return new AuthError(
        'unknown_cluster',
        `cluster "${cluster.id}" was removed while its TokenReview was in flight`,
        cluster.id,
      );
    return {
      identities: [spiffeId(opts.trustDomain(), token.namespace, token.serviceAccount)],
      namespace: token.namespace,
      serviceAccount: token.serviceAccount,
      ...(token.podName ? { podName: token.podName } : {}),
      ...(token.podUid ? { podUid: token.podUid } : {}),
      ...(token.nodeName ? { nodeName: token.nodeName } : {}),
      clusterId: cluster.id,
      via: 'token',
    };
  }

  return {
    async authenticate(call: ServerSurfaceCall): Promise<Authenticated> {
      const cert = fromCertificate(call);
      if (cert && !(cert instanceof AuthError)) return cert;
      const token = await fromToken(call);
      if (token && !(token instanceof AuthError)) return token;
      if (token instanceof AuthError && cert instanceof AuthError) {
        throw new AuthError(token.reason, `${cert.message}; ${token.message}`, token.cluster);
      }
      throw token ?? cert ?? new AuthError('no_credentials', 'no client certificate and no bearer token');
    },
  };
}
