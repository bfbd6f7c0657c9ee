import { backoffDelay, BACKOFF_JITTER } from '../../../src/store/kube/backoff';
import { DEFAULT_WATCH_TIMING, LIST_PAGE_SIZE } from '../../../src/store/kube/kind-watcher';
import { DEFAULT_WRITE_POLICY } from '../../../src/store/kube/writes';
import { ACQUIRE_JITTER, DEFAULT_LEADER_TIMING, validateTiming } from '../../../src/store/kube/leader';
import { MAX_RESPONSE_BYTES, REQUEST_TIMEOUT_MS } from '../../../src/store/kube/client';

const policy = { initialMs: 100, maxMs: 1_000 };

test('backoff doubles from the initial delay and stops at the maximum', () => {
  const mid = () => 0.5;
  expect([1, 2, 3, 4, 5, 10].map((n) => backoffDelay(n, policy, mid))).toEqual([100, 200, 400, 800, 1000, 1000]);
});

test('jitter keeps each delay within the jitter band', () => {
  expect(backoffDelay(1, policy, () => 0)).toBe(100 * (1 - BACKOFF_JITTER));
  expect(backoffDelay(1, policy, () => 1)).toBe(100 * (1 + BACKOFF_JITTER));
  expect(backoffDelay(20, policy, () => 1)).toBe(1000 * (1 + BACKOFF_JITTER));
});

test('the limits are the documented ones', () => {
  expect(LIST_PAGE_SIZE).toBe(500);
  expect(DEFAULT_WATCH_TIMING.backoff).toEqual({ initialMs: 500, maxMs: 30_000 });
  expect(DEFAULT_WATCH_TIMING.missingKindRetryMs).toBe(30_000);
  expect(DEFAULT_WRITE_POLICY).toEqual({
    timeoutMs: 10_000,
    maxAttempts: 5,
    conflictAttempts: 5,
    backoff: { initialMs: 200, maxMs: 5_000 },
  });
  expect(REQUEST_TIMEOUT_MS).toBe(10_000);
  expect(MAX_RESPONSE_BYTES).toBe(64 * 1024 * 1024);
  // istiod's retry period is a quarter of its 30 s lease (client-go's own default would be 5 s).
  expect(DEFAULT_LEADER_TIMING).toEqual({ leaseDurationMs: 30_000, renewDeadlineMs: 15_000, retryPeriodMs: 7_500 });
});

test('leader timings must leave the renew deadline below the lease and above the jittered retry', () => {
  expect(() => validateTiming(DEFAULT_LEADER_TIMING)).not.toThrow();
  expect(() => validateTiming({ leaseDurationMs: 10, renewDeadlineMs: 10, retryPeriodMs: 1 })).toThrow(
    /must exceed the renew deadline/,
  );
  expect(() =>
    validateTiming({ leaseDurationMs: 100, renewDeadlineMs: 50, retryPeriodMs: 50 / ACQUIRE_JITTER }),
  ).toThrow(/retry period/);
});
