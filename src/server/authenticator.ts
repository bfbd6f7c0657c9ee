// The call authenticator the CA and the xDS server share, built here in the composition root:
// local mode verifies tokens signed by the server's own key, Kubernetes mode asks TokenReview.
// The CA supplies only the mesh issuers (its roots change on rotation), so the CA knows nothing
// of how tokens are verified. The CA calls the factory once its key material is loaded, so a CA
// that cannot start leaves no token key behind.

import * as crypto from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { clusterAliasMap, type ServeOptions } from '../config/options';
import type { MeshConfigSource } from '../mesh/types';
import { createCallAuthenticator, LocalTokenVerifier, type TokenVerifier } from '../security/authenticator';
import type { CallAuthenticator } from '../security/identity';
import { loadOrCreateTokenKey } from '../security/local-jwt';
import { CachedTokenVerifier, KubeTokenReviewer, type TokenReviewer } from '../security/token-review';
import { KubeClient, KubeWriter } from '../store/kube';
import type { ObjectStore } from '../store/types';

/** Given the CA's current issuers, the authenticator for gRPC calls (the CA takes one of these). */
export type CallAuthenticatorFactory = (meshIssuers: () => readonly crypto.X509Certificate[]) => CallAuthenticator;

export interface AuthenticatorSources {
  /** Kubernetes mode: TokenReview through this config, unless `tokenReviewer` is given. */
  kubeConfig?: KubeConfig;
  tokenReviewer?: TokenReviewer;
  /** Kubernetes mode: the store whose Pod deletions end cached TokenReviews (none cached without it). */
  store?: ObjectStore;
}

function tokenVerifier(options: ServeOptions, sources: AuthenticatorSources): TokenVerifier {
  const { env, flags } = options;
  if (options.mode === 'local') {
    const key = loadOrCreateTokenKey(flags.stateDir);
    return new LocalTokenVerifier(crypto.createPublicKey(key), () => env.TOKEN_AUDIENCES);
  }
  let reviewer = sources.tokenReviewer;
  if (!reviewer && sources.kubeConfig) {
    reviewer = new KubeTokenReviewer(new KubeWriter(new KubeClient(sources.kubeConfig)));
  }
  if (!reviewer) throw new Error('Kubernetes mode needs a kubeConfig (or a tokenReviewer) for the CA');
  return new CachedTokenVerifier(reviewer, () => env.TOKEN_AUDIENCES, Date.now, {
    ...(sources.store ? { pods: sources.store } : {}),
  });
}

/** Client certificate first, then a bearer token, for the trust domain and cluster of this server. */
export function callAuthenticatorFactory(
  options: ServeOptions,
  mesh: MeshConfigSource,
  sources: AuthenticatorSources = {},
): CallAuthenticatorFactory {
  return (meshIssuers) =>
    createCallAuthenticator({
      trustDomain: () => mesh.current().trustDomain,
      clusterId: options.env.CLUSTER_ID,
      clusterAliases: clusterAliasMap(options.flags.clusterAliases),
      meshIssuers,
      tokens: tokenVerifier(options, sources),
    });
}
