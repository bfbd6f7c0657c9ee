// TokenReview through the one write path against the test API server: a hung server is bounded and
// the request is cut, and a token whose bound pod was deleted is refused, as the real server does.

import { CachedTokenVerifier, KubeTokenReviewer } from '../../../src/security/token-review';
import { KubeClient } from '../../../src/store/kube/client';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { KubeWriter } from '../../../src/store/kube/writes';
import { TestApiServer, eventually, serviceAccountIdentity } from '../../support/apiserver';
import { namespace } from '../../support/apiserver/fixtures';

describe('TokenReview against a failing API server', () => {
  let api: TestApiServer;
  let writer: KubeWriter;

  beforeAll(async () => {
    api = await TestApiServer.start();
    api.put(namespace('istio-system'));
    writer = new KubeWriter(new KubeClient(loadKubeConfig(api.writeKubeconfig())));
  });

  afterEach(() => api.delays.clear());
  afterAll(() => api.close());

  function boundToken(name: string): string {
    const stored = api.put({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'istio-system' },
      spec: { serviceAccountName: 'ztunnel', nodeName: 'node-a', containers: [{ name: 'c', image: 'x' }] },
    });
    const token = `token-${name}`;
    api.registerToken(
      token,
      serviceAccountIdentity({
        namespace: 'istio-system',
        serviceAccount: 'ztunnel',
        podName: name,
        podUid: stored.metadata.uid ?? '',
        audiences: ['istio-ca'],
      }),
    );
    return token;
  }

  test('a hung API server: the review ends at its bound as token_review_timeout, and the request is cut', async () => {
    const token = boundToken('ztunnel-hung');
    api.delays.add({ verb: 'create', resource: 'tokenreviews', ms: 30_000 });
    const v = new CachedTokenVerifier(new KubeTokenReviewer(writer), () => ['istio-ca'], Date.now, { timeoutMs: 300 });
    const started = Date.now();
    await expect(v.verify(token)).rejects.toMatchObject({ reason: 'token_review_timeout', retryable: true });
    expect(Date.now() - started).toBeLessThan(2_000);
    await eventually('the API server sees the request cut', () => api.delays.abandoned.includes('create tokenreviews'));
  });

  test('the test API server refuses the token of a deleted pod, as the real one does', async () => {
    const token = boundToken('ztunnel-deleted');
    const before = await writer.createTokenReview(token, ['istio-ca']);
    expect(before.authenticated).toBe(true);
    api.delete('v1', 'Pod', 'istio-system', 'ztunnel-deleted');
    const after = await writer.createTokenReview(token, ['istio-ca']);
    expect(after.authenticated).toBe(false);
    expect(after.error).toMatch(/ztunnel-deleted/);
  });
});
