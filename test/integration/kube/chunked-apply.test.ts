// A cold start lists every pod at once; the kind watcher hands them to the store in chunks of
// STORE_APPLY_CHUNK, one per event-loop turn, so other callers are served in between, and the
// kind counts as synced only once the last chunk is in.

import { KindWatcher, STORE_APPLY_CHUNK, type Change } from '../../../src/store/kube/kind-watcher';
import type { KubeClient } from '../../../src/store/kube/client';
import type { TestApiServer } from '../../support/apiserver';
import { FAST_TIMING, startServer } from './helpers';

const PODS = STORE_APPLY_CHUNK * 2 + 37;

let server: TestApiServer;
let client: KubeClient;
let watcher: KindWatcher | undefined;

beforeAll(async () => {
  ({ server, client } = await startServer());
  for (let i = 0; i < PODS; i++)
    server.put({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `pod-${String(i).padStart(4, '0')}`, namespace: 'default' },
      spec: { nodeName: 'node-1' },
    });
});

afterAll(async () => {
  await watcher?.stop();
  await server.close();
});

test('STORE_APPLY_CHUNK is 500', () => {
  expect(STORE_APPLY_CHUNK).toBe(500);
});

test('a large initial list reaches the store in chunks of STORE_APPLY_CHUNK, one per turn, and syncs after the last', async () => {
  const batches: number[] = [];
  /** Turns of the event loop seen (setImmediate ticks) between the first and the last chunk. */
  let turns = 0;
  let counting = false;
  const tick = () => {
    if (!counting) return;
    turns++;
    setImmediate(tick);
  };
  let syncedAfter = -1;
  const synced = new Promise<void>((resolve) => {
    watcher = new KindWatcher({
      client,
      kind: 'Pod',
      timing: FAST_TIMING,
      onChanges: (changes: Change[]) => {
        if (batches.length === 0) {
          counting = true;
          setImmediate(tick);
        }
        batches.push(changes.length);
      },
      onSynced: () => {
        counting = false;
        syncedAfter = batches.length;
        resolve();
      },
    });
    watcher.start();
  });
  await synced;
  expect(batches.reduce((a, b) => a + b, 0)).toBe(PODS);
  expect(Math.max(...batches)).toBeLessThanOrEqual(STORE_APPLY_CHUNK);
  expect(batches.length).toBeGreaterThanOrEqual(Math.ceil(PODS / STORE_APPLY_CHUNK));
  // Synced only once every chunk was handed over.
  expect(syncedAfter).toBe(batches.length);
  // Another callback got a turn between the chunks.
  expect(turns).toBeGreaterThanOrEqual(batches.length - 1);
});
