import net from 'node:net';
import { serviceAccountIdentity } from '../../support/apiserver';
import { startServer } from './helpers';
import { KubeWriter, DEFAULT_WRITE_POLICY } from '../../../src/store/kube/writes';
import { KubeApiError, KubeClient } from '../../../src/store/kube/client';
import { loadKubeConfig } from '../../../src/store/kube/config';
import type { TestApiServer } from '../../support/apiserver';

const FAST = { backoff: { initialMs: 5, maxMs: 20 } };
let server: TestApiServer;
let client: KubeClient;
let writer: KubeWriter;

beforeEach(async () => {
  ({ server, client } = await startServer());
  server.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'istio-system' } });
  writer = new KubeWriter(client, FAST);
});

afterEach(async () => {
  await server.close();
});

const count = (verb: string, resource: string) =>
  server.requests.filter((r) => r.verb === verb && r.resource === resource).length;

test('createOrUpdateConfigMap creates, then updates, then leaves an equal ConfigMap alone', async () => {
  const first = await writer.createOrUpdateConfigMap(
    'default',
    'istio-ca-root-cert',
    { 'root-cert.pem': 'A' },
    { 'istio.io/config': 'true' },
  );
  expect(first.action).toBe('created');
  const second = await writer.createOrUpdateConfigMap('default', 'istio-ca-root-cert', { 'root-cert.pem': 'B' });
  expect(second.action).toBe('updated');
  expect(second.configMap.metadata.labels).toEqual({ 'istio.io/config': 'true' });
  const third = await writer.createOrUpdateConfigMap('default', 'istio-ca-root-cert', { 'root-cert.pem': 'B' });
  expect(third.action).toBe('unchanged');
  expect(server.get('v1', 'ConfigMap', 'default', 'istio-ca-root-cert')?.['data']).toEqual({ 'root-cert.pem': 'B' });
  expect(count('update', 'configmaps')).toBe(1);
});

test('a 409 Conflict on update is retried from a fresh read', async () => {
  await writer.createOrUpdateConfigMap('default', 'cm', { k: '1' });
  server.injectFault({ verb: 'update', resource: 'configmaps', status: 409, reason: 'Conflict', times: 2 });
  const result = await writer.createOrUpdateConfigMap('default', 'cm', { k: '2' });
  expect(result.action).toBe('updated');
  expect(count('get', 'configmaps')).toBe(4);
});

test('two writers racing to create the same ConfigMap both succeed: the loser re-reads the winner', async () => {
  const writes = await Promise.all([
    writer.createOrUpdateConfigMap('default', 'raced', { k: 'v' }),
    writer.createOrUpdateConfigMap('default', 'raced', { k: 'v' }),
  ]);
  expect(writes.filter((w) => w.action === 'created')).toHaveLength(1);
  expect(server.get('v1', 'ConfigMap', 'default', 'raced')?.['data']).toEqual({ k: 'v' });
});

test('createSecretIfAbsent creates once and afterwards returns the existing secret (the winner)', async () => {
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'istio-ca-secret', namespace: 'istio-system' },
    type: 'istio.io/ca-root',
    data: { 'ca-cert.pem': 'Zmlyc3Q=' },
  };
  const a = await writer.createSecretIfAbsent(secret);
  const b = await writer.createSecretIfAbsent({ ...secret, data: { 'ca-cert.pem': 'c2Vjb25k' } });
  expect(a.created).toBe(true);
  expect(b.created).toBe(false);
  expect(b.secret['data']).toEqual({ 'ca-cert.pem': 'Zmlyc3Q=' });
  expect(b.secret.metadata.uid).toBe(a.secret.metadata.uid);
});

test('setWebhookCaBundle writes caBundle and failurePolicy on every webhook, and nothing when equal', async () => {
  server.put({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'istio-validator-istio-system' },
    webhooks: [
      {
        name: 'rev.validation.istio.io',
        clientConfig: { service: { name: 'istiod', namespace: 'istio-system' } },
        failurePolicy: 'Ignore',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  });
  const updated = await writer.setWebhookCaBundle('istio-validator-istio-system', 'Q0E=', 'Fail');
  expect((updated!['webhooks'] as { clientConfig: { caBundle: string }; failurePolicy: string }[])[0]).toMatchObject({
    clientConfig: { caBundle: 'Q0E=' },
    failurePolicy: 'Fail',
  });
  await writer.setWebhookCaBundle('istio-validator-istio-system', 'Q0E=', 'Fail');
  expect(count('update', 'validatingwebhookconfigurations')).toBe(1);
  expect(await writer.setWebhookCaBundle('missing', 'Q0E=')).toBeUndefined();
});

test('createTokenReview returns the user, its pod name and uid, and the audiences', async () => {
  // A bound token is valid only while its pod exists (the test API server checks, as the real one does).
  server.put({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'ztunnel-abcde', namespace: 'istio-system' },
    spec: { serviceAccountName: 'ztunnel', containers: [{ name: 'c', image: 'x' }] },
  });
  server.registerToken(
    'tok-1',
    serviceAccountIdentity({
      namespace: 'istio-system',
      serviceAccount: 'ztunnel',
      podName: 'ztunnel-abcde',
      podUid: 'uid-1',
      audiences: ['istio-ca'],
    }),
  );
  const ok = await writer.createTokenReview('tok-1', ['istio-ca']);
  expect(ok).toMatchObject({
    authenticated: true,
    username: 'system:serviceaccount:istio-system:ztunnel',
    podName: 'ztunnel-abcde',
    podUid: 'uid-1',
    audiences: ['istio-ca'],
  });
  expect(ok.groups).toContain('system:serviceaccounts:istio-system');
  const wrongAudience = await writer.createTokenReview('tok-1', ['other']);
  expect(wrongAudience.authenticated).toBe(false);
  expect(wrongAudience.error).toMatch(/audiences/);
  const unknown = await writer.createTokenReview('nope', ['istio-ca']);
  expect(unknown).toMatchObject({ authenticated: false, username: '' });
  expect(unknown.error).toMatch(/invalid bearer token/);
});

test('dryRunCreate validates without storing anything', async () => {
  const policy = {
    apiVersion: 'security.istio.io/v1',
    kind: 'AuthorizationPolicy',
    metadata: { name: 'p', namespace: 'default' },
    spec: {},
  };
  const answer = await writer.dryRunCreate(policy);
  expect(answer.metadata.uid).toBeDefined();
  expect(server.list('security.istio.io/v1', 'AuthorizationPolicy')).toEqual([]);
  expect(server.requests.at(-1)).toMatchObject({ verb: 'create', resource: 'authorizationpolicies', dryRun: true });
  await expect(writer.dryRunCreate({ ...policy, metadata: { name: '', namespace: 'default' } })).rejects.toMatchObject({
    status: 422,
  });
});

test('429 and 5xx are retried with backoff; after the attempt bound the error surfaces', async () => {
  server.injectFault({ verb: 'create', resource: 'secrets', status: 429, retryAfterSeconds: 0, times: 1 });
  server.injectFault({ verb: 'create', resource: 'secrets', status: 503, times: 1 });
  const s = await writer.createSecretIfAbsent({ metadata: { name: 's', namespace: 'istio-system' }, data: {} });
  expect(s.created).toBe(true);
  expect(count('create', 'secrets')).toBe(3);

  server.injectFault({ verb: 'get', resource: 'configmaps', status: 500, times: 100 });
  await expect(writer.createOrUpdateConfigMap('default', 'x', {})).rejects.toBeInstanceOf(KubeApiError);
  expect(count('get', 'configmaps')).toBe(DEFAULT_WRITE_POLICY.maxAttempts);
});

test('every call has a timeout: a server that never answers fails the write', async () => {
  const silent = net.createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const sockets: net.Socket[] = [];
  silent.on('connection', (s) => sockets.push(s));
  const port = (silent.address() as net.AddressInfo).port;
  const kc = loadKubeConfig(server.writeKubeconfig());
  kc.clusters[0] = { ...kc.clusters[0]!, server: `http://127.0.0.1:${port}` };
  const stuck = new KubeWriter(new KubeClient(kc), { timeoutMs: 50, maxAttempts: 2, ...FAST });
  await expect(stuck.createTokenReview('t')).rejects.toThrow(/no answer within 50 ms/);
  expect(sockets.length).toBe(2);
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => silent.close(resolve));
});
