// One allocation range: next-fit from the address after the network address, wrapping once,
// with a named error when every address is taken.

import { PrefixExhaustedError, PrefixPool, ipText, readIp } from '../../../../src/controllers/ipallocate/prefix-pool';
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

  test('a freed address below the cursor is the next one handed out; the walk wraps past the end', () => {
    const pool = new PrefixPool('240.240.0.0/30');
    const [a, b] = [pool.allocate('a'), pool.allocate('b')];
    pool.free(a, 'a');
    expect(ipText(pool.allocate('c'))).toBe('240.240.0.1');
    pool.allocate('d'); // .3
    pool.free(b, 'b');
    expect(ipText(pool.allocate('e'))).toBe('240.240.0.2');
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
