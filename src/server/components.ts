// The domain components on top of the store: the call authenticator, the CA (which shares it
// with xDS), the ambient index, the xDS server that serves it, and the webhook configuration
// controller.

import type { KubeClient } from '../store/kube';
import { type ClusterDirectory, singleCluster } from '../store/clusters';
import { startCertificateAuthority, type CaDeps } from '../ca';
import { createAmbientCache } from './ambient-cache';
import { registerAmbientDebug } from '../ambient/debug';
import { registerExplainDebug } from '../explain/debug';
import { Explainer } from '../explain/explainer';
import { startXdsServer } from '../xds/server';
import { versionInfo } from './version';
import { startWebhookConfigController } from '../webhook';
import { startAmbientStatus } from '../controllers/status';
import { reportDroppedPolicies } from '../controllers/dropped-policies';
import type { IgnoredObjects } from '../store/ignored';
import { startNodeUntaintController } from '../controllers/untaint';
import type { ServerContext } from './context';
import { callAuthenticatorFactory } from './authenticator';
import { registerXdsDebug } from './debug-xds';
import type { CallAuthenticator } from '../security/identity';
import { startIpAutoallocate } from '../controllers/ipallocate';
import { MemoryStore } from '../store/memory-store';
import { KubeWriter } from '../store/kube/writes';

/** What the server needs back from the components: the authenticator remote /debug/ callers pass. */
export interface StartedComponents {
  authenticator: CallAuthenticator;
}

/**
 * The mesh as one cluster, this server's own: what the CA authenticates and authorizes against
 * until the remote-secret controller hands the server a directory with the remote clusters too.
 */
export function localClusterOnly(ctx: ServerContext, kube: KubeClient | undefined): ClusterDirectory {
  return singleCluster({
    id: ctx.options.env.CLUSTER_ID,
    local: true,
    store: ctx.store,
    ...(kube ? { client: kube } : {}),
    synced: () => ctx.store.hasSynced(),
  });
}

/**
 * `clusters`: the mesh's clusters for the CA (and the authenticator it shares with xDS and /debug/).
 * Once server/source.ts yields the remote-secret controller's directory (`SourceAndLeader.clusters`),
 * server.ts passes it here; until then the server is its own single cluster.
 */
export async function startComponents(
  ctx: ServerContext,
  kube: KubeClient | undefined,
  ignored?: IgnoredObjects,
  clusters: ClusterDirectory = localClusterOnly(ctx, kube),
  remoteElector?: CaDeps['remoteElector'],
): Promise<StartedComponents> {
  const sources = kube ? { kubeConfig: kube.kubeConfig } : {};
  // Each cluster's Pod deletions (in its own store) end cached TokenReviews of its deleted pods' tokens.
  const authenticator = callAuthenticatorFactory(ctx.options, ctx.mesh, clusters, sources);
  const ca = await startCertificateAuthority(ctx, {
    ...sources,
    ...(kube ? { kubeClient: kube } : {}),
    authenticator,
    clusters,
    ...(remoteElector ? { remoteElector } : {}),
  });
  const ambient = createAmbientCache(ctx, clusters);
  const index = ambient.local;
  // The pages show what ztunnel is served: with AMBIENT_ENABLE_MULTI_NETWORK, the whole mesh.
  registerAmbientDebug(ctx.debug, ambient.served);
  const meshIndex = ambient.mesh;
  if (meshIndex)
    ctx.debug.add(
      'multicluster',
      'the mesh index (AMBIENT_ENABLE_MULTI_NETWORK): the local network, per cluster its network, served and other-network workloads and the services it derives, the network gateways, the split-horizon workloads',
      () => ({ body: meshIndex.summary() }),
    );
  // /debug/explain runs the CA's node authorizer and the ambient derivation over this store with a
  // decision recorder, reading CA_TRUSTED_NODE_ACCOUNTS and the trust domains as the CA does. It
  // explains the local cluster's nodes only (docs/ca.md, "Across clusters").
  registerExplainDebug(
    ctx.debug,
    new Explainer({
      store: ctx.store,
      trustedAccounts: ctx.options.env.CA_TRUSTED_NODE_ACCOUNTS,
      trustDomains: () => [ctx.mesh.current().trustDomain, ...ctx.mesh.current().trustDomainAliases],
      ambientSettings: () => index.settings,
    }),
  );
  ctx.onShutdown(() => ambient.close());
  // Policies ztunnel never gets (a waypoint's, AUDIT/CUSTOM, dry-run) are listed on /debug/ignored.
  if (ignored) ctx.onShutdown(reportDroppedPolicies(ctx.store, index, ignored));
  // AMBIENT_ENABLE_STATUS: ZtunnelAccepted, WaypointAccepted, istio.io/WaypointBound,
  // istio.io/WaypointMissing and istio.io/VisibilityApplied conditions, written on the leader of istio-status-leader (Kubernetes) or
  // kept for /debug/status (local mode).
  startAmbientStatus(ctx, index, kube ? new KubeWriter(kube) : undefined);
  // The CA and the xDS server register their own shutdown hooks.
  const build = versionInfo();
  const xds = startXdsServer(ctx, ambient.served, ca.authenticator, { version: build.version, runtime: build.node });
  registerXdsDebug(ctx.debug, xds.server);
  // Kubernetes mode only, and only in the replica that leads: keeps the webhook configurations'
  // caBundle current and flips failurePolicy to Fail once validation is known to work.
  if (kube) startWebhookConfigController(ctx, kube);
  // ServiceEntry VIPs in status.addresses, on the leader of istio-ip-autoallocate. Local mode keeps
  // them on the store's copy (the server's store is a MemoryStore), so ztunnel sees what istiod gives.
  startIpAutoallocate({
    env: ctx.options.env,
    store: ctx.store,
    leader: ctx.leader,
    metrics: ctx.metrics,
    ...(kube
      ? { kubeWriter: new KubeWriter(kube) }
      : ctx.store instanceof MemoryStore
        ? { localStore: ctx.store }
        : {}),
  });
  // Kubernetes mode, PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS on, leader of istio-node-untaint only:
  // removes the istio-cni readiness taint from nodes whose istio-cni pod is Ready.
  if (kube) startNodeUntaintController(ctx, kube);
  return { authenticator: ca.authenticator };
}
