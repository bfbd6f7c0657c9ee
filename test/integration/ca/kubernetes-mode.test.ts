// The CA in Kubernetes mode against the test API server: the root in Secret istio-ca-secret,
// TokenReview authentication, node authorization fed by the Kubernetes source, and root
// distribution to every namespace.

import * as grpc from '@grpc/grpc-js';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeCaSecretStore, CA_SECRET_NAME, CA_SECRET_TYPE } from '../../../src/ca/roots/kube-ca-secret-store';
import { ensureSelfSignedCa } from '../../../src/ca/roots/self-signed';
import { KubeClient } from '../../../src/store/kube/client';
import { KubeWriter } from '../../../src/store/kube/writes';
import { loadKubeConfig } from '../../../src/store/kube/config';
import type { KubeSource } from '../../../src/store/kube/source';
import { syncedKubeStore } from '../../support/apiserver/synced-store';
import { MemoryStore } from '../../../src/store/memory-store';
import { TestApiServer, eventually, serviceAccountIdentity } from '../../support/apiserver';
import { namespace, FAST_WATCH_TIMING, scheduledPod as pod } from '../../support/apiserver/fixtures';
import { makeCsr, opensslVerify, peculiarSan } from '../../support/ca/fixtures';
import { Harness, ZtunnelLikeClient, startHarness } from '../../support/ca/harness';

const id = (ns: string, sa: string) => `spiffe://cluster.local/ns/${ns}/sa/${sa}`;
describe('the CA in Kubernetes mode (test API server)', () => {
  let api: TestApiServer;
  let kubeConfig: KubeConfig;
  let store: MemoryStore;
  let source: KubeSource;
  let h: Harness;
  let client: ZtunnelLikeClient;
  const tokens = new Map<string, string>();

  /** Registers a TokenReview identity for the pod as stored (with its real uid). */
  function tokenFor(ns: string, name: string, sa: string, audiences = ['istio-ca'], uid?: string): string {
    const stored = api.get('v1', 'Pod', ns, name);
    const token = `token-${ns}-${name}-${audiences.join('+')}-${uid ?? stored?.metadata.uid ?? 'none'}`;
    api.registerToken(
      token,
      serviceAccountIdentity({
        namespace: ns,
        serviceAccount: sa,
        podName: name,
        podUid: uid ?? stored?.metadata.uid ?? 'none',
        audiences,
      }),
    );
    tokens.set(`${ns}/${name}`, token);
    return token;
  }

  beforeAll(async () => {
    api = await TestApiServer.start();
    for (const ns of ['istio-system', 'default', 'kube-system', 'kube-public']) api.put(namespace(ns));
    api.put(pod('istio-system', 'ztunnel-a', 'ztunnel', 'node-a'));
    api.put(pod('default', 'sleep-1', 'sleep', 'node-a'));
    api.put(pod('default', 'httpbin-1', 'httpbin', 'node-b'));
    api.put(pod('default', 'done-1', 'done', 'node-a', 'Succeeded'));
    kubeConfig = loadKubeConfig(api.writeKubeconfig());
    ({ store, source } = await syncedKubeStore(kubeConfig, { timing: FAST_WATCH_TIMING }));
    h = await startHarness({ mode: 'kubernetes', store, deps: { kubeConfig, rootCertResyncMs: 200 } });
    client = new ZtunnelLikeClient(h.port, h.ca.rootCertPem());
  });

  afterAll(async () => {
    client.close();
    await h.close();
    await source.stop();
    await api.close();
  });

  test('the self-signed root is stored in Secret istio-ca-secret with istiod key layout', () => {
    const secret = api.get('v1', 'Secret', 'istio-system', CA_SECRET_NAME)!;
    expect(secret['type']).toBe(CA_SECRET_TYPE);
    const data = secret['data'] as Record<string, string>;
    expect(Object.keys(data).sort()).toEqual([
      'ca-cert.pem',
      'ca-key.pem',
      'cert-chain.pem',
      'key.pem',
      'root-cert.pem',
    ]);
    expect(Buffer.from(data['ca-cert.pem']!, 'base64').toString()).toBe(h.ca.rootCertPem());
  });

  test('two replicas starting together end with one root', async () => {
    const stores = [
      new KubeCaSecretStore(new KubeWriter(new KubeClient(kubeConfig)), 'race'),
      new KubeCaSecretStore(new KubeWriter(new KubeClient(kubeConfig)), 'race'),
    ];
    api.put(namespace('race'));
    const opts = { trustDomain: 'cluster.local', keyType: 'ECDSA' as const, rsaBits: 2048, ttlMs: 3600_000 };
    const [a, b] = await Promise.all(stores.map((s) => ensureSelfSignedCa(s, opts)));
    expect(a!.signingCertPem).toBe(b!.signingCertPem);
  });

  test('a ztunnel token reviewed by the API server gets the certificate of a workload on its node', async () => {
    const res = await client.createCertificate((await makeCsr()).pem, {
      token: tokenFor('istio-system', 'ztunnel-a', 'ztunnel'),
      clusterId: 'Kubernetes',
      impersonate: id('default', 'sleep'),
    });
    expect(peculiarSan(res.cert_chain[0]!)).toEqual({
      critical: true,
      uris: [id('default', 'sleep')],
      dns: [],
      ips: [],
    });
    expect(opensslVerify(h.ca.rootCertPem(), res.cert_chain[0]!)).toContain('OK');
  });

  test.each([
    [
      'a pod of the identity only on another node',
      () => tokenFor('istio-system', 'ztunnel-a', 'ztunnel'),
      id('default', 'httpbin'),
      'no_pod_on_node',
    ],
    [
      'a pod of the identity that has Succeeded',
      () => tokenFor('istio-system', 'ztunnel-a', 'ztunnel'),
      id('default', 'done'),
      'no_pod_on_node',
    ],
    [
      'a caller outside CA_TRUSTED_NODE_ACCOUNTS',
      () => tokenFor('default', 'sleep-1', 'sleep'),
      id('default', 'httpbin'),
      'caller_not_trusted',
    ],
    [
      'a token whose pod uid is stale (pod recreated)',
      () => tokenFor('istio-system', 'ztunnel-a', 'ztunnel', ['istio-ca'], 'stale-uid'),
      id('default', 'sleep'),
      'caller_pod_mismatch',
    ],
    [
      'an identity that is not a SPIFFE id',
      () => tokenFor('istio-system', 'ztunnel-a', 'ztunnel'),
      'not-spiffe',
      'invalid_identity',
    ],
  ])('node authorization denies %s', async (_name, token, requested, reason) => {
    await expect(
      client.createCertificate((await makeCsr()).pem, { token: token(), impersonate: requested }),
    ).rejects.toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
      details: 'request impersonation authentication failure',
    });
    const metric = await h.metrics.getSingleMetric('citadel_server_node_authorization_denial_count')!.get();
    expect(metric.values.find((v) => v.labels['reason'] === reason)?.value).toBeGreaterThanOrEqual(1);
  });

  test('a token for another audience is refused by TokenReview', async () => {
    await expect(
      client.createCertificate((await makeCsr()).pem, {
        token: tokenFor('istio-system', 'ztunnel-a', 'ztunnel', ['https://kubernetes.default.svc.cluster.local']),
      }),
    ).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED, details: 'request authenticate failure' });
  });

  test('a token whose pod was deleted is refused for impersonation', async () => {
    api.put(pod('istio-system', 'ztunnel-gone', 'ztunnel', 'node-a'));
    const token = tokenFor('istio-system', 'ztunnel-gone', 'ztunnel');
    api.delete('v1', 'Pod', 'istio-system', 'ztunnel-gone');
    await eventually(
      'the deletion reaches the store',
      () => store.get('Pod', 'istio-system', 'ztunnel-gone') === undefined,
    );
    await expect(
      client.createCertificate((await makeCsr()).pem, { token, impersonate: id('default', 'sleep') }),
    ).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
  });

  test('a pod bound to the ztunnel node is granted as soon as the watch delivers it', async () => {
    const token = tokenFor('istio-system', 'ztunnel-a', 'ztunnel');
    api.put(pod('default', 'late-1', 'late', undefined, 'Pending'));
    await expect(
      client.createCertificate((await makeCsr()).pem, { token, impersonate: id('default', 'late') }),
    ).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    api.put(pod('default', 'late-1', 'late', 'node-a', 'Running'));
    await eventually(
      'the binding reaches the store',
      () => (store.get('Pod', 'default', 'late-1')?.spec as { nodeName?: string } | undefined)?.nodeName === 'node-a',
    );
    const res = await client.createCertificate((await makeCsr()).pem, { token, impersonate: id('default', 'late') });
    expect(peculiarSan(res.cert_chain[0]!).uris).toEqual([id('default', 'late')]);
  });

  test('istio-ca-root-cert is written to every namespace except kube-public, and repaired when deleted or edited', async () => {
    const root = h.ca.rootCertPem();
    const rootIn = (ns: string) =>
      (api.get('v1', 'ConfigMap', ns, 'istio-ca-root-cert')?.['data'] as Record<string, string> | undefined)?.[
        'root-cert.pem'
      ];
    await eventually('root ConfigMaps exist', () =>
      ['istio-system', 'default', 'kube-system'].every((ns) => rootIn(ns) === root),
    );
    expect(api.get('v1', 'ConfigMap', 'kube-public', 'istio-ca-root-cert')).toBeUndefined();
    expect(api.get('v1', 'ConfigMap', 'default', 'istio-ca-root-cert')!.metadata.labels).toMatchObject({
      'istio.io/config': 'true',
    });
    api.delete('v1', 'ConfigMap', 'default', 'istio-ca-root-cert');
    api.put({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'istio-ca-root-cert', namespace: 'kube-system' },
      data: { 'root-cert.pem': 'tampered' },
    });
    await eventually(
      'deleted and edited root ConfigMaps are repaired',
      () => rootIn('default') === root && rootIn('kube-system') === root,
    );
    api.put(namespace('new-ns'));
    await eventually('a new namespace gets the root', () => rootIn('new-ns') === root);
  });
});
