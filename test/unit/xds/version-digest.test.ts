import { ADDRESS_TYPE_URL } from '../../../src/contract/xds-resources';
import {
  CacheDigests,
  VersionDigest,
  bytesView,
  digestEntryIn,
  digestMap,
  digestStrings,
  emptyDigest,
  sameDigest,
} from '../../../src/xds/version-digest';
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
