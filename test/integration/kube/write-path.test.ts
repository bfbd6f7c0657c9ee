// The one write path's primitives against the test API server: create, update, the status
// subresource, patches (JSON patch `test` as a precondition), read-modify-write with conflict
// rounds, create-if-absent races and dry run.

import { startServer } from './helpers';
import { KubeWriter, unlessConflict, isConflict, DEFAULT_WRITE_POLICY } from '../../../src/store/kube/writes';
import { KubeApiError } from '../../../src/store/kube/client';
import type { KubeObject } from '../../../src/store/types';
import type { TestApiServer } from '../../support/apiserver';

const FAST = { backoff: { initialMs: 5, maxMs: 20 } };
const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps', namespace: 'default' };
const PODS = { group: '', version: 'v1', plural: 'pods', namespace: 'default' };
let server: TestApiServer;
let writer: KubeWriter;

beforeEach(async () => {
  let client;
  ({ server, client } = await startServer());
  server.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  writer = new KubeWriter(client, FAST);
});

afterEach(async () => {
  await server.close();
});

const count = (verb: string, resource: string) =>
  server.requests.filter((r) => r.verb === verb && r.resource === resource).length;
const configMap = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data,
});

test('get answers undefined for a missing object, and create then update store what was sent', async () => {
  const ref = { ...CONFIGMAPS, name: 'cm' };
  expect(await writer.get(ref)).toBeUndefined();
  const created = await writer.create(ref, configMap('cm', { k: '1' }));
  const updated = await writer.update(ref, { ...created, data: { k: '2' } });
  expect(updated.data).toEqual({ k: '2' });
  expect((await writer.get(ref))?.data).toEqual({ k: '2' });
});

test('an update with a stale resourceVersion is a 409 Conflict, which unlessConflict turns into a lost round', async () => {
  const ref = { ...CONFIGMAPS, name: 'cm' };
  const created = await writer.create(ref, configMap('cm', { k: '1' }));
  await writer.update(ref, { ...created, data: { k: '2' } });
  const stale = await writer.update(ref, { ...created, data: { k: 'stale' } }).catch((err: unknown) => err);
  expect(isConflict(stale)).toBe(true);
  await expect(unlessConflict(writer.update(ref, { ...created, data: { k: 'stale' } }))).resolves.toBeUndefined();
  await expect(unlessConflict(writer.get(ref))).resolves.toMatchObject({ data: { k: '2' } });
});

test('a JSON patch applies when its test op holds and is refused (422, not retried) when it does not', async () => {
  const ref = { ...CONFIGMAPS, name: 'cm' };
  await writer.create(ref, configMap('cm', { k: '1' }));
  const patched = await writer.patch(ref, {
    type: 'json',
    ops: [
      { op: 'test', path: '/data/k', value: '1' },
      { op: 'replace', path: '/data/k', value: '2' },
    ],
  });
  expect(patched.data).toEqual({ k: '2' });
  const before = count('patch', 'configmaps');
  await expect(
    writer.patch(ref, {
      type: 'json',
      ops: [
        { op: 'test', path: '/data/k', value: '1' },
        { op: 'replace', path: '/data/k', value: '3' },
      ],
    }),
  ).rejects.toMatchObject({ status: 422 });
  expect(count('patch', 'configmaps')).toBe(before + 1);
  expect(server.get('v1', 'ConfigMap', 'default', 'cm')?.['data']).toEqual({ k: '2' });
});

test('a merge patch adds and removes keys', async () => {
  const ref = { ...CONFIGMAPS, name: 'cm' };
  await writer.create(ref, configMap('cm', { a: '1', b: '2' }));
  const patched = await writer.patch(ref, { type: 'merge', body: { data: { a: null, c: '3' } } });
  expect(patched.data).toEqual({ b: '2', c: '3' });
});

test('the status subresource changes status only; the main resource leaves status alone', async () => {
  const ref = { ...PODS, name: 'p' };
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'x' }] },
  };
  const created = await writer.create(ref, pod);
  const withStatus = await writer.updateStatus(ref, {
    ...created,
    metadata: { ...created.metadata, labels: { ignored: 'yes' } },
    status: { phase: 'Running' },
  });
  expect(withStatus.status).toEqual({ phase: 'Running' });
  expect(withStatus.metadata.labels).toBeUndefined();
  const patched = await writer.patch(
    ref,
    { type: 'merge', body: { status: { phase: 'Succeeded' } } },
    { status: true },
  );
  expect(patched.status).toEqual({ phase: 'Succeeded' });
  const relabelled = await writer.update(ref, {
    ...patched,
    metadata: { ...patched.metadata, labels: { app: 'a' } },
    status: { phase: 'Failed' },
  });
  expect(relabelled.metadata.labels).toEqual({ app: 'a' });
  expect(relabelled.status).toEqual({ phase: 'Succeeded' });
});

test('modify re-reads after each 409 and gives up after the conflict bound', async () => {
  const ref = { ...CONFIGMAPS, name: 'cm' };
  await writer.create(ref, configMap('cm', { n: '0' }));
  server.injectFault({ verb: 'update', resource: 'configmaps', status: 409, reason: 'Conflict', times: 2 });
  const bump = (cm: KubeObject) => ({ ...cm, data: { n: String(Number(cm.data?.['n']) + 1) } });
  const result = await writer.modify(ref, bump);
  expect(result).toMatchObject({ changed: true, object: { data: { n: '1' } } });
  expect(count('get', 'configmaps')).toBe(3);

  server.injectFault({ verb: 'update', resource: 'configmaps', status: 409, reason: 'Conflict', times: 100 });
  await expect(writer.modify(ref, bump)).rejects.toBeInstanceOf(KubeApiError);
  expect(count('update', 'configmaps')).toBe(3 + DEFAULT_WRITE_POLICY.conflictAttempts);
});

test('modify writes nothing when the mutation says so, and answers undefined for a missing object', async () => {
  const ref = { ...CONFIGMAPS, name: 'cm' };
  await writer.create(ref, configMap('cm', { k: '1' }));
  expect(await writer.modify(ref, () => undefined)).toMatchObject({ changed: false, object: { data: { k: '1' } } });
  expect(count('update', 'configmaps')).toBe(0);
  expect(await writer.modify({ ...CONFIGMAPS, name: 'missing' }, (cm) => cm)).toBeUndefined();
});

test('createIfAbsent: of two racing creators one creates, and both end with the winner', async () => {
  const ref = { ...CONFIGMAPS, name: 'raced' };
  const [a, b] = await Promise.all([
    writer.createIfAbsent(ref, configMap('raced', { by: 'a' })),
    writer.createIfAbsent(ref, configMap('raced', { by: 'b' })),
  ]);
  expect([a.created, b.created].filter(Boolean)).toHaveLength(1);
  expect(a.object.data).toEqual(b.object.data);
});

test('createOrReplace creates, then overwrites without reading (no GET, last writer wins)', async () => {
  const ref = { ...CONFIGMAPS, name: 'cm' };
  expect(await writer.createOrReplace(ref, configMap('cm', { k: '1' }))).toMatchObject({ created: true });
  expect(await writer.createOrReplace(ref, configMap('cm', { k: '2' }))).toMatchObject({
    created: false,
    object: { data: { k: '2' } },
  });
  expect(count('get', 'configmaps')).toBe(0);
  expect(server.get('v1', 'ConfigMap', 'default', 'cm')?.['data']).toEqual({ k: '2' });
});

test('a dry-run update validates without storing', async () => {
  const ref = { ...CONFIGMAPS, name: 'cm' };
  const created = await writer.create(ref, configMap('cm', { k: '1' }));
  const answer = await writer.update(ref, { ...created, data: { k: '2' } }, { dryRun: true });
  expect(answer.data).toEqual({ k: '2' });
  expect(server.get('v1', 'ConfigMap', 'default', 'cm')?.['data']).toEqual({ k: '1' });
  expect(server.requests.at(-1)).toMatchObject({ verb: 'update', resource: 'configmaps', dryRun: true });
});

test('maxAttempts 1 surfaces a 5xx at once, for callers with their own retry loop', async () => {
  server.injectFault({ verb: 'get', resource: 'configmaps', status: 503, times: 100 });
  await expect(writer.get({ ...CONFIGMAPS, name: 'cm' }, { maxAttempts: 1 })).rejects.toMatchObject({ status: 503 });
  expect(count('get', 'configmaps')).toBe(1);
});
