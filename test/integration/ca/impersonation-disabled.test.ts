import * as grpc from '@grpc/grpc-js';
import { loadOrCreateTokenKey, signLocalToken } from '../../../src/security/local-jwt';
import { makeCsr, peculiarSan } from '../../support/ca/fixtures';
import { ZtunnelLikeClient, readRoot, startHarness } from '../../support/ca/harness';

test('with CA_TRUSTED_NODE_ACCOUNTS set empty, impersonation is refused and callers still get their own identity', async () => {
  const h = await startHarness({ env: { CA_TRUSTED_NODE_ACCOUNTS: '' } });
  const client = new ZtunnelLikeClient(h.port, readRoot(h));
  try {
    h.store.upsert('Pod', [
      {
        metadata: { name: 'ztunnel-a', namespace: 'istio-system', uid: 'u1' },
        spec: { serviceAccountName: 'ztunnel', nodeName: 'n1' },
        status: { phase: 'Running' },
      },
      {
        metadata: { name: 'sleep-1', namespace: 'default', uid: 'u2' },
        spec: { serviceAccountName: 'sleep', nodeName: 'n1' },
        status: { phase: 'Running' },
      },
    ]);
    const token = signLocalToken(
      loadOrCreateTokenKey(h.stateDir),
      { namespace: 'istio-system', serviceAccount: 'ztunnel', podName: 'ztunnel-a', podUid: 'u1' },
      ['istio-ca'],
      600,
    );
    await expect(
      client.createCertificate((await makeCsr()).pem, {
        token,
        impersonate: 'spiffe://cluster.local/ns/default/sa/sleep',
      }),
    ).rejects.toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
      details: 'request impersonation authentication failure',
    });
    const metric = await h.metrics.getSingleMetric('citadel_server_node_authorization_denial_count')!.get();
    expect(metric.values.find((v) => v.labels['reason'] === 'impersonation_disabled')?.value).toBe(1);
    const own = await client.createCertificate((await makeCsr()).pem, { token });
    expect(peculiarSan(own.cert_chain[0]!).uris).toEqual(['spiffe://cluster.local/ns/istio-system/sa/ztunnel']);
  } finally {
    client.close();
    await h.close();
  }
});
