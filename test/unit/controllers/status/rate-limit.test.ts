// The status write rate limit: a token bucket of STATUS_WRITE_BURST refilled at STATUS_WRITE_QPS.

import { STATUS_WRITE_BURST, STATUS_WRITE_QPS, TokenBucket } from '../../../../src/controllers/status/rate-limit';

describe('status write rate limit', () => {
  test('the defaults are client-go’s controller rate limiter: 10 per second, bursts of 100', () => {
    expect([STATUS_WRITE_QPS, STATUS_WRITE_BURST]).toEqual([10, 100]);
  });

  test('a burst takes the bucket, then writes come at the sustained rate', () => {
    let now = 0;
    const bucket = new TokenBucket(STATUS_WRITE_QPS, STATUS_WRITE_BURST, () => now);
    let granted = 0;
    for (let i = 0; i < 1000; i++) if (bucket.tryTake() === 0) granted++;
    expect(granted).toBe(STATUS_WRITE_BURST);
    expect(bucket.tryTake()).toBe(100);
    // Over the next 10 s, tried every millisecond, exactly 10 per second more are granted.
    for (now = 1; now <= 10_000; now++) if (bucket.tryTake() === 0) granted++;
    expect(granted).toBe(STATUS_WRITE_BURST + 10 * STATUS_WRITE_QPS);
  });

  test('a quiet spell refills the bucket, never beyond the burst', () => {
    let now = 0;
    const bucket = new TokenBucket(5, 3, () => now);
    while (bucket.tryTake() === 0);
    now = 60_000;
    const granted = [1, 2, 3, 4].filter(() => bucket.tryTake() === 0).length;
    expect(granted).toBe(3);
  });

  test('a rate or burst that allows nothing is refused with what is wrong', () => {
    expect(() => new TokenBucket(0, 10)).toThrow('status write rate must be above 0 per second, got 0');
    expect(() => new TokenBucket(1, 0)).toThrow('status write burst must be at least 1, got 0');
  });
});
