import { ADDRESS_TYPE_URL } from '../../../src/contract/xds-resources';
import {
  CacheDigests,
  DIGEST_CONSTANTS as K,
  RUN_WINDOW_BYTES,
  VersionDigest,
  bytesView,
  digestEntryIn,
  digestEntryRun,
  digestMap,
  digestStrings,
  emptyDigest,
  sameDigest,
} from '../../../src/xds/wire/version-digest';
import { FakeCache } from '../../support/xds/fake-cache';

const map = (entries: Record<string, string>) => new Map(Object.entries(entries));

test('the digest does not depend on the order of the entries', () => {
  expect(sameDigest(digestMap(map({ a: '1', b: '2', c: '3' })), digestMap(map({ c: '3', a: '1', b: '2' })))).toBe(true);
});

test('raw UTF-8 bytes and strings give the same digest, non-ASCII names included', () => {
  const names = ['Kubernetes//Pod/ns/a', 'ns/ünïcødé-名前', 'x'.repeat(700)];
  const fromStrings = emptyDigest();
  const fromBytes = emptyDigest();
  for (const n of names) {
    digestStrings(fromStrings, n, 'v1');
    const bytes = Buffer.from(n + 'v1', 'utf8');
    const nameLen = Buffer.byteLength(n);
    digestEntryIn(fromBytes, bytesView(bytes), 0, nameLen, nameLen, bytes.length, 1);
  }
  expect(fromBytes).toEqual(fromStrings);
});

describe('any difference in the set changes the digest', () => {
  const base = { a: '1', b: '2', c: '3' };
  const cases: [string, Record<string, string>][] = [
    ['a changed version', { a: '1', b: '2', c: '4' }],
    ['a missing entry', { a: '1', b: '2' }],
    ['an extra entry', { a: '1', b: '2', c: '3', d: '4' }],
    ['a renamed entry', { a: '1', b: '2', cc: '3' }],
    ['versions swapped between names', { a: '2', b: '1', c: '3' }],
    ['an empty version', { a: '1', b: '2', c: '' }],
  ];
  test.each(cases)('%s', (_, other) => {
    expect(sameDigest(digestMap(map(base)), digestMap(map(other)))).toBe(false);
  });

  test('the boundary between name and version counts ("ab"+"c" is not "a"+"bc")', () => {
    expect(sameDigest(digestMap(map({ ab: 'c' })), digestMap(map({ a: 'bc' })))).toBe(false);
  });

  test('a name listed twice in place of another is not the same set (sums do not cancel)', () => {
    const twice = emptyDigest();
    digestStrings(twice, 'a', '1');
    digestStrings(twice, 'a', '1');
    const pair = digestMap(map({ a: '1', b: '1' }));
    expect(twice.count).toBe(pair.count);
    expect(sameDigest(twice, pair)).toBe(false);
  });
});

test('removing an entry undoes adding it', () => {
  const d = digestMap(map({ a: '1', b: '2' }));
  digestStrings(d, 'c', '3');
  digestStrings(d, 'c', '3', -1);
  expect(d).toEqual(digestMap(map({ a: '1', b: '2' })));
});

describe('CacheDigests', () => {
  const current = (cache: FakeCache): VersionDigest => {
    const m = new Map<string, string>();
    for (const r of cache.all(ADDRESS_TYPE_URL)) m.set(r.name, r.version);
    return digestMap(m);
  };

  test('follows every change set: added, changed and removed names', () => {
    const cache = new FakeCache();
    cache
      .setWorkload({ uid: 'w1', ip: '10.0.0.1', node: 'n1' })
      .setWorkload({ uid: 'w2', ip: '10.0.0.2', node: 'n1' })
      .commit();
    const digests = new CacheDigests(cache, [ADDRESS_TYPE_URL]);
    cache.subscribe((changes) => digests.apply(changes));
    expect(digests.get(ADDRESS_TYPE_URL)).toEqual(current(cache));

    cache.setWorkload({ uid: 'w3', ip: '10.0.0.3', node: 'n2' }).commit();
    expect(digests.get(ADDRESS_TYPE_URL)).toEqual(current(cache));
    cache.setWorkload({ uid: 'w1', ip: '10.0.0.1', node: 'n1', label: 'changed' }).commit();
    expect(digests.get(ADDRESS_TYPE_URL)).toEqual(current(cache));
    cache.delete(ADDRESS_TYPE_URL, 'w2').commit();
    expect(digests.get(ADDRESS_TYPE_URL)).toEqual(current(cache));
    expect(digests.get(ADDRESS_TYPE_URL)!.count).toBe(2);
  });

  test('a change set naming an unchanged resource leaves the digest as it was', () => {
    const cache = new FakeCache();
    cache.setWorkload({ uid: 'w1', ip: '10.0.0.1', node: 'n1' }).commit();
    const digests = new CacheDigests(cache, [ADDRESS_TYPE_URL]);
    const before = { ...digests.get(ADDRESS_TYPE_URL)! };
    digests.apply([{ typeUrl: ADDRESS_TYPE_URL, updated: ['w1', 'never-existed'], removed: ['also-never'] }]);
    expect(digests.get(ADDRESS_TYPE_URL)).toEqual(before);
  });

  test('types it was not built for have no digest', () => {
    const digests = new CacheDigests(new FakeCache(), [ADDRESS_TYPE_URL]);
    expect(digests.get('type.googleapis.com/other')).toBeUndefined();
  });
});

// The definition in version-digest.ts's comment, transcribed with BigInt: what the WebAssembly
// module must compute.
const M64 = (1n << 64n) - 1n;

function varint(n: number): number[] {
  const out: number[] = [];
  for (; n >= 0x80; n >>>= 7) out.push((n & 0x7f) | 0x80);
  out.push(n);
  return out;
}

/** The canonical map-entry encoding of (name, version). */
function canonical(name: string, version: string): Buffer {
  const n = Buffer.from(name, 'utf8');
  const v = Buffer.from(version, 'utf8');
  return Buffer.concat([Buffer.from([0x0a, ...varint(n.length)]), n, Buffer.from([0x12, ...varint(v.length)]), v]);
}

function referenceDigest(entries: [string, string][]): VersionDigest {
  const d = emptyDigest();
  const fmix = (h: bigint): bigint => {
    h ^= h >> 33n;
    h = (h * K.fmix1) & M64;
    h ^= h >> 33n;
    h = (h * K.fmix2) & M64;
    return h ^ (h >> 33n);
  };
  for (const [name, version] of entries) {
    const bytes = canonical(name, version);
    let a: bigint = K.seedA;
    let b: bigint = K.seedB;
    const step = (k: bigint): void => {
      a = ((a ^ k) * K.mulA) & M64;
      a ^= a >> K.shiftA;
      b = ((b ^ k) * K.mulB) & M64;
      b ^= b >> K.shiftB;
    };
    let i = 0;
    for (; i + 8 <= bytes.length; i += 8) step(bytes.readBigUInt64LE(i));
    let k = 0n;
    for (let s = 0n; i < bytes.length; i++, s += 8n) k |= BigInt(bytes[i]!) << s;
    step(k ^ ((BigInt(bytes.length) * K.mulLength) & M64));
    a = fmix(a);
    b = fmix(b);
    d.a = (d.a + Number(a & 0xffffffffn)) >>> 0;
    d.b = (d.b + Number(a >> 32n)) >>> 0;
    d.c = (d.c + Number(b & 0xffffffffn)) >>> 0;
    d.d = (d.d + Number(b >> 32n)) >>> 0;
    d.count++;
  }
  return d;
}

/** Deterministic names and versions of every length from 0 to 300 bytes, some not ASCII. */
function sampleEntries(): [string, string][] {
  const out: [string, string][] = [];
  let seed = 12345;
  const rand = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % n;
  for (let len = 0; len <= 300; len++) {
    let name = '';
    for (let i = 0; i < len; i++) name += String.fromCharCode(rand(10) === 0 ? 0xe9 + rand(400) : 0x21 + rand(90));
    out.push([name, (len * 7919).toString(16).padStart(rand(20), '0')]);
  }
  return out;
}

describe('the WebAssembly hashing computes the definition', () => {
  const entries = sampleEntries();

  test('for strings (the cache side)', () => {
    const d = emptyDigest();
    for (const [n, v] of entries) digestStrings(d, n, v);
    expect(d).toEqual(referenceDigest(entries));
  });

  test("for a request's entries walked in place, wherever the windows cut them", () => {
    const short = entries.filter(([n, v]) => canonical(n, v).length < 0x80);
    const request = Buffer.concat(
      short.map(([n, v]) => Buffer.concat([Buffer.from([0x2a, canonical(n, v).length]), canonical(n, v)])),
    );
    const d = emptyDigest();
    expect(digestEntryRun(d, request, 0, request.length)).toBe(request.length);
    expect(d).toEqual(referenceDigest(short));
    // Cut at every offset: the run stops at the entry the cut splits, and the rest carries on from there.
    for (let cut = 0; cut < request.length; cut += 7) {
      const parts = emptyDigest();
      const stop = digestEntryRun(parts, request, 0, cut);
      expect(stop).toBeLessThanOrEqual(cut);
      expect(digestEntryRun(parts, request, stop, request.length)).toBe(request.length);
      expect(parts).toEqual(d);
    }
  });

  test("for a run longer than the module's memory window, copied in a window at a time", () => {
    const many: [string, string][] = [];
    for (let i = 0; i < 5_000; i++) many.push([`Kubernetes//Pod/ns-${i % 10}/app-${i}`, `v${i}-0123456789abcdef`]);
    const request = Buffer.concat(
      many.map(([n, v]) => Buffer.concat([Buffer.from([0x2a, canonical(n, v).length]), canonical(n, v)])),
    );
    expect(request.length).toBeGreaterThan(RUN_WINDOW_BYTES);
    const d = emptyDigest();
    expect(digestEntryRun(d, request, 0, request.length)).toBe(request.length);
    expect(d).toEqual(referenceDigest(many));
  });

  test('for entries given as name and version ranges, written in any order', () => {
    const d = emptyDigest();
    for (const [n, v] of entries) {
      // The version first, then the name, with a byte between them.
      const bytes = Buffer.concat([Buffer.from(v), Buffer.from([0xff]), Buffer.from(n)]);
      const vEnd = Buffer.byteLength(v);
      digestEntryIn(d, bytesView(bytes), vEnd + 1, bytes.length, 0, vEnd, 1);
    }
    expect(d).toEqual(referenceDigest(entries));
  });
});

describe('digestEntryRun stops, for the caller to read, at', () => {
  const entry = (payload: number[]) => [0x2a, payload.length, ...payload];
  const good = entry([0x0a, 1, 0x61, 0x12, 1, 0x31]);
  const cases: [string, number[]][] = [
    ['another field', [0x32, 1, 0x61]],
    ['an entry with a two-byte length', [0x2a, 0x80, 0x01]],
    ['the version before the name', entry([0x12, 1, 0x31, 0x0a, 1, 0x61])],
    ['an entry without a version (as prost writes an empty one)', entry([0x0a, 1, 0x61])],
    ['an empty entry', entry([])],
    ['a name length running past the entry', entry([0x0a, 5, 0x61, 0x12, 0])],
    ['a version length that does not end the entry', entry([0x0a, 1, 0x61, 0x12, 0, 0x00])],
    ['an entry cut by the end', good.slice(0, -1)],
  ];
  test.each(cases)('%s', (_, bytes) => {
    const buf = Buffer.from([...good, ...bytes, ...good]);
    const d = emptyDigest();
    expect(digestEntryRun(d, buf, 0, good.length + bytes.length)).toBe(good.length);
    expect(d).toEqual(referenceDigest([['a', '1']]));
  });
});
