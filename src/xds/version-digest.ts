// An order-independent digest of (name, version) pairs. A reconnecting ztunnel lists every name it
// holds in initial_resource_versions (100k entries, ~5.6 MB); when nothing changed, decoding 200k
// strings and looking each one up only to find nothing to send costs far more than receiving the
// bytes. The request decoder digests the raw entry bytes without making strings, the server keeps
// the same digest of its cache up to date with every change set, and equal digests (and counts)
// mean the client holds exactly the current set. Any difference falls back to the exact per-name
// comparison, so a mismatch only costs time.
//
// Each entry is hashed into two 32-bit lanes (multiply / xor-shift mixing with different
// constants, lengths included so name/version boundaries count, a murmur3 finalizer per lane), and
// the entry hashes are summed per lane modulo 2^32. Sums, unlike XOR, do not cancel a repeated
// entry, so a request that lists one name twice and omits another still differs. An accidental
// match of two different sets needs both 32-bit sums and the count to agree (about 2^-64 for
// unrelated sets).

import type { ChangeSet, ResourceCache, XdsResource, XdsTypeUrl } from '../contract/xds-resources';

export interface VersionDigest {
  count: number;
  a: number;
  b: number;
}

export function emptyDigest(): VersionDigest {
  return { count: 0, a: 0, b: 0 };
}

export function sameDigest(x: VersionDigest, y: VersionDigest): boolean {
  return x.count === y.count && x.a === y.a && x.b === y.b;
}

// Lane states while one entry is being hashed (module-level so hashing allocates nothing).
let laneA = 0;
let laneB = 0;

const SEED_A = 0x9747b28c;
const SEED_B = 0x5bd1e995;

/**
 * The view the hashing reads a buffer through: one little-endian 32-bit load per 4-byte block.
 * Callers make it once per buffer (a request's 100k entries share one) and pass it down. The
 * hashing functions see nothing else, so the code V8 optimizes while CacheDigests digests the
 * cache at start (through the scratch buffer's view) is the code a request's entries run: a view
 * made inside the hashing, on the first entry of each new request's buffer, deoptimized it on
 * every request (a branch without type feedback), and the first five reconnects of a bench run
 * each spent 26-36 ms instead of 6 in the decoder.
 */
export function bytesView(buf: Uint8Array): DataView {
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
}

function absorb(words: DataView, start: number, end: number): void {
  // One multiply and one xor-shift per lane per 4 bytes (about half the cost of murmur3's mixing
  // on a 5.6 MB request, and as collision-free as random on 2M pod names). Each step is a
  // bijection of the lane state for a given block, so two inputs of the same length that differ
  // in a single block never collide in a lane.
  let a = laneA;
  let b = laneB;
  let i = start;
  // One little-endian 32-bit load per block: a third less time than four byte loads (5.1 against
  // 7.3 ms for 100k entries); the loop bound keeps every load in range.
  for (; i + 4 <= end; i += 4) {
    const k = words.getInt32(i, true);
    a = Math.imul(a ^ k, 0x9e3779b1);
    a ^= a >>> 15;
    b = Math.imul(b ^ k, 0x85ebca77);
    b ^= b >>> 13;
  }
  let k = 0;
  for (let s = 0; i < end; i++, s += 8) k |= words.getUint8(i) << s;
  // The length closes the field, so "ab"+"c" and "a"+"bc" differ.
  k ^= Math.imul(end - start, 0x27d4eb2f);
  a = Math.imul(a ^ k, 0x9e3779b1);
  b = Math.imul(b ^ k, 0x85ebca77);
  laneA = a ^ (a >>> 15);
  laneB = b ^ (b >>> 13);
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Adds (sign 1) or removes (sign -1) the entry whose UTF-8 name and version bytes are at the given
 * ranges of the buffer `words` views (bytesView).
 */
export function digestEntryIn(
  d: VersionDigest,
  words: DataView,
  nameStart: number,
  nameEnd: number,
  versionStart: number,
  versionEnd: number,
  sign: 1 | -1,
): void {
  laneA = SEED_A;
  laneB = SEED_B;
  absorb(words, nameStart, nameEnd);
  absorb(words, versionStart, versionEnd);
  d.a = (d.a + sign * fmix(laneA)) >>> 0;
  d.b = (d.b + sign * fmix(laneB)) >>> 0;
  d.count += sign;
}

let scratch = Buffer.allocUnsafe(1024);
let scratchView = bytesView(scratch);

/** Copies a string's UTF-8 bytes into `scratch` at `pos`; returns the end. ASCII (every name and version we make) skips the encoder. */
function writeUtf8(value: string, pos: number): number {
  const n = value.length;
  if (scratch.length < pos + 3 * n) {
    // A UTF-16 code unit takes at most 3 UTF-8 bytes.
    const grown = Buffer.allocUnsafe(2 * (pos + 3 * n));
    scratch.copy(grown, 0, 0, pos);
    scratch = grown;
    scratchView = bytesView(grown);
  }
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0x80) return pos + scratch.write(value.slice(i), pos + i, 'utf8') + i;
    scratch[pos + i] = c;
  }
  return pos + n;
}

/** The same as digestEntryIn, for strings (hashed as their UTF-8 bytes, as a client sends them). */
export function digestStrings(d: VersionDigest, name: string, version: string, sign: 1 | -1 = 1): void {
  const nameEnd = writeUtf8(name, 0);
  const versionEnd = writeUtf8(version, nameEnd);
  digestEntryIn(d, scratchView, 0, nameEnd, nameEnd, versionEnd, sign);
}

/** The digest of a name -> version map (requests built in code rather than decoded). */
export function digestMap(map: ReadonlyMap<string, string>): VersionDigest {
  const d = emptyDigest();
  for (const [name, version] of map) digestStrings(d, name, version);
  return d;
}

/**
 * The digest of every resource of each type in the cache, kept current from the cache's change
 * sets. It remembers the resource object it counted for each name, so a changed or removed name
 * can be taken out again after the cache has moved on.
 */
export class CacheDigests {
  private readonly digests = new Map<string, VersionDigest>();
  private readonly counted = new Map<string, Map<string, XdsResource>>();

  constructor(
    private readonly cache: ResourceCache,
    types: readonly XdsTypeUrl[],
  ) {
    for (const type of types) {
      const d = emptyDigest();
      const held = new Map<string, XdsResource>();
      for (const r of cache.all(type)) {
        digestStrings(d, r.name, r.version);
        held.set(r.name, r);
      }
      this.digests.set(type, d);
      this.counted.set(type, held);
    }
  }

  /** Applies a batch of change sets (call it from the cache's subscription, before anything reads the digest). */
  apply(changes: readonly ChangeSet[]): void {
    for (const c of changes) {
      const d = this.digests.get(c.typeUrl);
      const held = this.counted.get(c.typeUrl);
      if (!d || !held) continue;
      for (const name of c.updated) this.refresh(c.typeUrl, d, held, name);
      for (const name of c.removed) this.refresh(c.typeUrl, d, held, name);
    }
  }

  /** The digest of a type's current resources; undefined for types not tracked. */
  get(typeUrl: string): VersionDigest | undefined {
    return this.digests.get(typeUrl);
  }

  private refresh(type: XdsTypeUrl, d: VersionDigest, held: Map<string, XdsResource>, name: string): void {
    const before = held.get(name);
    const now = this.cache.get(type, name);
    if (before === now) return;
    if (before) digestStrings(d, before.name, before.version, -1);
    if (now) {
      digestStrings(d, now.name, now.version);
      held.set(name, now);
    } else {
      held.delete(name);
    }
  }
}
