// The test API server honours the Kubernetes wire protocol: these tests pin the behaviours the
// source, the writes and the leader election rely on.

import { CoreV1Api } from '@kubernetes/client-node';
import { TestApiServer } from '../../support/apiserver';
import { fatPod, namespace } from '../../support/apiserver/fixtures';
import { loadKubeConfig } from '../../../src/store/kube/config';

let server: TestApiServer;

beforeEach(async () => {
  server = await TestApiServer.start({ bookmarkIntervalMs: 20 });
  server.put(namespace('default'));
  for (let i = 0; i < 5; i++) server.put(fatPod('default', `web-7d9f8c6b5-p${i}`, i));
});

afterEach(async () => {
  await server.close();
});

/** A list's metadata carries resourceVersion, and continue when there is another page. */
type ListMeta = Record<string, unknown> & { resourceVersion?: string; continue?: string };
type Body = Record<string, unknown> & { metadata?: ListMeta; items?: Record<string, unknown>[] };

async function api(
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: Body }> {
  const res = await fetch(server.url + path, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': contentType },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Body };
}

/** Opens a watch and collects `count` events (or what arrived before the stream ended). */
async function watchEvents(
  path: string,
  count: number,
  during?: () => void,
): Promise<{ type: string; object: Body }[]> {
  const controller = new AbortController();
  const res = await fetch(server.url + path, { signal: controller.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const decoder = new TextDecoder();
  const events: { type: string; object: Body }[] = [];
  let text = '';
  during?.();
  while (events.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = text.indexOf('\n')) >= 0) {
      events.push(JSON.parse(text.slice(0, nl)) as { type: string; object: Body });
      text = text.slice(nl + 1);
    }
  }
  controller.abort();
  return events;
}

const names = (items: Body[] | undefined) => (items ?? []).map((i) => (i['metadata'] as { name: string }).name);

test('list pages with limit and continue, in name order, without apiVersion/kind on built-in items', async () => {
  const first = await api('GET', '/api/v1/namespaces/default/pods?limit=2');
  expect(names(first.body.items)).toEqual(['web-7d9f8c6b5-p0', 'web-7d9f8c6b5-p1']);
  expect(first.body.metadata).toMatchObject({ remainingItemCount: 3 });
  expect(first.body.items![0]).not.toHaveProperty('kind');
  const rest = await api(
    'GET',
    `/api/v1/namespaces/default/pods?limit=10&continue=${first.body.metadata!['continue']!}`,
  );
  expect(names(rest.body.items)).toEqual(['web-7d9f8c6b5-p2', 'web-7d9f8c6b5-p3', 'web-7d9f8c6b5-p4']);
  expect(rest.body.metadata).not.toHaveProperty('continue');
  expect(first.body).toMatchObject({ kind: 'PodList', apiVersion: 'v1' });
});

test('custom resource list items carry apiVersion and kind', async () => {
  server.put({
    apiVersion: 'security.istio.io/v1',
    kind: 'PeerAuthentication',
    metadata: { name: 'default', namespace: 'istio-system' },
    spec: {},
  });
  const list = await api('GET', '/apis/security.istio.io/v1/peerauthentications');
  expect(list.body.items![0]).toMatchObject({ apiVersion: 'security.istio.io/v1', kind: 'PeerAuthentication' });
});

test('a continue token from before a compaction is 410 Expired', async () => {
  const first = await api('GET', '/api/v1/pods?limit=1');
  server.put(fatPod('default', 'web-7d9f8c6b5-new', 9));
  server.compact();
  const next = await api('GET', `/api/v1/pods?limit=1&continue=${first.body.metadata!['continue']!}`);
  expect(next.status).toBe(410);
  expect(next.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
});

test('a watch from a resourceVersion replays later changes, then streams new ones', async () => {
  const list = await api('GET', '/api/v1/namespaces/default/pods');
  const rv = list.body.metadata!['resourceVersion']!;
  server.delete('v1', 'Pod', 'default', 'web-7d9f8c6b5-p0');
  const events = await watchEvents(`/api/v1/namespaces/default/pods?watch=true&resourceVersion=${rv}`, 3, () => {
    server.put(fatPod('default', 'web-7d9f8c6b5-p9', 9));
    server.put({
      ...fatPod('default', 'web-7d9f8c6b5-p9', 9),
      metadata: { ...fatPod('default', 'web-7d9f8c6b5-p9', 9).metadata, labels: { app: 'x' } },
    });
  });
  expect(events.map((e) => `${e.type} ${(e.object['metadata'] as { name: string }).name}`)).toEqual([
    'DELETED web-7d9f8c6b5-p0',
    'ADDED web-7d9f8c6b5-p9',
    'MODIFIED web-7d9f8c6b5-p9',
  ]);
  expect(events[0]!.object).toMatchObject({ kind: 'Pod', apiVersion: 'v1' });
});

test('a watch without a resourceVersion starts with ADDED events for what exists', async () => {
  const events = await watchEvents('/api/v1/namespaces/default/pods?watch=1', 5);
  expect(events.every((e) => e.type === 'ADDED')).toBe(true);
});

test('a watch with a label selector sees an object leave the selection as DELETED', async () => {
  const rv = (await api('GET', '/api/v1/pods')).body.metadata!['resourceVersion']!;
  const events = await watchEvents(
    `/api/v1/pods?watch=true&resourceVersion=${rv}&labelSelector=app%3Dweb,version%20in%20(v1)`,
    1,
    () => {
      const p = fatPod('default', 'web-7d9f8c6b5-p1', 1);
      server.put({ ...p, metadata: { ...p.metadata, labels: { app: 'other' } } });
    },
  );
  expect(events.map((e) => e.type)).toEqual(['DELETED']);
});

test('a watch from a compacted resourceVersion gets an ERROR event with a 410 Status and ends', async () => {
  const rv = (await api('GET', '/api/v1/pods')).body.metadata!['resourceVersion']!;
  server.put(fatPod('default', 'web-7d9f8c6b5-p7', 7));
  server.compact();
  const events = await watchEvents(`/api/v1/pods?watch=true&resourceVersion=${rv}`, 2);
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
});

test('a watch that allows bookmarks gets BOOKMARK events with the current resourceVersion', async () => {
  const rv = (await api('GET', '/api/v1/pods')).body.metadata!['resourceVersion']!;
  const events = await watchEvents(`/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`, 1);
  expect(events[0]).toMatchObject({ type: 'BOOKMARK', object: { kind: 'Pod', metadata: { resourceVersion: rv } } });
});

test('field selectors select on metadata.name and spec.nodeName; unknown fields are 400', async () => {
  const byNode = await api('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-3');
  expect(names(byNode.body.items)).toEqual(['web-7d9f8c6b5-p3']);
  const byName = await api(
    'GET',
    '/api/v1/pods?fieldSelector=metadata.name!%3Dweb-7d9f8c6b5-p3,metadata.namespace%3Ddefault',
  );
  expect(byName.body.items).toHaveLength(4);
  const bad = await api('GET', '/api/v1/pods?fieldSelector=spec.bogus%3Dx');
  expect(bad.status).toBe(400);
  expect(bad.body['message']).toMatch(/field label not supported: spec.bogus/);
});

test('create assigns uid, creationTimestamp and resourceVersion from one counter; a second create is 409 AlreadyExists', async () => {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } };
  const created = await api('POST', '/api/v1/namespaces/default/configmaps', cm);
  expect(created.status).toBe(201);
  expect(created.body.metadata).toMatchObject({
    name: 'c',
    namespace: 'default',
    uid: expect.any(String) as unknown,
    creationTimestamp: expect.any(String) as unknown,
  });
  expect(Number(created.body.metadata!['resourceVersion'])).toBe(server.storage.currentRv());
  const again = await api('POST', '/api/v1/namespaces/default/configmaps', cm);
  expect(again.status).toBe(409);
  expect(again.body).toMatchObject({
    kind: 'Status',
    reason: 'AlreadyExists',
    message: 'configmaps "c" already exists',
    details: { name: 'c', kind: 'configmaps' },
  });
});

test('an update with a stale resourceVersion is 409 Conflict; a current one succeeds', async () => {
  const created = await api('POST', '/api/v1/namespaces/default/configmaps', {
    metadata: { name: 'c' },
    data: { a: '1' },
  });
  const stale = created.body.metadata!['resourceVersion'];
  const ok = await api('PUT', '/api/v1/namespaces/default/configmaps/c', { ...created.body, data: { a: '2' } });
  expect(ok.status).toBe(200);
  const conflict = await api('PUT', '/api/v1/namespaces/default/configmaps/c', {
    metadata: { name: 'c', resourceVersion: stale },
    data: { a: '3' },
  });
  expect(conflict.status).toBe(409);
  expect(conflict.body).toMatchObject({ reason: 'Conflict' });
  expect(conflict.body['message']).toMatch(/the object has been modified/);
});

test('dryRun=All validates and answers but stores nothing', async () => {
  const dry = await api('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { metadata: { name: 'dry' } });
  expect(dry.status).toBe(201);
  expect((await api('GET', '/api/v1/namespaces/default/configmaps/dry')).status).toBe(404);
  const invalid = await api('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { metadata: {} });
  expect(invalid.status).toBe(422);
  expect(invalid.body).toMatchObject({ reason: 'Invalid' });
  const bad = await api('POST', '/api/v1/namespaces/default/configmaps?dryRun=Some', { metadata: { name: 'x' } });
  expect(bad.status).toBe(400);
});

test('merge, strategic-merge and JSON patches apply; other patch types are 415', async () => {
  await api('POST', '/api/v1/namespaces/default/configmaps', {
    metadata: { name: 'p', labels: { a: '1', b: '2' } },
    data: { k: 'v' },
  });
  const merged = await api(
    'PATCH',
    '/api/v1/namespaces/default/configmaps/p',
    { metadata: { labels: { b: null, c: '3' } } },
    'application/merge-patch+json',
  );
  expect(merged.body.metadata!['labels']).toEqual({ a: '1', c: '3' });
  const strategic = await api(
    'PATCH',
    '/api/v1/namespaces/default/configmaps/p',
    { data: { k2: 'v2' } },
    'application/strategic-merge-patch+json',
  );
  expect(strategic.body['data']).toEqual({ k: 'v', k2: 'v2' });
  const json = await api(
    'PATCH',
    '/api/v1/namespaces/default/configmaps/p',
    [
      { op: 'replace', path: '/data/k', value: 'w' },
      { op: 'remove', path: '/data/k2' },
    ],
    'application/json-patch+json',
  );
  expect(json.body['data']).toEqual({ k: 'w' });
  const apply = await api('PATCH', '/api/v1/namespaces/default/configmaps/p', {}, 'application/apply-patch+yaml');
  expect(apply.status).toBe(415);
});

test('the status subresource changes only status, and the main resource ignores status', async () => {
  const pod = server.get('v1', 'Pod', 'default', 'web-7d9f8c6b5-p0')!;
  const viaMain = await api('PUT', '/api/v1/namespaces/default/pods/web-7d9f8c6b5-p0', {
    ...pod,
    status: { phase: 'Failed' },
    metadata: { ...pod.metadata, labels: { app: 'x' } },
  });
  expect(viaMain.body['status']).toMatchObject({ phase: 'Running' });
  expect(viaMain.body.metadata!['labels']).toEqual({ app: 'x' });
  const viaStatus = await api(
    'PATCH',
    '/api/v1/namespaces/default/pods/web-7d9f8c6b5-p0/status',
    { status: { phase: 'Succeeded' }, metadata: { labels: { app: 'y' } } },
    'application/merge-patch+json',
  );
  expect(viaStatus.body['status']).toMatchObject({ phase: 'Succeeded' });
  expect(viaStatus.body.metadata!['labels']).toEqual({ app: 'x' });
});

test('delete returns the object, honours preconditions, and a second delete is 404', async () => {
  const conflict = await api('DELETE', '/api/v1/namespaces/default/pods/web-7d9f8c6b5-p0', {
    preconditions: { uid: 'other' },
  });
  expect(conflict.status).toBe(409);
  const gone = await api('DELETE', '/api/v1/namespaces/default/pods/web-7d9f8c6b5-p0');
  expect(gone.status).toBe(200);
  expect(gone.body).toMatchObject({ kind: 'Pod', metadata: { name: 'web-7d9f8c6b5-p0' } });
  const again = await api('DELETE', '/api/v1/namespaces/default/pods/web-7d9f8c6b5-p0');
  expect(again.status).toBe(404);
  expect(again.body['message']).toBe('pods "web-7d9f8c6b5-p0" not found');
});

test('discovery lists groups and resources; an uninstalled CRD is absent and 404', async () => {
  expect((await api('GET', '/version')).body).toMatchObject({ major: '1' });
  expect((await api('GET', '/api')).body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
  const core = await api('GET', '/api/v1');
  expect((core.body['resources'] as { name: string }[]).map((r) => r.name)).toEqual(
    expect.arrayContaining(['pods', 'pods/status', 'secrets', 'configmaps']),
  );
  server.setInstalled('gateway.networking.k8s.io', 'gateways', false);
  const groups = (await api('GET', '/apis')).body['groups'] as { name: string }[];
  expect(groups.map((g) => g.name)).toEqual(
    expect.arrayContaining(['coordination.k8s.io', 'gateway.networking.k8s.io', 'security.istio.io']),
  );
  const gw = await api('GET', '/apis/gateway.networking.k8s.io/v1');
  expect((gw.body['resources'] as { name: string }[]).map((r) => r.name)).not.toContain('gateways');
  expect((await api('GET', '/apis/gateway.networking.k8s.io/v1/gateways')).status).toBe(404);
});

test('every request is recorded with verb, group, resource, namespace and subresource', async () => {
  await api('GET', '/api/v1/namespaces/default/pods/web-7d9f8c6b5-p0');
  await api(
    'PATCH',
    '/api/v1/namespaces/default/pods/web-7d9f8c6b5-p0/status',
    { status: {} },
    'application/merge-patch+json',
  );
  await api('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { spec: { token: 'x' } });
  await api('GET', '/apis/coordination.k8s.io/v1/namespaces/istio-system/leases');

  expect(server.requests.map(({ userAgent: _u, ...r }) => r)).toEqual([
    {
      verb: 'get',
      group: '',
      version: 'v1',
      resource: 'pods',
      namespace: 'default',
      name: 'web-7d9f8c6b5-p0',
      dryRun: false,
    },
    {
      verb: 'patch',
      group: '',
      version: 'v1',
      resource: 'pods',
      namespace: 'default',
      name: 'web-7d9f8c6b5-p0',
      subresource: 'status',
      dryRun: false,
    },
    { verb: 'create', group: 'authentication.k8s.io', version: 'v1', resource: 'tokenreviews', dryRun: false },
    {
      verb: 'list',
      group: 'coordination.k8s.io',
      version: 'v1',
      resource: 'leases',
      namespace: 'istio-system',
      dryRun: false,
    },
  ]);
});

test('an injected fault answers the chosen status once, as a Status object', async () => {
  server.injectFault({ verb: 'list', resource: 'pods', status: 429, retryAfterSeconds: 1 });
  const res = await fetch(`${server.url}/api/v1/pods`);
  expect(res.status).toBe(429);
  expect(res.headers.get('retry-after')).toBe('1');
  expect(await res.json()).toMatchObject({ reason: 'TooManyRequests', code: 429 });
  expect((await api('GET', '/api/v1/pods')).status).toBe(200);
});

test("client-node's generated API client works against it", async () => {
  const core = loadKubeConfig(server.writeKubeconfig()).makeApiClient(CoreV1Api);
  const pods = await core.listNamespacedPod({ namespace: 'default' });
  expect(pods.items.map((p) => p.metadata?.name)).toHaveLength(5);
  const created = await core.createNamespacedConfigMap({
    namespace: 'default',
    // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- client-node's models are plain data classes and its documented calls pass object literals; this test uses it as a caller would
    body: { metadata: { name: 'from-client' }, data: { a: 'b' } },
  });
  expect(created.metadata?.uid).toBeDefined();
});
