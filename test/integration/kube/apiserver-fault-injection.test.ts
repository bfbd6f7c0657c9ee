// The test API server's fault injection, as the controllers' tests use it: refusals narrowed to
// one verb, subresource and object with any Status code, and writes that are applied at once but
// answered late (a client that times out sees a write that landed without an answer).

import { KubeApiError } from '../../../src/store/kube/client';
import { KubeWriter } from '../../../src/store/kube/writes';
import type { TestApiServer } from '../../support/apiserver';
import { namespace } from '../../support/apiserver/fixtures';
import { startServer } from './helpers';

let server: TestApiServer;
let writer: KubeWriter;

const NAMESPACES = { group: '', version: 'v1', plural: 'namespaces' };

beforeEach(async () => {
  const started = await startServer();
  server = started.server;
  writer = new KubeWriter(started.client, { maxAttempts: 1, timeoutMs: 2_000 });
  server.put(namespace('a'));
  server.put(namespace('b'));
});

afterEach(async () => {
  await server.close();
});

async function statusOf(call: Promise<unknown>): Promise<number | string> {
  try {
    await call;
    return 'ok';
  } catch (err) {
    return err instanceof KubeApiError ? err.status : (err as Error).message;
  }
}

const labelX = (name: string) =>
  (server.get('v1', 'Namespace', undefined, name)!.metadata['labels'] as Record<string, string>)['x'];

const label = (value: string) => ({ type: 'merge' as const, body: { metadata: { labels: { x: value } } } });

test('a fault narrowed to verb, subresource and name refuses only those requests, with its status, as many times as asked', async () => {
  server.injectFault({ verb: 'patch', resource: 'namespaces', subresource: '', name: 'a', status: 403, times: 2 });
  expect(await statusOf(writer.get({ ...NAMESPACES, name: 'a' }))).toBe('ok');
  expect(await statusOf(writer.patch({ ...NAMESPACES, name: 'b' }, label('1')))).toBe('ok');
  expect(await statusOf(writer.patch({ ...NAMESPACES, name: 'a' }, label('1')))).toBe(403);
  expect(await statusOf(writer.patch({ ...NAMESPACES, name: 'a' }, label('1')))).toBe(403);
  expect(labelX('a')).toBeUndefined();
  expect(await statusOf(writer.patch({ ...NAMESPACES, name: 'a' }, label('1')))).toBe('ok');

  server.injectFault({ verb: 'patch', subresource: 'status', status: 422, reason: 'Invalid' });
  expect(await statusOf(writer.patch({ ...NAMESPACES, name: 'b' }, label('2')))).toBe('ok');
  const status = { type: 'merge' as const, body: { status: { phase: 'Active' } } };
  expect(await statusOf(writer.patch({ ...NAMESPACES, name: 'b' }, status, { status: true }))).toBe(422);
});

test('a held-back answer: the write is applied at once, the client times out, and the server notes the abandoned answer', async () => {
  server.delays.add({ verb: 'patch', resource: 'namespaces', subresource: '', name: 'a', ms: 60_000, times: 1 });
  const result = await statusOf(writer.patch({ ...NAMESPACES, name: 'a' }, label('late'), { timeoutMs: 200 }));
  expect(result).not.toBe('ok');
  expect(labelX('a')).toBe('late');
  // Only that one answer was held: the next write is answered.
  expect(await statusOf(writer.patch({ ...NAMESPACES, name: 'a' }, label('next')))).toBe('ok');
  expect(server.delays.abandoned).toEqual(['patch namespaces']);
});
