// Root rotation in Kubernetes mode against the test API server: the state lives in Secret
// istio-ca-secret, every istio-ca-root-cert ConfigMap carries both roots before the new one signs,
// and replicas stepping at the same moment agree on one new root.

import type { KubeConfig } from '@kubernetes/client-node';
import { generateCaCertificate } from '../../../src/ca/signing/ca-cert-generator';
import { splitPemCertificates } from '../../../src/ca/signing/key-material';
import { CA_SECRET_NAME, CA_SECRET_ROTATION_KEY, KubeCaSecretStore } from '../../../src/ca/roots/kube-ca-secret-store';
import type { RootPair } from '../../../src/ca/roots/root-rotation';
import { RootRotator } from '../../../src/ca/roots/root-rotation-driver';
import { KubeClient } from '../../../src/store/kube/client';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { syncedKubeStore } from '../../support/apiserver/synced-store';
import { KubeWriter } from '../../../src/store/kube/writes';
import { TestApiServer, eventually } from '../../support/apiserver';
import { FAST_WATCH_TIMING, namespace } from '../../support/apiserver/fixtures';
import { Harness, startHarness } from '../../support/ca/harness';

const DAY = 24 * 3_600_000;

async function root(notBeforeMs: number, ttlMs: number): Promise<RootPair> {
  const g = await generateCaCertificate({
    subject: 'O=cluster.local',
    keyType: 'ECDSA',
    ttlMs,
    now: new Date(notBeforeMs),
  });
  return { certPem: g.certPem, keyPem: g.keyPem };
}

describe('root rotation in Kubernetes mode (test API server)', () => {
  let api: TestApiServer;
  let kubeConfig: KubeConfig;

  beforeAll(async () => {
    api = await TestApiServer.start();
    for (const ns of ['istio-system', 'default', 'race']) api.put(namespace(ns));
    kubeConfig = loadKubeConfig(api.writeKubeconfig());
  });

  afterAll(async () => {
    await api.close();
  });

  const secretData = (ns: string) => {
    const data = (api.get('v1', 'Secret', ns, CA_SECRET_NAME)?.['data'] ?? {}) as Record<string, string>;
    const text = (k: string) => (data[k] === undefined ? undefined : Buffer.from(data[k], 'base64').toString('utf8'));
    const rotation = text(CA_SECRET_ROTATION_KEY);
    return {
      caCert: text('ca-cert.pem'),
      rootCerts: splitPemCertificates(text('root-cert.pem') ?? ''),
      phase: rotation === undefined ? 'steady' : (JSON.parse(rotation) as { phase: string }).phase,
    };
  };
  const configMapRoots = (ns: string) =>
    splitPemCertificates(
      (api.get('v1', 'ConfigMap', ns, 'istio-ca-root-cert')?.['data'] as Record<string, string> | undefined)?.[
        'root-cert.pem'
      ] ?? '',
    );

  test('every istio-ca-root-cert carries both roots while the old one still signs; the old one leaves after the overlap', async () => {
    const { store, source } = await syncedKubeStore(kubeConfig, { timing: FAST_WATCH_TIMING });
    let h: Harness | undefined;
    try {
      h = await startHarness({
        mode: 'kubernetes',
        store,
        deps: { kubeConfig, rootCertResyncMs: 200 },
        env: {
          CITADEL_SELF_SIGNED_CA_KEY_TYPE: 'ECDSA',
          CITADEL_SELF_SIGNED_CA_CERT_TTL: '8s',
          CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: '50',
          CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: '200ms',
          // Long enough that the test sees the ConfigMaps with both roots before anything switches.
          CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY: '3s',
          MAX_WORKLOAD_CERT_TTL: '1s',
        },
      });
      const first = secretData('istio-system').caCert;
      expect(first).toBeDefined();
      await eventually('root ConfigMaps hold the first root', () => configMapRoots('default').length === 1);

      await eventually('the new root is distributed', () => configMapRoots('default').length === 2, 10_000);
      const distributing = secretData('istio-system');
      expect(distributing.caCert).toBe(first);
      expect(distributing.phase).toBe('distributing');
      expect(distributing.rootCerts).toHaveLength(2);
      // Namespaces are written one after another; each gets the same two roots.
      await eventually('every namespace has both roots', () => configMapRoots('istio-system').length === 2);
      expect(configMapRoots('istio-system')).toEqual(configMapRoots('default'));
      expect(secretData('istio-system').phase).toBe('distributing');
      // The authority signs with the old root still, and serves both.
      expect(h.ca.authority.signingMaterial().signingCertPem).toBe(first);
      expect(splitPemCertificates(h.ca.rootCertPem())).toHaveLength(2);

      await eventually('signing switched', () => secretData('istio-system').phase === 'overlap', 10_000);
      const overlap = secretData('istio-system');
      expect(overlap.caCert).not.toBe(first);
      expect(overlap.rootCerts).toContain(first);
      await eventually('the old root leaves the ConfigMaps', () => {
        const roots = configMapRoots('default');
        return roots.length === 1 && roots[0] === overlap.caCert;
      });
    } finally {
      await h?.close();
      await source.stop();
    }
  }, 30_000);

  test('two replicas beginning a rotation at the same moment agree on one new root', async () => {
    const T0 = Date.UTC(2030, 0, 1);
    const old = await root(T0, 100 * DAY);
    const stores = [0, 1].map(() => new KubeCaSecretStore(new KubeWriter(new KubeClient(kubeConfig)), 'race'));
    const [a, b] = stores as [KubeCaSecretStore, KubeCaSecretStore];
    await a.createIfAbsent({ caCertPem: old.certPem, caKeyPem: old.keyPem });
    const candidates = await Promise.all([root(T0 + 90 * DAY, 100 * DAY), root(T0 + 90 * DAY, 100 * DAY)]);
    const policy = { gracePercentile: 20, distributionDelayMs: DAY, maxLeafTtlMs: DAY };
    const rotators = [a, b].map(
      (s, i) =>
        new RootRotator(s, {
          policy,
          now: () => T0 + 90 * DAY,
          generate: () => Promise.resolve(candidates[i] as RootPair),
        }),
    );
    const [sa, sb] = await Promise.all(rotators.map((r) => r.check()));
    expect(sa?.rotation.phase).toBe('distributing');
    expect(sa?.rotation.next?.certPem).toBe(sb?.rotation.next?.certPem);
    expect(candidates.map((c) => c.certPem)).toContain(sa?.rotation.next?.certPem);
    expect(secretData('race').rootCerts).toEqual([old.certPem, sa?.rotation.next?.certPem]);
  });
});
