import { Registry } from 'prom-client';
import { parseServeOptions, serveHelp } from '../../../src/config/options';
import { UsageError } from '../../../src/config/settings';
import { registerCaMetrics } from '../../../src/ca/metrics';
import { createNodeFairness, DENIAL_TRACKED_NODES, TOP_DENIED_NODES } from '../../../src/ca/node-fairness';

import { captureLogs } from '../../support/logs';
import { runCli } from '../../support/cli';

describe('CA fairness denials: counted by reason at once, logged once per interval', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test(`many denials make one log line per interval naming at most TOP_DENIED_NODES (${TOP_DENIED_NODES}) nodes, and a gauge for those nodes only`, async () => {
    const log = captureLogs();
    try {
      const metrics = registerCaMetrics(new Registry());
      const f = createNodeFairness({ metrics, workers: 1, ratePerSecond: 1, logIntervalMs: 1000 });
      const ok = () => Promise.resolve('ok');
      // 20 nodes spend their burst, then each is refused (node-0 most, node-19 least).
      for (let n = 0; n < 20; n++) {
        for (let i = 0; i < 110; i++) await f.queue.run(`node-${n}`, ok);
        for (let i = 0; i < 30 - n; i++)
          await expect(f.queue.run(`node-${n}`, ok)).rejects.toMatchObject({ reason: 'rate_limited' });
      }
      const refused = Array.from({ length: 20 }, (_, n) => 30 - n).reduce((a, b) => a + b, 0);
      expect((await metrics.fairnessDenials.get()).values).toEqual([
        expect.objectContaining({ labels: { reason: 'rate_limited' }, value: refused }),
      ]);
      expect(log.lines().filter((l) => l['scope'] === 'ca')).toHaveLength(0);
      jest.advanceTimersByTime(1000);
      const lines = log.lines().filter((l) => String(l['msg']).includes('per-node fairness'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ denied: { queue_full: 0, rate_limited: refused }, nodes: 20 });
      expect((lines[0]!['top'] as { node: string }[]).map((t) => t.node)).toEqual([
        'node-0',
        'node-1',
        'node-2',
        'node-3',
        'node-4',
      ]);
      const gauge = (await metrics.topDeniedNodes.get()).values;
      expect(gauge).toHaveLength(TOP_DENIED_NODES);
      expect(gauge[0]).toMatchObject({ labels: { node: 'node-0', reason: 'rate_limited' }, value: 30 });
      // A quiet interval logs nothing.
      jest.advanceTimersByTime(5000);
      expect(log.lines().filter((l) => String(l['msg']).includes('per-node fairness'))).toHaveLength(1);
      f.stop();
    } finally {
      log.restore();
    }
  });

  test(`distinct nodes counted per interval stop at DENIAL_TRACKED_NODES (${DENIAL_TRACKED_NODES}); the totals still count every denial`, async () => {
    const log = captureLogs();
    try {
      const metrics = registerCaMetrics(new Registry());
      const f = createNodeFairness({
        metrics,
        workers: 1,
        slots: 1,
        queueLimit: 0,
        ratePerSecond: 0,
        logIntervalMs: 1000,
      });
      let release!: () => void;
      const holder = f.queue.run('holder', () => new Promise<void>((r) => (release = r)));
      const noop = () => Promise.resolve(undefined);
      const n = DENIAL_TRACKED_NODES + 10;
      for (let i = 0; i < n; i++)
        await expect(f.queue.run(`caller-${i}`, noop)).rejects.toMatchObject({ reason: 'queue_full' });
      jest.advanceTimersByTime(1000);
      const line = log.lines().find((l) => String(l['msg']).includes('per-node fairness'))!;
      expect(line).toMatchObject({ denied: { queue_full: n, rate_limited: 0 }, nodes: `${DENIAL_TRACKED_NODES}+` });
      release();
      await holder;
      f.stop();
    } finally {
      log.restore();
    }
  });
});

describe('CA_NODE_RATE_LIMIT setting', () => {
  test('defaults to 0 (off) and reads a whole number of certificates per second', () => {
    expect(parseServeOptions([], {}).env.CA_NODE_RATE_LIMIT).toBe(0);
    expect(parseServeOptions([], { CA_NODE_RATE_LIMIT: '50' }).env.CA_NODE_RATE_LIMIT).toBe(50);
  });

  test.each([
    ['-1', 'invalid value for env CA_NODE_RATE_LIMIT: must be 0 (off) or a positive number of certificates per second'],
    ['fast', 'invalid value for env CA_NODE_RATE_LIMIT: "fast" is not an integer'],
    ['1.5', 'invalid value for env CA_NODE_RATE_LIMIT: "1.5" is not an integer'],
  ])('%s is a usage error naming the variable', (value, message) => {
    expect(() => parseServeOptions([], { CA_NODE_RATE_LIMIT: value })).toThrow(UsageError);
    expect(() => parseServeOptions([], { CA_NODE_RATE_LIMIT: value })).toThrow(message);
  });

  test('--help lists it with its default', () => {
    expect(serveHelp()).toMatch(/CA_NODE_RATE_LIMIT\s+.*\(default "0"\)/);
  });

  test('a bad value makes `istiod-ts serve` exit 2 with one line naming the variable', () => {
    const r = runCli([], { CA_NODE_RATE_LIMIT: '-5' });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'istiod-ts: invalid value for env CA_NODE_RATE_LIMIT: must be 0 (off) or a positive number of certificates per second',
    ]);
  });
});
