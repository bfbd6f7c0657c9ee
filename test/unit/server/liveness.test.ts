// /live fails only when the event loop has stopped turning for LIVENESS_MAX_LAG_MS: a busy loop
// that still turns, as during a long cold start, stays live.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventLoopLiveness, LIVENESS_MAX_LAG_MS, LIVENESS_SAMPLE_MS } from '../../../src/server/liveness';
import { httpHandler, LIVE_PATH } from '../../../src/server/http';
import { ReadinessTracker } from '../../../src/server/readiness';

/** A clock the test moves, and a liveness sampling on it (the test calls sample() as the timer would). */
function clocked() {
  let t = 0;
  const liveness = new EventLoopLiveness({ now: () => t });
  return { liveness, advance: (ms: number) => void (t += ms) };
}

describe('EventLoopLiveness', () => {
  test('the threshold is far beyond any stall measured, and beyond the sampling period', () => {
    // BENCHMARKS.md's worst event-loop block ever measured was 7.7 s (a manifest load since split into turns).
    expect(LIVENESS_MAX_LAG_MS).toBeGreaterThanOrEqual(3 * 7_700);
    expect(LIVENESS_MAX_LAG_MS).toBeGreaterThan(10 * LIVENESS_SAMPLE_MS);
  });

  test('a loop whose timer fires on time is live', () => {
    const { liveness, advance } = clocked();
    for (let i = 0; i < 10; i++) {
      advance(LIVENESS_SAMPLE_MS);
      liveness.sample();
    }
    expect(liveness.status()).toEqual({ live: true, lagMs: 0 });
  });

  test('a busy loop that still turns (every sample seconds late, as under a heavy cold start) is live', () => {
    const { liveness, advance } = clocked();
    for (let i = 0; i < 100; i++) {
      advance(LIVENESS_SAMPLE_MS + 5_000);
      liveness.sample();
    }
    expect(liveness.status()).toEqual({ live: true, lagMs: 5_000 });
  });

  test('a sample later than the threshold fails, until the next sample on time', () => {
    const { liveness, advance } = clocked();
    advance(LIVENESS_SAMPLE_MS + LIVENESS_MAX_LAG_MS + 1);
    liveness.sample();
    expect(liveness.status()).toEqual({ live: false, lagMs: LIVENESS_MAX_LAG_MS + 1 });
    advance(LIVENESS_SAMPLE_MS);
    liveness.sample();
    expect(liveness.status().live).toBe(true);
  });

  test('asked before the late sample runs, the lag so far already counts', () => {
    const { liveness, advance } = clocked();
    advance(LIVENESS_SAMPLE_MS + LIVENESS_MAX_LAG_MS);
    expect(liveness.status()).toEqual({ live: true, lagMs: LIVENESS_MAX_LAG_MS });
    advance(1);
    expect(liveness.status()).toEqual({ live: false, lagMs: LIVENESS_MAX_LAG_MS + 1 });
  });

  test('refuses a threshold not above the sampling period', () => {
    expect(() => new EventLoopLiveness({ sampleMs: 100, maxLagMs: 100 })).toThrow(
      'maxLagMs (100) must exceed sampleMs (100) > 0',
    );
  });
});

describe(`GET ${LIVE_PATH} on a real event loop`, () => {
  // Small numbers so the test blocks the loop for well under a second.
  const SAMPLE_MS = 20;
  const MAX_LAG_MS = 200;
  let server: http.Server;
  let liveness: EventLoopLiveness;
  let base: string;

  beforeAll(async () => {
    liveness = new EventLoopLiveness({ sampleMs: SAMPLE_MS, maxLagMs: MAX_LAG_MS });
    liveness.start();
    server = http.createServer(
      httpHandler({ readiness: new ReadinessTracker(), liveness, debug: undefined, allowRemoteDebug: false }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    liveness.stop();
    await new Promise((resolve) => server.close(resolve));
  });

  const busyFor = (ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      // Holds the event loop, as a stuck handler would.
    }
  };
  const turn = () => new Promise((resolve) => setImmediate(resolve));

  test('answers 200 on an idle loop, and while the loop is busy but turning', async () => {
    expect((await fetch(`${base}${LIVE_PATH}`)).status).toBe(200);
    // 600 ms of work in 10 ms slices, the loop turning between them: three times the threshold in all.
    const work = (async () => {
      for (let i = 0; i < 60; i++) {
        busyFor(10);
        await turn();
      }
    })();
    const res = await fetch(`${base}${LIVE_PATH}`);
    await work;
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('live\n');
  });

  test('answers 503, naming the lag, right after the loop was held beyond the threshold', async () => {
    busyFor(MAX_LAG_MS * 2);
    const res = await fetch(`${base}${LIVE_PATH}`);
    expect(res.status).toBe(503);
    expect(await res.text()).toMatch(/^not live: the event loop has not turned for \d+ ms\n$/);
    // Turning again, it recovers at the next samples.
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS * 3));
    expect((await fetch(`${base}${LIVE_PATH}`)).status).toBe(200);
  });
});
