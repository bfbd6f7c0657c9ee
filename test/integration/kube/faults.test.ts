// The store must end equal to the server after every fault a cluster shows: no stale object, no
// missed delete, and no crash.

import { eventually } from '../../support/apiserver';
import { fatPod, namespace, service } from '../../support/apiserver/fixtures';
import { serverKeys, startServer, startSource, storeKeys } from './helpers';
import type { TestApiServer } from '../../support/apiserver';
import type { KubeClient } from '../../../src/store/kube/client';
import type { KubeSource } from '../../../src/store/kube/source';
import type { MemoryStore } from '../../../src/store/memory-store';
import { KIND_IDS } from '../../../src/store/kinds';

let server: TestApiServer;
let client: KubeClient;
let source: KubeSource;
let store: MemoryStore;

beforeEach(async () => {
  ({ server, client } = await startServer());
  server.put(namespace('default'));
  server.put(namespace('istio-system'));
  for (let i = 0; i < 20; i++) server.put(fatPod('default', `web-7d9f8c6b5-p${i}`, i));
  server.put(service('default', 'web'));
  ({ store, source } = startSource(client));
  await source.start();
  await store.whenSynced();
});

afterEach(async () => {
  await source.stop();
  await server.close();
});

/** Adds, changes and deletes objects: what happened while the client was not looking. */
function churn(tag: string): void {
  server.delete('v1', 'Pod', 'default', 'web-7d9f8c6b5-p0');
  server.delete('v1', 'Pod', 'default', 'web-7d9f8c6b5-p1');
  server.put({
    ...fatPod('default', 'web-7d9f8c6b5-p2', 2),
    metadata: { ...fatPod('default', 'web-7d9f8c6b5-p2', 2).metadata, labels: { app: 'web', changed: tag } },
  });
  server.put(fatPod('default', `web-7d9f8c6b5-${tag}`, 99));
  server.delete('v1', 'Service', 'default', 'web');
}

function inSync(): boolean {
  return KIND_IDS.every((kind) => {
    const filter =
      kind === 'ConfigMap'
        ? (o: { metadata: { name: string; namespace?: string } }) =>
            o.metadata.namespace === 'istio-system' && o.metadata.name === 'istio'
        : undefined;
    return storeKeys(store, kind).join() === serverKeys(server, kind, filter).join();
  });
}

test('a watch dropped mid-stream resumes and misses nothing', async () => {
  await eventually('watches are open', () => server.openWatches >= KIND_IDS.length);
  server.dropWatches();
  churn('dropped');
  await eventually('store equals server after a dropped watch', inSync);
});

test('a resourceVersion compacted away (410 Gone) leads to a re-list that removes deleted objects', async () => {
  await eventually('watches are open', () => server.openWatches >= KIND_IDS.length);
  server.dropWatches();
  churn('gone');
  server.compact();
  await eventually('store equals server after 410', inSync);
  expect(server.requests.filter((r) => r.verb === 'list' && r.resource === 'pods').length).toBeGreaterThanOrEqual(2);
});

test('a watch ERROR event with 410 inside an open stream leads to a re-list', async () => {
  await eventually('watches are open', () => server.openWatches >= KIND_IDS.length);
  // The watches end cleanly; the client resumes from a version that is gone by then.
  churn('expired');
  server.compact();
  server.endWatches();
  server.put(fatPod('default', 'web-7d9f8c6b5-late', 7));
  await eventually('store equals server after an ERROR event', inSync);
  expect(server.requests.filter((r) => r.verb === 'list' && r.resource === 'pods').length).toBeGreaterThanOrEqual(2);
});

test('a server restart with new resourceVersions converges', async () => {
  server.restart();
  churn('restart');
  await eventually('store equals server after a restart', inSync);
});

test('an API server unreachable for 5 s: the store catches up afterwards', async () => {
  const outage = server.unreachableFor(5_000);
  churn('outage');
  await outage;
  await eventually('store equals server after the outage', inSync);
});

test('injected 500s on list and watch are retried', async () => {
  server.injectFault({ verb: 'watch', resource: 'pods', status: 500, times: 3 });
  server.injectFault({ verb: 'list', resource: 'pods', status: 500, times: 2 });
  server.compact();
  server.dropWatches();
  churn('faults');
  await eventually('store equals server after injected errors', inSync);
});
