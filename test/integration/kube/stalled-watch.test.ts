// A watch that stays open but sends nothing (no event, no bookmark, no end) is noticed and opened
// again, and watches ask for timeouts spread over [min, 2*min) so they do not all reopen at once.

import { eventually } from '../../support/apiserver';
import { namespace, service } from '../../support/apiserver/fixtures';
import type { TestApiServer } from '../../support/apiserver';
import type { KubeClient } from '../../../src/store/kube/client';
import type { KubeSource } from '../../../src/store/kube/source';
import {
  MIN_WATCH_TIMEOUT_SECONDS,
  randomWatchTimeoutSeconds,
  WATCH_STALL_MARGIN_MS,
} from '../../../src/store/kube/watch-liveness';
import { DEFAULT_WATCH_TIMING } from '../../../src/store/kube/kind-watcher';
import { FAST_TIMING, startServer, startSource } from './helpers';

let server: TestApiServer;
let client: KubeClient;
let source: KubeSource | undefined;

beforeEach(async () => {
  ({ server, client } = await startServer());
  server.put(namespace('default'));
  server.put(namespace('istio-system'));
});

afterEach(async () => {
  await source?.stop();
  source = undefined;
  await server.close();
});

test('a watch silent past its timeout plus the margin is restarted, and a later change arrives', async () => {
  // Watches ask for 1-2 s; a silent one is cut 300 ms after that.
  const started = startSource(client, {
    kinds: ['Service'],
    timing: { ...FAST_TIMING, watchTimeoutSeconds: 1, stallMarginMs: 300 },
  });
  source = started.source;
  const { store } = started;
  await source.start();
  await store.whenSynced();
  await eventually('both watches are open', () => server.openWatches >= 2);
  server.stallWatches();
  server.put(service('default', 'after-stall'));
  await eventually(
    'the change made while the watch was stalled arrives',
    () => store.get('Service', 'default', 'after-stall') !== undefined,
    8_000,
  );
  expect(source.status().Service?.stalledWatches).toBeGreaterThanOrEqual(1);
  // Resumed from its resourceVersion: the stall cost no re-list.
  expect(server.requests.filter((r) => r.verb === 'list' && r.resource === 'services')).toHaveLength(1);
});

test("watches ask for timeouts spread over client-go's [5 min, 10 min)", async () => {
  const started = startSource(client, { timing: { ...FAST_TIMING, watchTimeoutSeconds: MIN_WATCH_TIMEOUT_SECONDS } });
  source = started.source;
  await source.start();
  await started.store.whenSynced();
  await eventually('every kind watches', () => server.openWatches >= 12);
  const timeouts = server.watchTimeouts().map((w) => w.timeoutSeconds);
  for (const t of timeouts) {
    expect(t).toBeGreaterThanOrEqual(300);
    expect(t).toBeLessThan(600);
  }
  expect(new Set(timeouts).size).toBeGreaterThan(1);
});

test('randomWatchTimeoutSeconds stays in [min, 2*min) at both ends of the random range', () => {
  expect(randomWatchTimeoutSeconds(300, () => 0)).toBe(300);
  expect(randomWatchTimeoutSeconds(300, () => 0.5)).toBe(450);
  expect(randomWatchTimeoutSeconds(300, () => 0.999999999)).toBe(599);
  expect(MIN_WATCH_TIMEOUT_SECONDS).toBe(300);
});

test('by default a watch asks for at least 5 min and is cut 30 s after its timeout when silent', () => {
  expect(WATCH_STALL_MARGIN_MS).toBe(30_000);
  expect(DEFAULT_WATCH_TIMING).toMatchObject({
    watchTimeoutSeconds: MIN_WATCH_TIMEOUT_SECONDS,
    stallMarginMs: WATCH_STALL_MARGIN_MS,
  });
});
