// The CA in Kubernetes mode when the API server is slow, failing or has deleted the caller's pod,
// and what istiod's users count on in the metrics: every refusal is counted where istiod counts it.

import * as crypto from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig } from '../../../src/store/kube/config';
import type { KubeSource } from '../../../src/store/kube/source';
import { syncedKubeStore } from '../../support/apiserver/synced-store';
import { MemoryStore } from '../../../src/store/memory-store';
import { TestApiServer, eventually, serviceAccountIdentity } from '../../support/apiserver';
import { namespace, FAST_WATCH_TIMING, scheduledPod as pod } from '../../support/apiserver/fixtures';
import { makeCsr } from '../../support/ca/fixtures';
import { NOT_BEFORE_BACKDATE_MS } from '../../../src/ca/signing/authority';
import { Harness, ZtunnelLikeClient, startHarness } from '../../support/ca/harness';

const id = (ns: string, sa: string) => `spiffe://cluster.local/ns/${ns}/sa/${sa}`;
describe('the CA in Kubernetes mode under API server faults (test API server)', () => {
  let api: TestApiServer;
  let kubeConfig: KubeConfig;
  let store: MemoryStore;
  let source: KubeSource;
  let h: Harness;
  let client: ZtunnelLikeClient;

  /** Puts the pod, waits until the store has it, and registers a token bound to it (its real uid). */
  async function podWithToken(ns: string, name: string, sa: string, node: string | undefined, phase = 'Running') {
    const stored = api.put(pod(ns, name, sa, node, phase));
    await eventually(`${ns}/${name} reaches the store`, () => {
      const seen = store.get('Pod', ns, name);
      return seen?.metadata.resourceVersion === stored.metadata.resourceVersion;
    });
    const token = `token-${ns}-${name}-${stored.metadata.uid ?? ''}`;
    api.registerToken(
      token,
      serviceAccountIdentity({
        namespace: ns,
        serviceAccount: sa,
        podName: name,
        podUid: stored.metadata.uid ?? '',
        audiences: ['istio-ca'],
      }),
    );
    return token;
  }

  async function counter(name: string, labels: Record<string, string> = {}): Promise<number> {
    const metric = await h.metrics.getSingleMetric(name)?.get();
    return (metric?.values ?? [])
      .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
      .reduce((sum, v) => sum + v.value, 0);
  }

  beforeAll(async () => {
    api = await TestApiServer.start();
    for (const ns of ['istio-system', 'default']) api.put(namespace(ns));
    api.put(pod('default', 'sleep-1', 'sleep', 'node-a'));
    kubeConfig = loadKubeConfig(api.writeKubeconfig());
    ({ store, source } = await syncedKubeStore(kubeConfig, { timing: FAST_WATCH_TIMING }));
    h = await startHarness({ mode: 'kubernetes', store, deps: { kubeConfig, rootCertResyncMs: 60_000 } });
    client = new ZtunnelLikeClient(h.port, h.ca.rootCertPem());
  });

  afterEach(() => {
    api.clearFaults();
    api.delays.clear();
  });

  afterAll(async () => {
    client.close();
    await h.close();
    await source.stop();
    await api.close();
  });

  // ---- 5: TokenReview without a deadline ----

  test('a hung TokenReview ends with the caller: the review is abandoned when the CSR deadline passes', async () => {
    const token = await podWithToken('istio-system', 'ztunnel-hang', 'ztunnel', 'node-a');
    api.delays.add({ verb: 'create', resource: 'tokenreviews', ms: 30_000 });
    const started = Date.now();
    await expect(client.createCertificate((await makeCsr()).pem, { token, deadlineMs: 800 })).rejects.toMatchObject({
      code: grpc.status.DEADLINE_EXCEEDED,
    });
    // The review must not go on after the client left: the API server sees the request cut.
    await eventually('the TokenReview is abandoned', () => api.delays.abandoned.includes('create tokenreviews'), 2_000);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await counter('citadel_server_authentication_failure_count', { reason: 'token_review_cancelled' })).toBe(1);
  });

  test('a TokenReview the API server cannot answer (5xx) gives UNAVAILABLE, so ztunnel retries', async () => {
    const token = await podWithToken('istio-system', 'ztunnel-5xx', 'ztunnel', 'node-a');
    api.injectFault({ verb: 'create', resource: 'tokenreviews', status: 503, times: 100 });
    await expect(client.createCertificate((await makeCsr()).pem, { token })).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
    });
    expect(await counter('citadel_server_authentication_failure_count', { reason: 'token_review_unavailable' })).toBe(
      1,
    );
    // Nothing is cached: once the API server answers again, the same token gets its certificate.
    api.clearFaults();
    await expect(client.createCertificate((await makeCsr()).pem, { token })).resolves.toBeDefined();
  }, 20_000);

  // ---- 6: the token cache outlives the pod ----

  test('a deleted pod`s token is refused at the next CSR, not after the cache expires', async () => {
    const token = await podWithToken('istio-system', 'ztunnel-deleted', 'ztunnel', 'node-a');
    await expect(client.createCertificate((await makeCsr()).pem, { token })).resolves.toBeDefined();
    api.delete('v1', 'Pod', 'istio-system', 'ztunnel-deleted');
    await eventually('the deletion reaches the store', () => !store.get('Pod', 'istio-system', 'ztunnel-deleted'));
    await expect(client.createCertificate((await makeCsr()).pem, { token })).rejects.toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
      details: 'request authenticate failure',
    });
  });

  // ---- 7: a Failed caller pod ----

  test('a ztunnel whose own pod has Failed cannot impersonate', async () => {
    const token = await podWithToken('istio-system', 'ztunnel-failed', 'ztunnel', 'node-a', 'Failed');
    await expect(
      client.createCertificate((await makeCsr()).pem, { token, impersonate: id('default', 'sleep') }),
    ).rejects.toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
      details: 'request impersonation authentication failure',
    });
    expect(await counter('citadel_server_node_authorization_denial_count', { reason: 'caller_pod_terminated' })).toBe(
      1,
    );
  });

  // ---- 8: the accounting istiod's users rely on ----

  test('a refused impersonation is an authentication failure, as istiod counts it', async () => {
    const token = await podWithToken('istio-system', 'ztunnel-a', 'ztunnel', 'node-a');
    const before = await counter('citadel_server_authentication_failure_count');
    await expect(
      client.createCertificate((await makeCsr()).pem, { token, impersonate: id('default', 'nowhere') }),
    ).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    expect(await counter('citadel_server_authentication_failure_count')).toBe(before + 1);
    expect(await counter('citadel_server_authentication_failure_count', { reason: 'no_pod_on_node' })).toBe(1);
    expect(await counter('citadel_server_node_authorization_denial_count', { reason: 'no_pod_on_node' })).toBe(1);
  });

  test('a TTL above the maximum is counted as csr_sign_err_count{error="TTL_ERROR"}', async () => {
    const token = await podWithToken('istio-system', 'ztunnel-a', 'ztunnel', 'node-a');
    await expect(
      client.createCertificate((await makeCsr()).pem, { token, validitySeconds: 100 * 365 * 86400 }),
    ).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    expect(await counter('citadel_server_csr_sign_err_count', { error: 'TTL_ERROR' })).toBe(1);
  });

  test('an unscheduled caller pod has its own reason, not no_pod_on_node', async () => {
    const token = await podWithToken('istio-system', 'ztunnel-pending', 'ztunnel', undefined, 'Pending');
    await expect(
      client.createCertificate((await makeCsr()).pem, { token, impersonate: id('default', 'sleep') }),
    ).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    expect(await counter('citadel_server_node_authorization_denial_count', { reason: 'caller_pod_unscheduled' })).toBe(
      1,
    );
    expect(await counter('citadel_server_authentication_failure_count', { reason: 'caller_pod_unscheduled' })).toBe(1);
  });

  test('an expired client certificate is counted as expired_certificate, not no_credentials', async () => {
    const { keyPem } = await makeCsr();
    const spki = crypto.createPublicKey(keyPem).export({ type: 'spki', format: 'der' });
    // The CA issues nothing outside its root's validity, so the expired certificate is one issued
    // at the root's start for one second, and the test waits until that second has passed.
    const rootStart = h.ca.authority.signingMaterial().validity.notBefore.getTime() + NOT_BEFORE_BACKDATE_MS;
    const expired = await h.ca.authority.issue(spki, [{ uri: id('default', 'sleep') }], 1000, rootStart);
    const wait = expired.notAfter.getTime() + 1000 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const mtls = new ZtunnelLikeClient(h.port, h.ca.rootCertPem(), {
      certPem: expired.chain.join('\n'),
      keyPem,
    });
    try {
      await expect(mtls.createCertificate((await makeCsr()).pem)).rejects.toMatchObject({
        code: grpc.status.UNAUTHENTICATED,
        details: 'request authenticate failure',
      });
    } finally {
      mtls.close();
    }
    expect(await counter('citadel_server_authentication_failure_count', { reason: 'expired_certificate' })).toBe(1);
    expect(await counter('citadel_server_authentication_failure_count', { reason: 'no_credentials' })).toBe(0);
  });
});
