// Everything istiod-ts asks of the API server in Kubernetes mode, as RBAC rules: the chart's
// roles must grant at least these (and later chart tests compare against this list).

import { eventually, neededRules, serviceAccountIdentity } from '../../support/apiserver';
import { namespace } from '../../support/apiserver/fixtures';
import { startServer, startSource } from './helpers';
import { KubeWriter } from '../../../src/store/kube/writes';
import { LEASE_NAMES, KubeLeaderElector } from '../../../src/store/kube/leader';

test('the source, the writes and leader election need exactly these API calls', async () => {
  const { server, client } = await startServer();
  try {
    server.put(namespace('istio-system'));
    server.registerToken('t', serviceAccountIdentity({ namespace: 'default', serviceAccount: 'sa' }));
    server.put({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'istio-validator-istio-system' },
      webhooks: [{ name: 'w' }],
    });
    const { store, source } = startSource(client);
    await source.start();
    await store.whenSynced();
    await eventually('every watch is open', () => server.openWatches >= 12);

    const writer = new KubeWriter(client);
    await writer.createOrUpdateConfigMap('default', 'istio-ca-root-cert', { 'root-cert.pem': 'x' });
    await writer.createOrUpdateConfigMap('default', 'istio-ca-root-cert', { 'root-cert.pem': 'y' });
    await writer.createSecretIfAbsent({ metadata: { name: 'istio-ca-secret', namespace: 'istio-system' }, data: {} });
    await writer.createSecretIfAbsent({ metadata: { name: 'istio-ca-secret', namespace: 'istio-system' }, data: {} });
    await writer.setWebhookCaBundle('istio-validator-istio-system', 'Q0E=');
    await writer.createTokenReview('t', []);
    await writer.dryRunCreate({
      apiVersion: 'security.istio.io/v1',
      kind: 'AuthorizationPolicy',
      metadata: { name: 'p', namespace: 'default' },
      spec: {},
    });

    const leader = new KubeLeaderElector({
      client,
      namespace: 'istio-system',
      identity: 'r',
      timing: { leaseDurationMs: 300, renewDeadlineMs: 200, retryPeriodMs: 50 },
    });
    // One election on a ConfigMap lock and one on a Lease, the two kinds istiod uses.
    leader.runWhileLeader(LEASE_NAMES.namespaceController, () => () => undefined);
    leader.runWhileLeader(LEASE_NAMES.status, () => () => undefined);
    await eventually('a renewal of each lock', () =>
      [LEASE_NAMES.namespaceController, LEASE_NAMES.status].every((name) =>
        server.requests.some((r) => r.name === name && r.verb === 'update'),
      ),
    );
    await leader.stop();
    await source.stop();

    const rules = neededRules(server.requests).map(
      (r) => `${r.apiGroup || 'core'}/${r.resource}: ${r.verbs.join(',')}`,
    );
    expect(new Set(rules)).toEqual(
      new Set([
        'core/configmaps: create,get,list,update,watch',
        'core/namespaces: list,watch',
        'core/nodes: list,watch',
        'core/pods: list,watch',
        'core/secrets: create,get',
        'core/services: get,list,watch',
        'admissionregistration.k8s.io/validatingwebhookconfigurations: get,update',
        'admissionregistration.k8s.io/mutatingwebhookconfigurations: get',
        'authentication.k8s.io/tokenreviews: create',
        'coordination.k8s.io/leases: create,get,update',
        'discovery.k8s.io/endpointslices: list,watch',
        'gateway.networking.k8s.io/gatewayclasses: list,watch',
        'gateway.networking.k8s.io/gateways: list,watch',
        'networking.istio.io/serviceentries: list,watch',
        'networking.istio.io/workloadentries: list,watch',
        'security.istio.io/authorizationpolicies: create,list,watch',
        'security.istio.io/peerauthentications: list,watch',
      ]),
    );
    const configMapWatch = neededRules(
      server.requests.filter(
        (r) => r.resource === 'configmaps' && r.verb !== 'create' && r.verb !== 'get' && r.verb !== 'update',
      ),
    );
    expect(configMapWatch[0]!.namespaces).toEqual(['istio-system']);
  } finally {
    await server.close();
  }
});
