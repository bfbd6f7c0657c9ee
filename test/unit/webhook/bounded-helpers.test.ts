// The helpers that replaced quadratic, recursive or otherwise unbounded code give the answers
// the old code gave: the list-at-once host checks agree with istiod's pairwise definitions, and
// the rest agree with the plain algorithms they stand in for.

import {
  CANONICAL_RECURSION_DEPTH,
  canonicalJson,
  canonicalJsonDeep,
} from '../../../src/webhook/validators/common/canonical-json';
import { parseGoDuration } from '../../../src/webhook/validators/common/durations';
import {
  hostsOverlap,
  hostSubsetOf,
  lowestOverlapping,
  subsetOfSome,
} from '../../../src/webhook/validators/common/host-sets';
import { RepeatFinder } from '../../../src/webhook/validators/common/repeats';
import { pathTemplateError } from '../../../src/webhook/validators/authorization-policy';
import { validateConfig } from '../../../src/webhook/validators/registry';
import { isPrime, MAGLEV_TABLE_SIZE_LIMIT } from '../../../src/webhook/validators/traffic-policy';
import { deepObject } from '../../support/webhook/hostile-input';

/** A small deterministic generator (mulberry32), so a failure names a reproducible seed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Hosts over a tiny alphabet, so that equal names, shared suffixes and wildcards are common. */
function hostList(rand: () => number, n: number): string[] {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  return Array.from({ length: n }, () => {
    const labels = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => pick(['a', 'b', 'ab', 'ba', 'b-a']));
    const name = labels.join('.');
    return pick(['', '', '*', '*.', '*-', '*a']) + name + (rand() < 0.1 ? '' : '.io');
  }).concat(rand() < 0.2 ? ['*'] : []);
}

describe('host lists', () => {
  test('lowestOverlapping names, for each host, the lowest other index pairwise Matches finds', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const hosts = hostList(random(seed), 1 + (seed % 25));
      const expected = hosts.map((h, i) => hosts.findIndex((o, j) => j !== i && hostsOverlap(h, o)));
      expect({ seed, hosts, partners: lowestOverlapping(hosts) }).toEqual({ seed, hosts, partners: expected });
    }
  });

  test('subsetOfSome says, for each candidate, whether pairwise SubsetOf holds for some host', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const rand = random(seed);
      const hosts = hostList(rand, 1 + (seed % 12));
      const candidates = hostList(rand, 1 + (seed % 17));
      const expected = candidates.map((c) => hosts.some((h) => hostSubsetOf(c, h)));
      expect({ seed, hosts, candidates, covered: subsetOfSome(candidates, hosts) }).toEqual({
        seed,
        hosts,
        candidates,
        covered: expected,
      });
    }
  });

  test('lists without wildcards agree too (they take the equality-only path)', () => {
    for (let seed = 1; seed <= 100; seed++) {
      const rand = random(seed);
      const hosts = hostList(rand, 1 + (seed % 30)).map((h) => h.replace(/^\*[-a]?\.?/, ''));
      const candidates = hostList(rand, 10).map((h) => (rand() < 0.5 ? h.replace(/^\*[-a]?\.?/, '') : h));
      expect(lowestOverlapping(hosts)).toEqual(
        hosts.map((h, i) => hosts.findIndex((o, j) => j !== i && hostsOverlap(h, o))),
      );
      expect(subsetOfSome(candidates, hosts)).toEqual(candidates.map((c) => hosts.some((h) => hostSubsetOf(c, h))));
    }
  });

  test('a list with no overlaps has no partners', () => {
    expect(lowestOverlapping(['a.io', 'b.io', '*.c.io'])).toEqual([-1, -1, -1]);
  });
});

describe('repeats', () => {
  test('a value repeated many times is a new repeat exactly once', () => {
    const finder = new RepeatFinder<string>();
    const flags = ['a', 'b', 'a', 'a', 'b', 'c', 'a'].map((v) => finder.isNewRepeat(v));
    expect(flags).toEqual([false, false, true, false, true, false, false]);
  });
});

describe('canonical JSON', () => {
  test('equal values with keys in any order give equal text, different lists do not', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, 2], c: null } })).toBe('{"a":{"c":null,"d":[1,2]},"b":1}');
    expect(canonicalJson({ a: { c: null, d: [1, 2] }, b: 1 })).toBe(canonicalJson({ b: 1, a: { d: [1, 2], c: null } }));
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
    expect(canonicalJson([undefined, 'x'])).toBe('[null,"x"]');
  });

  test('a value nested 100,000 levels is written without recursion', () => {
    const text = canonicalJson(deepObject(100_000));
    expect(text.length).toBe('{"a":'.length * 100_000 + 1 + 100_000);
  });

  /** A random JSON value: objects with keys in random order (some repeated across levels), arrays, primitives. */
  function randomJson(next: () => number, depth: number): unknown {
    const pick = next();
    if (depth <= 0 || pick < 0.3) {
      const prims = [null, true, false, 0, -1.5, 1e21, 'x', '', 'a"b\\c', '\u2028', 'ü', '10'];
      return prims[Math.floor(next() * prims.length)];
    }
    if (pick < 0.5) return Array.from({ length: Math.floor(next() * 4) }, () => randomJson(next, depth - 1));
    const keys = ['name', 'b', 'a', 'B', '10', '2', 'é', 'uri', 'headers', '__proto__', ''];
    const o: Record<string, unknown> = {};
    for (let n = Math.floor(next() * 5); n > 0; n--) {
      const k = keys[Math.floor(next() * keys.length)] as string;
      Object.defineProperty(o, k, {
        value: randomJson(next, depth - 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return o;
  }

  /** `v` (an object) nested `levels` more levels under arrays and objects. */
  const bury = (v: unknown, levels: number): unknown => {
    let out = v;
    for (let i = 0; i < levels; i++) out = i % 2 ? [out, 1] : { z: out, a: 2 };
    return out;
  };

  test("the recursive writer gives the stack-based writer's text for random values, shallow and deep", () => {
    for (let seed = 1; seed <= 2_000; seed++) {
      const next = random(seed);
      const shallow = randomJson(next, 6);
      expect([seed, canonicalJson(shallow)]).toEqual([seed, canonicalJsonDeep(shallow)]);
      // Past the recursion bound the stack-based writer takes over; at it, the recursive one.
      for (const levels of [CANONICAL_RECURSION_DEPTH - 8, CANONICAL_RECURSION_DEPTH + 8]) {
        const deep = bury(shallow, levels);
        expect([seed, canonicalJson(deep)]).toEqual([seed, canonicalJsonDeep(deep)]);
      }
    }
  });

  test('omitting a top-level key gives the text of the object copied without it, shallow and deep', () => {
    for (let seed = 1; seed <= 2_000; seed++) {
      const next = random(seed);
      const value = { name: 'n', ...(randomJson(next, 5) as object), deep: bury({ name: 'kept' }, seed % 3 ? 4 : 80) };
      const { name: _name, ...rest } = value as Record<string, unknown>;
      expect([seed, canonicalJson(value, 'name')]).toEqual([seed, canonicalJsonDeep(rest)]);
    }
    expect(canonicalJson({ name: 'x', a: { name: 'y' } }, 'name')).toBe('{"a":{"name":"y"}}');
  });
});

describe('durations with digit strings of any length', () => {
  test('a whole part of a million digits is out of range, as in Go', () => {
    expect(parseGoDuration(`${'9'.repeat(1_000_000)}s`)).toBeUndefined();
  });

  test('leading zeros do not count against the range', () => {
    expect(parseGoDuration(`${'0'.repeat(1_000_000)}5s`)).toBe(5_000_000_000n);
  });

  test('a fraction of a million digits is read to the nanosecond', () => {
    expect(parseGoDuration(`1.${'5'.repeat(1_000_000)}s`)).toBe(1_555_555_555n);
  });
});

describe('AuthorizationPolicy path templates', () => {
  test('leading and trailing slashes are trimmed in one pass, even in a path of 200,000 slashes', () => {
    // The old /\/+$/ tried every slash of the middle run as the start of a trailing run.
    const path = `///x{y}${'/'.repeat(200_000)}z///`;
    expect(pathTemplateError(path)).toMatch(
      /^invalid or unsupported path x\{y\}\/{200000}z: contains '\{' or '\}' beyond a supported path template$/,
    );
  });
});

describe('maglev table sizes', () => {
  const trialDivision = (x: number) => {
    if (x < 4) return x !== 0;
    for (let f = 2; f * f <= x; f++) if (x % f === 0) return false;
    return true;
  };

  test('the sieve agrees with trial division below 100,000 and just under the limit', () => {
    const ranges = [
      [0, 100_000],
      [MAGLEV_TABLE_SIZE_LIMIT - 2_000, MAGLEV_TABLE_SIZE_LIMIT],
    ] as const;
    for (const [from, to] of ranges)
      for (let x = from; x < to; x++) expect([x, isPrime(x)]).toEqual([x, trialDivision(x)]);
    expect(isPrime(MAGLEV_TABLE_SIZE_LIMIT)).toBe(false);
  });

  test('a size over the limit gets the limit error alone, without trial division up to 2^26.5', () => {
    // 94,906,249 * 94,906,247: trial division used to take over a second to find it composite.
    const spec = {
      host: 'a.b',
      trafficPolicy: {
        loadBalancer: { consistentHash: { useSourceIp: true, maglev: { tableSize: 9_007_195_909_437_503 } } },
      },
    };
    const verdict = validateConfig({
      apiVersion: 'networking.istio.io/v1',
      kind: 'DestinationRule',
      metadata: { name: 'x', namespace: 'ns' },
      spec,
    });
    if (verdict.outcome !== 'validated') throw new Error(verdict.outcome);
    expect(verdict.result.errors).toEqual([
      {
        path: 'spec.trafficPolicy.loadBalancer.consistentHash.maglev.tableSize',
        message: 'tableSize must be less than 5000011 for maglev',
      },
    ]);
  });
});
