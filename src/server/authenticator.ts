// The call authenticator the CA and the xDS server share, built here in the composition root:
// local mode verifies tokens signed by the server's own key, Kubernetes mode asks TokenReview of the
// cluster the caller's `clusterid` names, each cluster with its own verifier (its own cache, ended
// by pod deletions in its own store). The CA supplies only the mesh issuers (its roots change on
// rotation), so the CA knows nothing of how tokens are verified. The CA calls the factory once its
// key material is loaded, so a CA that cannot start leaves no token key behind.

import * as crypto from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { clusterAliasMap, type ServeOptions } from '../config/options';
import type { MeshConfigSource } from '../mesh/types';
import {
  type ClusterCallAuthenticator,
  createCallAuthenticator,
  LocalTokenVerifier,
  type TokenVerifier,
} from '../security/authenticator';
import { loadOrCreateTokenKey } from '../security/local-jwt';
import { PerCluster } from '../security/per-cluster';
import { CachedTokenVerifier, KubeTokenReviewer, type TokenReviewer } from '../security/token-review';
import type { ClusterDirectory, MeshCluster } from '../store/clusters';
import { KubeClient, KubeWriter } from '../store/kube';

/** Given the CA's current issuers, the authenticator for gRPC calls (the CA takes one of these). */
export type CallAuthenticatorFactory = (
  meshIssuers: () => readonly crypto.X509Certificate[],
) => ClusterCallAuthenticator;

export interface AuthenticatorSources {
  /** Kubernetes mode: the local cluster's TokenReviews through this config, unless `tokenReviewer` is given. */
  kubeConfig?: KubeConfig;
  /** The local cluster's reviewer (tests); remote clusters always review through their own client. */
  tokenReviewer?: TokenReviewer;
}

/** The local cluster's reviewer: as given, through kubeConfig, or through the cluster's own client. */
function localReviewer(cluster: MeshCluster, sources: AuthenticatorSources): TokenReviewer | undefined {
  if (sources.tokenReviewer) return sources.tokenReviewer;
  if (sources.kubeConfig) return new KubeTokenReviewer(new KubeWriter(new KubeClient(sources.kubeConfig)));
  return cluster.client ? new KubeTokenReviewer(new KubeWriter(cluster.client)) : undefined;
}

/**
 * One cluster's verifier. Local mode: the server's own token key, for the local cluster only (it
 * has no remote clusters). Kubernetes mode: TokenReview against the cluster's API server, cached
 * while the bound pod is in the cluster's store.
 */
function verifierBuilder(
  options: ServeOptions,
  sources: AuthenticatorSources,
): (cluster: MeshCluster) => (TokenVerifier & { close?(): void }) | undefined {
  const audiences = () => options.env.TOKEN_AUDIENCES;
  if (options.mode === 'local') {
    const key = loadOrCreateTokenKey(options.flags.stateDir);
    const local = new LocalTokenVerifier(crypto.createPublicKey(key), audiences);
    return (cluster) => (cluster.local ? local : undefined);
  }
  return (cluster) => {
    const reviewer = cluster.local
      ? localReviewer(cluster, sources)
      : cluster.client && new KubeTokenReviewer(new KubeWriter(cluster.client));
    if (!reviewer && cluster.local)
      throw new Error('Kubernetes mode needs a kubeConfig (or a tokenReviewer) for the CA');
    return reviewer ? new CachedTokenVerifier(reviewer, audiences, Date.now, { pods: cluster.store }) : undefined;
  };
}

/** Client certificate first, then a bearer token reviewed by the caller's own cluster. */
export function callAuthenticatorFactory(
  options: ServeOptions,
  mesh: MeshConfigSource,
  clusters: ClusterDirectory,
  sources: AuthenticatorSources = {},
): CallAuthenticatorFactory {
  return (meshIssuers) => {
    // A cluster's verifier goes with it: removed, its cached reviews and pod subscription end;
    // updated (a new secret, a new store), the next call is reviewed afresh by the new client.
    const verifiers = new PerCluster(clusters, verifierBuilder(options, sources), (v) => v?.close?.());
    const authenticator = createCallAuthenticator({
      trustDomain: () => mesh.current().trustDomain,
      clusters,
      clusterAliases: clusterAliasMap(options.flags.clusterAliases),
      meshIssuers,
      tokens: (id) => verifiers.get(id),
    });
    return { ...authenticator, close: () => verifiers.close() };
  };
}
