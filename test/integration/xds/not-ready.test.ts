// Before the store has synced, the xDS server has no view of the mesh, and an empty view would tell
// a ztunnel `removed: [every policy]` (fail-open). istiod answers every new stream with UNAVAILABLE
// "server is not ready to serve discovery information" until its caches are in; so does this one.

import * as grpc from '@grpc/grpc-js';
import { NOT_READY_MESSAGE } from '../../../src/xds/server';
import { AdsClient, HeldResources, ztunnelNodeId, type DeltaResponse } from '../../../src/cli/ads-client';
import { AUTHORIZATION_TYPE_URL } from '../../../src/contract/xds-resources';

import { TestApiServer, eventually } from '../../support/apiserver';
import { namespace } from '../../support/apiserver/fixtures';
import { serveAgainst, type InProcessServer } from '../kube/serve-fixture';

let api: TestApiServer;
let server: InProcessServer | undefined;

beforeEach(async () => {
  api = await TestApiServer.start();
  api.put(namespace('istio-system'));
  api.put(namespace('shop'));
  api.put({
    apiVersion: 'security.istio.io/v1',
    kind: 'AuthorizationPolicy',
    metadata: { name: 'allow-frontend', namespace: 'shop' },
    spec: { action: 'ALLOW', rules: [{ from: [{ source: { principals: ['cluster.local/ns/shop/sa/frontend'] } }] }] },
  });
  // RBAC that does not cover AuthorizationPolicy: every list and watch of it is refused.
  api.injectFault({
    group: 'security.istio.io',
    resource: 'authorizationpolicies',
    status: 403,
    reason: 'Forbidden',
    times: Number.MAX_SAFE_INTEGER,
  });
});

afterEach(async () => {
  await server?.stop();
  server = undefined;
  await api.close();
});

/** A ztunnel's first request for policies on the plaintext port; resolves with the first response or the stream's end. */
async function askForPolicies(
  address: string,
): Promise<{ response?: DeltaResponse; status?: grpc.StatusObject; client: AdsClient }> {
  const client = new AdsClient({
    address,
    node: {
      id: ztunnelNodeId('10.0.0.100', 'ztunnel-abc', 'istio-system'),
      metadata: { NAME: 'ztunnel-abc', NAMESPACE: 'istio-system', CLUSTER_ID: 'Kubernetes' },
    },
  });
  const first = new Promise<DeltaResponse>((resolve) => client.onResponse(resolve));
  client.send({ type_url: AUTHORIZATION_TYPE_URL });
  const outcome = await Promise.race([
    first.then((response) => ({ response })),
    client.status.then((status) => ({ status })),
  ]);
  return { ...outcome, client };
}

test('a stream opened while a kind is forbidden gets UNAVAILABLE, not an empty policy set', async () => {
  server = await serveAgainst(api, { XDS_AUTH: 'false' });
  expect((await server.ready()).status).toBe(503);
  const { response, status, client } = await askForPolicies(server.address('grpc'));
  client.close();
  expect(response).toBeUndefined();
  expect(status?.code).toBe(grpc.status.UNAVAILABLE);
  expect(status?.details).toBe('server is not ready to serve discovery information');
  expect(NOT_READY_MESSAGE).toBe(status?.details);
});

test('once the kind is allowed and the store synced, a new stream gets the full state', async () => {
  server = await serveAgainst(api, { XDS_AUTH: 'false' });
  api.clearFaults();
  const running = server;
  await eventually('the server becomes ready', async () => (await running.ready()).status === 200, 20_000);
  const { response, client } = await askForPolicies(server.address('grpc'));
  client.close();
  const held = new HeldResources();
  if (response) held.apply(response);
  expect(held.names(AUTHORIZATION_TYPE_URL)).toEqual(['shop/allow-frontend']);
});
