// One allocation range: never-used addresses first, from the address after the network address;
// freed ones only after their quarantine, oldest first; a named error when none is left.

import {
  IP_ALLOCATE_QUARANTINE_MS,
  PrefixExhaustedError,
  PrefixPool,
  ipText,
  readIp,
} from '../../../../src/controllers/ipallocate/prefix-pool';
import { addressesPatch } from '../../../../src/controllers/ipallocate/status-writer';

const ip = (text: string) => readIp(text)!;

describe('PrefixPool', () => {
  test('hands out from the address after the network address, next-fit, and the last address too', () => {
    const pool = new PrefixPool('240.240.0.0/30');
    expect([1, 2, 3].map(() => ipText(pool.allocate('a')))).toEqual(['240.240.0.1', '240.240.0.2', '240.240.0.3']);
    expect(pool.capacity).toBe(3n);
  });

  test('when every address is taken it throws PrefixExhaustedError naming the range', () => {
    const pool = new PrefixPool('240.240.0.0/31');
    pool.allocate('a');
    expect(() => pool.allocate('b')).toThrow(PrefixExhaustedError);
    expect(() => pool.allocate('b')).toThrow('auto-allocation range 240.240.0.0/31 is exhausted');
    expect(() => new PrefixPool('240.240.0.1/32').allocate('a')).toThrow(PrefixExhaustedError);
  });

  test('never-used addresses go first: a freed address is not handed out while any never-used one is left', () => {
    const pool = new PrefixPool('240.240.0.0/29', { quarantineMs: 0 });
    const a = pool.allocate('a');
    pool.free(a, 'a');
    expect(ipText(pool.allocate('b'))).toBe('240.240.0.2');
    expect(ipText(pool.allocate('c'))).toBe('240.240.0.3');
  });

  test(`a freed address stays in quarantine for IP_ALLOCATE_QUARANTINE_MS (${IP_ALLOCATE_QUARANTINE_MS} ms) by default, then is reused oldest-freed first`, () => {
    let now = 1_000;
    const pool = new PrefixPool('240.240.0.0/30', { now: () => now });
    const [a, b, c] = [pool.allocate('a'), pool.allocate('b'), pool.allocate('c')];
    pool.free(b, 'b');
    now += 10;
    pool.free(a, 'a');
    expect(pool.freedCount).toBe(2);
    expect(pool.nextReuseAt()).toBe(1_000 + IP_ALLOCATE_QUARANTINE_MS);
    now += IP_ALLOCATE_QUARANTINE_MS - 11;
    expect(() => pool.allocate('d')).toThrow(PrefixExhaustedError);
    expect(() => pool.allocate('d')).toThrow('in use or in quarantine (2 freed, not yet reusable)');
    now += 1;
    expect(ipText(pool.allocate('d'))).toBe('240.240.0.2'); // freed first
    expect(() => pool.allocate('e')).toThrow(PrefixExhaustedError);
    now += 10;
    expect(ipText(pool.allocate('e'))).toBe('240.240.0.1');
    expect(pool.ownerOf(c)).toBe('c');
    expect(pool.freedCount).toBe(0);
  });

  test('the quarantine is configurable and must be a duration', () => {
    let now = 0;
    const pool = new PrefixPool('240.240.0.0/31', { quarantineMs: 50, now: () => now });
    const a = pool.allocate('a');
    pool.free(a, 'a');
    expect(() => pool.allocate('b')).toThrow(PrefixExhaustedError);
    now = 50;
    expect(ipText(pool.allocate('b'))).toBe('240.240.0.1');
    expect(() => new PrefixPool('240.240.0.0/16', { quarantineMs: -1 })).toThrow(
      'the address quarantine must be a duration of 0 ms or more, not -1',
    );
  });

  test('a freed address claimed again (an entry still carries it) is in use and out of quarantine', () => {
    const pool = new PrefixPool('240.240.0.0/30', { quarantineMs: 0 });
    const a = pool.allocate('a');
    pool.free(a, 'a');
    expect(pool.claim(a, 'a')).toBeUndefined();
    expect(pool.freedCount).toBe(0);
    expect(ipText(pool.allocate('b'))).toBe('240.240.0.2');
    expect(ipText(pool.allocate('c'))).toBe('240.240.0.3');
    expect(() => pool.allocate('d')).toThrow(PrefixExhaustedError);
  });

  test('a freed address ahead of the cursor is skipped by the walk and reused only after quarantine', () => {
    let now = 0;
    const pool = new PrefixPool('240.240.0.0/30', { quarantineMs: 5, now: () => now });
    expect(pool.claim(ip('240.240.0.2'), 'x')).toBeUndefined(); // read from a status
    pool.free(ip('240.240.0.2'), 'x');
    expect(ipText(pool.allocate('a'))).toBe('240.240.0.1');
    expect(ipText(pool.allocate('b'))).toBe('240.240.0.3');
    expect(() => pool.allocate('c')).toThrow(PrefixExhaustedError);
    now = 5;
    expect(ipText(pool.allocate('c'))).toBe('240.240.0.2');
  });

  test('only the holder frees an address; claims by another are reported as its holder', () => {
    const pool = new PrefixPool('240.240.0.0/16');
    expect(pool.claim(ip('240.240.0.9'), 'a')).toBeUndefined();
    expect(pool.claim(ip('240.240.0.9'), 'b')).toBe('a');
    pool.free(ip('240.240.0.9'), 'b');
    expect(pool.ownerOf(ip('240.240.0.9'))).toBe('a');
    expect(pool.claim(ip('10.0.0.1'), 'b')).toBeUndefined(); // outside the range: not tracked
    expect(pool.size).toBe(1);
  });

  test('IPv6 ranges: canonical text, and an unmasked prefix counts from its network address', () => {
    const pool = new PrefixPool('2001:2::/48');
    expect(ipText(pool.allocate('a'))).toBe('2001:2::1');
    expect(pool.capacity).toBe((1n << 80n) - 1n);
    expect(ipText(new PrefixPool('240.240.7.7/16').allocate('a'))).toBe('240.240.0.1');
  });

  test('an IPv4-mapped IPv6 address reads as the IPv4 address, as istiod unmaps it', () => {
    expect(readIp('::ffff:240.240.0.1')).toEqual(readIp('240.240.0.1'));
    expect(readIp('not-an-ip')).toBeUndefined();
  });
});

describe('the status.addresses JSON patch', () => {
  const addresses = [{ value: '240.240.0.1', host: 'a.example.com' }];
  const meta = { name: 'a', namespace: 'default' };

  test('with a status: test status.addresses as read (null when absent), then replace it', () => {
    expect(addressesPatch({ metadata: meta, status: { conditions: [] } }, addresses)).toEqual([
      { op: 'test', path: '/status/addresses', value: null },
      { op: 'replace', path: '/status/addresses', value: addresses },
    ]);
    const old = [{ value: '240.240.0.9', host: 'a.example.com' }];
    expect(addressesPatch({ metadata: meta, status: { addresses: old } }, [])).toEqual([
      { op: 'test', path: '/status/addresses', value: old },
      { op: 'replace', path: '/status/addresses', value: [] },
    ]);
  });

  test('without a status: test that it is still absent, add it, add the addresses', () => {
    expect(addressesPatch({ metadata: meta }, addresses)).toEqual([
      { op: 'test', path: '/status', value: null },
      { op: 'add', path: '/status', value: {} },
      { op: 'add', path: '/status/addresses', value: addresses },
    ]);
  });
});
