// Entry point of the mesh CA: key material, IstioCertificateService, istiod's serving
// certificate, root distribution, metrics and readiness, wired onto what its host gives it.

import * as crypto from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../store/kube/client';
import { KubeWriter } from '../store/kube/writes';
import { scopedLogger } from '../log/logger';
import type { ClusterCallAuthenticator } from '../security/authenticator';
import { NodeAuthorizer } from '../security/node-authorizer';
import { PerCluster } from '../security/per-cluster';
import type { ClusterDirectory } from '../store/clusters';
import type { CaHostDeps } from './host-deps';
import type { MeshConfig } from '../mesh/types';
import type { LeaderElector } from '../contract/leader';
import { RemoteRootDistribution, remoteRootStarter } from './roots/remote-root-distribution';
import { CertificateAuthority } from './signing/authority';
import { CaSecretStore, LocalCaSecretStore } from './roots/ca-secret-store';
import { KubeCaSecretStore } from './roots/kube-ca-secret-store';
import { registerCaMetrics } from './metrics';
import { watchChainEnd } from './chain-end';
import { watchPluggedInCa } from './roots/plugged-in';
import {
  KubeRootConfigMapApi,
  publishWhileLeader,
  ROOT_CERT_KEY,
  RootConfigMapApi,
  writeRootCertFile,
  type DistributedConfigMap,
} from './roots/root-cert-publisher';
import { CA_CRL_FILE, CaCrlSource, writeCaCrlFile } from './roots/ca-crl';
import { loadKeyMaterial, selfSignedView } from './root-rotation-setup';
import { meshTrustAnchorsNotice } from './roots/mesh-trust-anchors';
import { ServingCertRotator, servingSans } from './serving-cert/serving-cert-issuer';
import { ServingCertFiles } from './serving-cert/serving-cert-files';
import { servingCertFiles } from '../config/serving-cert-source';
import { createCertificateService } from './service';
import { registerCaDebug } from './debug';
import { createNodeFairness } from './node-fairness';

const log = scopedLogger('ca');

/** What the CA needs beyond its host; Kubernetes mode needs either kubeConfig or the parts. */
export interface CaDeps {
  /** Built by the composition root; the CA supplies the issuers a client certificate may chain to. */
  authenticator: (
    meshIssuers: () => readonly crypto.X509Certificate[],
  ) => ClusterCallAuthenticator | Promise<ClusterCallAuthenticator>;
  /**
   * The mesh's clusters: a caller is node-authorized against the pods of the cluster it was
   * authenticated in, with one node authorizer per cluster.
   */
  clusters: ClusterDirectory;
  kubeConfig?: KubeConfig;
  /**
   * The replica's own client, whose User-Agent names its pod, so the API server's audit log (and a
   * test) can tell which replica wrote a root-cert ConfigMap; built from kubeConfig otherwise.
   */
  kubeClient?: KubeClient;
  /** Overrides for tests; built from kubeConfig otherwise. */
  secretStore?: CaSecretStore;
  rootConfigMaps?: RootConfigMapApi;
  /** Period of the istio-ca-root-cert repair check; default ROOT_CERT_RESYNC_MS. */
  rootCertResyncMs?: number;
  /**
   * Kubernetes mode: an elector on a remote cluster's own locks for this replica, for the root
   * ConfigMaps written there under EXTERNAL_ISTIOD (roots/remote-root-distribution.ts).
   */
  remoteElector?: (client: KubeClient) => LeaderElector & { stop(): Promise<void> };
}

export interface CaHandle {
  authority: CertificateAuthority;
  /** Shared with the xDS server: client certificate, then bearer token. */
  authenticator: ClusterCallAuthenticator;
  rootCertPem(): string;
  /** Local mode: where root-cert.pem was written. */
  rootCertFile?: string;
  stop(): Promise<void>;
}

/** The CA's writes (CA Secret, root ConfigMaps) go through the one write path. */
function kubeWriter(deps: CaDeps): KubeWriter | undefined {
  if (deps.kubeClient) return new KubeWriter(deps.kubeClient);
  return deps.kubeConfig ? new KubeWriter(new KubeClient(deps.kubeConfig)) : undefined;
}

export async function startCertificateAuthority(ctx: CaHostDeps, deps: CaDeps): Promise<CaHandle> {
  const { env, flags } = ctx.options;
  const local = ctx.options.mode === 'local';
  // Not ready while the signing chain has ended: /ready then says why (chain-end.ts).
  let chainEnded: string | undefined;
  let started = false;
  const setReady = ctx.readiness.register('ca', () => (chainEnded ? [chainEnded] : []));
  const stops: (() => void | Promise<void>)[] = [];
  const writer = local ? undefined : kubeWriter(deps);

  const secretStore =
    deps.secretStore ??
    (local
      ? new LocalCaSecretStore(flags.stateDir)
      : writer
        ? new KubeCaSecretStore(writer, env.POD_NAMESPACE)
        : undefined);
  if (!secretStore) throw new Error('Kubernetes mode needs a kubeConfig (or a secretStore) for the CA');
  if (secretStore instanceof LocalCaSecretStore) {
    const repaired = await secretStore.repairMirrors();
    if (repaired.length > 0)
      log.warn(
        { files: repaired },
        'rewrote the CA files from the rotation state (a crash had interrupted their update)',
      );
  }
  const loaded = await loadKeyMaterial(ctx, secretStore);
  const authority = new CertificateAuthority(loaded.material);
  if (loaded.rotationRoots.length > 0) authority.setRotation(loaded.material, loaded.rotationRoots);
  const metrics = registerCaMetrics(ctx.metrics);
  if (authority.current().source === 'plugged-in') {
    stops.push(
      watchPluggedInCa(
        env.ROOT_CA_DIR,
        authority.signingMaterial(),
        (m) => authority.setMaterial(m),
        () => metrics.reloadRefusals.inc(),
        env.ISTIO_MULTIROOT_MESH,
      ),
    );
  }
  const { rotator } = loaded;
  if (rotator) {
    rotator.onState((state) => {
      try {
        const view = selfSignedView(state, secretStore);
        authority.setRotation(view.material, view.rotationRoots);
      } catch (err) {
        log.error({ err: (err as Error).message }, 'the rotated root cannot be used; the CA keeps the one in use');
      }
    });
    stops.push(rotator.start(env.CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL));
  }
  // meshConfig caCertificates are never part of what ztunnel trusts (mesh-trust-anchors.ts); an
  // operator who sets them is told so, once per change.
  const reportAnchors = (mesh: MeshConfig, previous?: MeshConfig) => {
    if (previous && JSON.stringify(previous.caCertificates ?? []) === JSON.stringify(mesh.caCertificates ?? [])) return;
    const notice = meshTrustAnchorsNotice(mesh);
    if (notice) log.warn(notice.fields, notice.message);
  };
  reportAnchors(ctx.mesh.current());
  stops.push(ctx.mesh.subscribe((mesh, previous) => reportAnchors(mesh, previous)));

  // The signing material's own roots: a retiring root or a meshConfig anchor is not what expires the CA.
  const updateExpiryGauges = () => {
    const m = authority.signingMaterial();
    metrics.rootExpiry.set(Math.min(...m.roots.map((r) => new Date(r.validTo).getTime())) / 1000);
    // The chain ends with its shortest-lived certificate, not always the signing one.
    metrics.chainExpiry.set(m.validity.notAfter.getTime() / 1000);
  };
  updateExpiryGauges();
  stops.push(authority.onChange(updateExpiryGauges));

  const authenticator = await deps.authenticator(() => authority.meshIssuers());
  stops.push(() => authenticator.close?.());
  // One authorizer per cluster, each with its (node, namespace/service account) index on that
  // cluster's store, built as the cluster joins and dropped as it leaves.
  const impersonation = env.CA_TRUSTED_NODE_ACCOUNTS.length > 0;
  const callerClusters = new PerCluster(deps.clusters, (cluster) => ({
    local: cluster.local,
    store: cluster.store,
    nodeAuthorizer: impersonation
      ? new NodeAuthorizer(cluster.store, {
          trustedAccounts: env.CA_TRUSTED_NODE_ACCOUNTS,
          trustDomains: () => [ctx.mesh.current().trustDomain, ...ctx.mesh.current().trustDomainAliases],
        })
      : undefined,
  }));
  stops.push(() => callerClusters.close());

  const fairness = createNodeFairness({
    metrics,
    workers: authority.signingWorkers,
    ratePerSecond: env.CA_NODE_RATE_LIMIT,
  });
  stops.push(() => fairness.stop());
  if (env.ENABLE_CA_SERVER) {
    const service = createCertificateService({
      authority,
      authenticator,
      clusters: (id) => callerClusters.get(id),
      metrics,
      defaultTtlMs: () => env.DEFAULT_WORKLOAD_CERT_TTL,
      maxTtlMs: () => env.MAX_WORKLOAD_CERT_TTL,
      fairQueue: fairness.queue,
    });
    ctx.grpc.addService(service.definition, service.implementation, ctx.grpc.secureEnabled ? 'secure' : 'plaintext');
  }

  // istiod's --tlsCertFile, or a certificate mounted for an external provider (PILOT_CERT_PROVIDER):
  // the operator's certificate serves the listeners; the CA keeps the roots.
  const servingFiles = servingCertFiles({ ...flags, provider: env.PILOT_CERT_PROVIDER });
  if (servingFiles) {
    // The roots the CA vouches for verify client certificates; meshConfig anchors are for peers only.
    const files = new ServingCertFiles(servingFiles, ctx.servingCerts, () => authority.current().rootBundlePem);
    files.watch();
    stops.push(() => files.stop());
    stops.push(authority.onChange(() => files.rootsChanged()));
  } else {
    const rotator = new ServingCertRotator(
      authority,
      ctx.servingCerts,
      () =>
        servingSans({
          namespace: env.POD_NAMESPACE,
          revision: env.REVISION,
          customHosts: env.ISTIOD_CUSTOM_HOST,
          discoveryAddress: ctx.mesh.current().defaultConfig.discoveryAddress,
          local,
        }),
      () => env.CITADEL_SELF_SIGNED_CA_CERT_TTL,
      () => metrics.servingRenewalsLimited.inc(),
    );
    await rotator.start();
    stops.push(() => rotator.stop());
    stops.push(authority.onChange(() => rotator.trigger('CA changed')));
    stops.push(ctx.mesh.subscribe(() => rotator.trigger('meshConfig changed', true)));
  }

  // istiod reads ca-crl.pem only beside a plugged-in CA; a rotated cacerts Secret usually brings
  // its CRL along, so the CRL is re-read with the new material as well as on its own changes.
  const crl =
    env.PILOT_ENABLE_CA_CRL && authority.current().source === 'plugged-in'
      ? new CaCrlSource(env.ROOT_CA_DIR, () => {
          // As istiod: every certificate of cert-chain.pem (the signing one first) must have signed a CRL.
          const m = authority.signingMaterial();
          return m.chainPems.length > 0 ? m.chainPems.map((p) => new crypto.X509Certificate(p)) : [m.signingCert];
        })
      : undefined;
  if (crl) {
    stops.push(crl.watch());
    stops.push(authority.onChange(() => crl.reload()));
  }
  let rootCertFile: string | undefined;
  if (local) {
    rootCertFile = writeRootCertFile(flags.stateDir, authority.rootBundlePem());
    stops.push(authority.onChange(() => writeRootCertFile(flags.stateDir, authority.rootBundlePem())));
    const crlPem = crl?.current();
    if (crlPem !== undefined) writeCaCrlFile(flags.stateDir, crlPem);
    if (crl) stops.push(crl.onChange((pem) => writeCaCrlFile(flags.stateDir, pem)));
  } else {
    // istiod's namespace controller writes both ConfigMaps, so both run under its lock.
    const distributed: DistributedConfigMap[] = [
      {
        name: env.PILOT_CA_CERT_CONFIGMAP,
        key: ROOT_CERT_KEY,
        content: () => authority.rootBundlePem(),
        onContentChange: (l) => authority.onChange(l),
      },
    ];
    if (crl)
      distributed.push({
        name: env.PILOT_CRL_CONFIGMAP,
        key: CA_CRL_FILE,
        content: () => crl.current(),
        onContentChange: (l) => crl.onChange(l),
      });
    const api = deps.rootConfigMaps ?? (writer ? new KubeRootConfigMapApi(writer) : undefined);
    if (api) stops.push(...publishWhileLeader(ctx.store, api, distributed, ctx.leader, deps.rootCertResyncMs));
    if (env.EXTERNAL_ISTIOD && deps.remoteElector) {
      const distribution = new RemoteRootDistribution(
        deps.clusters,
        env.POD_NAMESPACE,
        remoteRootStarter({
          configMaps: distributed,
          elector: deps.remoteElector,
          ...(deps.rootCertResyncMs !== undefined ? { resyncMs: deps.rootCertResyncMs } : {}),
        }),
      );
      stops.push(distribution.run());
      ctx.debug.add(
        'remote-roots',
        'EXTERNAL_ISTIOD: the remote clusters whose root certificate ConfigMaps this replica takes part in writing (their system Namespace names this CLUSTER_ID in topology.istio.io/controlPlaneClusters)',
        () => ({ body: { managed: distribution.managed() } }),
      );
    }
  }

  registerCaDebug(ctx, authority, fairness.queue);
  stops.push(
    watchChainEnd(authority, (reason) => {
      if (reason && reason !== chainEnded)
        log.error({ reason }, 'the CA can issue no certificate until its material is replaced');
      chainEnded = reason;
      if (started) setReady(reason === undefined);
    }),
  );
  started = true;
  setReady(chainEnded === undefined);
  log.info(
    { source: authority.current().source, signer: authority.current().signingCert.subject, mode: ctx.options.mode },
    'CA started',
  );
  const handle: CaHandle = {
    authority,
    authenticator,
    rootCertPem: () => authority.rootBundlePem(),
    ...(rootCertFile ? { rootCertFile } : {}),
    async stop() {
      for (const stop of stops.reverse()) await stop();
      stops.length = 0;
    },
  };
  ctx.onShutdown(() => handle.stop());
  return handle;
}
