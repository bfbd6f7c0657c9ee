// A cold start lists every pod at once; the kind watcher hands them to the store through the
// apply pacer, a few per event-loop turn, so other callers are served in between, and the kind
// counts as synced only once the last change is in.

import {
  ApplyPacer,
  STORE_APPLY_MIN_CHUNK,
  STORE_APPLY_STEP_MS,
  STORE_APPLY_TURN_MS,
} from '../../../src/store/kube/apply-pacer';
import { KindWatcher, LIST_PAGE_SIZE, type Change } from '../../../src/store/kube/kind-watcher';
import type { KubeClient } from '../../../src/store/kube/client';
import type { TestApiServer } from '../../support/apiserver';
import { FAST_TIMING, startServer } from './helpers';

const PODS = 1237;
/** The store's cost per change in this test's clock. */
const COST_MS = 0.5;

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

test('a large initial list reaches the store a turn budget at a time, with other callbacks between, and syncs after the last', async () => {
  // Each change costs the store COST_MS on this clock; turns are real event-loop turns.
  let clock = 0;
  const pacer = new ApplyPacer({ now: () => clock, defer: (fn) => setImmediate(fn) });
  const batches: number[] = [];
  let turns = 0;
  let counting = false;
  const tick = () => {
    if (!counting) return;
    turns++;
    setImmediate(tick);
  };
  let syncedAfter = -1;
  await new Promise<void>((resolve) => {
    watcher = new KindWatcher({
      client,
      kind: 'Pod',
      timing: FAST_TIMING,
      pacer,
      onChanges: (changes: Change[]) => {
        if (batches.length === 0) {
          counting = true;
          setImmediate(tick);
        }
        batches.push(changes.length);
        clock += changes.length * COST_MS;
      },
      onSynced: () => {
        counting = false;
        syncedAfter = batches.length;
        resolve();
      },
    });
    watcher.start();
  });
  expect(batches.reduce((a, b) => a + b, 0)).toBe(PODS);
  // After the first step the cost is known, and each step fits the step's budget (a turn is several),
  // or is the least step when that is more.
  expect(Math.max(...batches.slice(1)) * COST_MS).toBeLessThanOrEqual(
    Math.max(STORE_APPLY_STEP_MS, STORE_APPLY_MIN_CHUNK * COST_MS),
  );
  // Synced only once every change was handed over.
  expect(syncedAfter).toBe(batches.length);
  // Other callbacks got turns between the pacer's turns, each at most TURN_MS / STEP_MS steps.
  expect(turns).toBeGreaterThanOrEqual(batches.length / (2 * Math.ceil(STORE_APPLY_TURN_MS / STORE_APPLY_STEP_MS)));
});

test('each list page reaches the store as it arrives, not after the last page', async () => {
  const pages = Math.ceil(PODS / LIST_PAGE_SIZE);
  const podLists = () => server.requests.filter((r) => r.verb === 'list' && r.resource === 'pods').length;
  const listsBefore = podLists();
  let listsAtFirstChange = -1;
  let received = 0;
  const second = new KindWatcher({
    client,
    kind: 'Pod',
    timing: FAST_TIMING,
    pacer: new ApplyPacer(),
    onChanges: (changes: Change[]) => {
      if (listsAtFirstChange < 0) listsAtFirstChange = podLists() - listsBefore;
      received += changes.length;
    },
    onSynced: () => undefined,
  });
  second.start();
  try {
    await new Promise<void>((resolve) => {
      const check = () => (received >= PODS ? resolve() : setTimeout(check, 10));
      check();
    });
  } finally {
    await second.stop();
  }
  expect(pages).toBeGreaterThan(2);
  // Before, the whole list was applied in one run after the last page (90 ms at 100k pods).
  expect(listsAtFirstChange).toBeGreaterThan(0);
  expect(listsAtFirstChange).toBeLessThan(pages);
  expect(received).toBe(PODS);
});
