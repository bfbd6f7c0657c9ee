// An order-independent digest of (name, version) pairs. A reconnecting ztunnel lists every name it
// holds in initial_resource_versions (100k entries, ~5.6 MB); when nothing changed, decoding 200k
// strings and looking each one up only to find nothing to send costs far more than receiving the
// bytes. The request decoder digests the raw entry bytes without making strings, the server keeps
// the same digest of its cache up to date with every change set, and equal digests (and counts)
// mean the client holds exactly the current set. Any difference falls back to the exact per-name
// comparison, so a mismatch only costs time.
//
// What is hashed for an entry is its canonical map-entry encoding: 0x0a, varint(name length), the
// name's UTF-8, 0x12, varint(version length), the version's UTF-8 (what protobuf encoders write for
// a map<string, string> entry, so a request's entries are hashed where they lie). The tags and
// lengths delimit name and version, so "ab"+"c" and "a"+"bc" are different inputs. An entry
// written any other way (fields swapped or omitted, longer varints, unknown fields) is rewritten
// into that form first, so every encoding of a pair hashes alike.
//
// Each entry is hashed into two independent 64-bit lanes (different seeds and constants), 8 bytes
// a step: xor the block in, multiply by an odd constant, xor-shift. Each step is a bijection of the
// lane state for a given block, so two inputs of the same length that differ in a single block
// never collide in a lane. The length is mixed into the last (zero-padded) block, and a murmur3
// fmix64 (also a bijection) closes each lane. The entry's 128 bits are summed into the digest per
// 32-bit half of each lane, modulo 2^32. Sums, unlike XOR, do not cancel a repeated entry, so a
// request that lists one name twice and omits another still differs. An accidental match of two
// different sets needs the four 32-bit sums and the count to agree (about 2^-128 for unrelated
// sets; the two 32-bit lanes this replaced gave 2^-64), and two sets that differ in one entry,
// the two entries of the same length and differing in one block, never match.
//
// The hashing runs in a small WebAssembly module (digest-module.ts): a 64-bit multiply takes 8
// bytes a step where JavaScript's Math.imul takes 4, so a request is hashed in half the steps.

import type { ChangeSet, ResourceCache, XdsResource, XdsTypeUrl } from '../../contract/xds-resources';
import {
  KEY_TAG,
  RESULT_BYTES,
  RUN_WINDOW_BYTES,
  VALUE_TAG,
  WINDOW_SLACK_BYTES,
  instantiateDigestModule,
} from './digest-module';

export { DIGEST_CONSTANTS, RUN_WINDOW_BYTES } from './digest-module';

export interface VersionDigest {
  count: number;
  /** Sums modulo 2^32 of the entry hashes' four 32-bit words: lane A low and high, lane B low and high. */
  a: number;
  b: number;
  c: number;
  d: number;
}

export function emptyDigest(): VersionDigest {
  return { count: 0, a: 0, b: 0, c: 0, d: 0 };
}

export function sameDigest(x: VersionDigest, y: VersionDigest): boolean {
  return x.count === y.count && x.a === y.a && x.b === y.b && x.c === y.c && x.d === y.d;
}

const wasm = instantiateDigestModule();
let memory = Buffer.from(wasm.memory.buffer);
let results = new Int32Array(wasm.memory.buffer, 0, 5);

/** Makes room for `bytes` (and the slack) after the results in the module's memory. */
function reserve(bytes: number): void {
  const need = RESULT_BYTES + bytes + WINDOW_SLACK_BYTES;
  if (need <= memory.length) return;
  wasm.memory.grow(Math.ceil((need - memory.length) / 65536));
  memory = Buffer.from(wasm.memory.buffer);
  results = new Int32Array(wasm.memory.buffer, 0, 5);
}

/** Adds (sign 1) or takes out (sign -1) what the last call left in the results. */
function addResult(d: VersionDigest, sign: 1 | -1): void {
  const r = results;
  d.a = (d.a + sign * (r[0] ?? 0)) >>> 0;
  d.b = (d.b + sign * (r[1] ?? 0)) >>> 0;
  d.c = (d.c + sign * (r[2] ?? 0)) >>> 0;
  d.d = (d.d + sign * (r[3] ?? 0)) >>> 0;
  d.count += sign * (r[4] ?? 0);
}

/**
 * Digests the run of initial_resource_versions entries that starts at `at` in `chunk` and lies
 * wholly before `end`, in the canonical form with one-byte lengths (what every encoder writes for
 * names and versions under 124 bytes together). Returns where the run stopped: at `end`, at the
 * first entry cut by `end`, or at anything else (another field, an entry written otherwise) for
 * the caller to read.
 */
export function digestEntryRun(d: VersionDigest, chunk: Buffer, at: number, end: number): number {
  for (;;) {
    const take = Math.min(end - at, RUN_WINDOW_BYTES);
    if (take < 2) return at;
    // Buffer.copy: no view made per call, as TypedArray.set would need for a part of the chunk.
    chunk.copy(memory, RESULT_BYTES, at, at + take);
    const stopped = wasm.run(RESULT_BYTES, RESULT_BYTES + take) - RESULT_BYTES;
    addResult(d, 1);
    at += stopped;
    // Stopped inside the window, or the window held the rest: done. Else the window cut an entry.
    if (stopped === 0 || at >= end || take === end - at + stopped) return at;
  }
}

/**
 * The view the request decoders read a buffer through, made once per buffer and passed down
 * (digestEntryIn takes it).
 */
export function bytesView(buf: Uint8Array): DataView {
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** Writes `n` as a varint at `pos` of the module's memory; returns the end. */
function putVarint(n: number, pos: number): number {
  while (n >= 0x80) {
    memory[pos++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  memory[pos] = n;
  return pos + 1;
}

/** Writes tag, length and the bytes [start, end) of `from` at `pos`; returns the end. */
function putField(tag: number, from: DataView, start: number, end: number, pos: number): number {
  memory[pos] = tag;
  pos = putVarint(end - start, pos + 1);
  for (let i = start; i < end; i++) memory[pos++] = from.getUint8(i);
  return pos;
}

/**
 * Adds (sign 1) or removes (sign -1) the entry whose UTF-8 name and version bytes are at the given
 * ranges of the buffer `words` views (bytesView): hashed in the canonical form, however the
 * request wrote it.
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
  reserve(nameEnd - nameStart + versionEnd - versionStart + 20);
  const mid = putField(KEY_TAG, words, nameStart, nameEnd, RESULT_BYTES);
  const end = putField(VALUE_TAG, words, versionStart, versionEnd, mid);
  wasm.one(RESULT_BYTES, end);
  addResult(d, sign);
}

/**
 * Adds the entry whose payload [start, end) of `buf` is already in the canonical form (the caller
 * has checked: key, then value, each with a one-byte tag and length, nothing else).
 */
export function digestCanonicalEntry(d: VersionDigest, buf: Buffer, start: number, end: number): void {
  reserve(end - start);
  buf.copy(memory, RESULT_BYTES, start, end);
  wasm.one(RESULT_BYTES, RESULT_BYTES + end - start);
  addResult(d, 1);
}

/** Writes tag, the UTF-8 length and the UTF-8 of `value` at `pos`; returns the end. */
function putString(tag: number, value: string, pos: number): number {
  const n = value.length;
  let ascii = true;
  for (let i = 0; i < n && ascii; i++) ascii = value.charCodeAt(i) < 0x80;
  const bytes = ascii ? n : Buffer.byteLength(value, 'utf8');
  reserve(pos + bytes + 10);
  memory[pos] = tag;
  pos = putVarint(bytes, pos + 1);
  if (!ascii) return pos + memory.write(value, pos, 'utf8');
  for (let i = 0; i < n; i++) memory[pos + i] = value.charCodeAt(i);
  return pos + n;
}

/** The same as digestEntryIn, for strings (hashed as their UTF-8 bytes, as a client sends them). */
export function digestStrings(d: VersionDigest, name: string, version: string, sign: 1 | -1 = 1): void {
  const mid = putString(KEY_TAG, name, RESULT_BYTES);
  const end = putString(VALUE_TAG, version, mid);
  wasm.one(RESULT_BYTES, end);
  addResult(d, sign);
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
