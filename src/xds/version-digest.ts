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
// The hashing runs in a small WebAssembly module assembled below from its opcodes (no dependency):
// a 64-bit multiply takes 8 bytes a step where JavaScript's Math.imul takes 4, and the lanes' steps
// are a chain of dependent multiplies, so the step count is what the time is. The module also
// walks a request's entries itself, checking each is in the canonical form. A 100k-entry request
// (5.7 MB in 16 KiB DATA chunks) went through DeltaRequestFramer in 1.8-2.5 ms against 4.3-4.7
// with the JavaScript lanes. The tests check the module against a BigInt transcription of the
// definition above.

import type { ChangeSet, ResourceCache, XdsResource, XdsTypeUrl } from '../contract/xds-resources';

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

/** The hash's constants, shared with its BigInt transcription in the tests. */
export const DIGEST_CONSTANTS = {
  seedA: 0x243f6a8885a308d3n,
  seedB: 0x13198a2e03707344n,
  mulA: 0x9e3779b97f4a7c15n,
  mulB: 0xc2b2ae3d27d4eb4fn,
  shiftA: 29n,
  shiftB: 31n,
  /** The entry's length times this is xored into its last (partial, zero-padded) block. */
  mulLength: 0x9fb21c651e98df25n,
  /** murmur3's fmix64. */
  fmix1: 0xff51afd7ed558ccdn,
  fmix2: 0xc4ceb9fe1a85ec53n,
} as const;

const KEY_TAG = 0x0a;
const VALUE_TAG = 0x12;
/** initial_resource_versions (field 5, length-delimited): the tag of each of a request's entries. */
const IRV_TAG = 0x2a;

/**
 * The module's linear memory at start, in 64 KiB pages: a request's bytes are copied in a window
 * of at most RUN_WINDOW_BYTES at a time (a DATA chunk is at most 16 KiB). It grows for a single
 * entry (digestStrings, digestEntryIn) longer than that.
 */
const MEMORY_PAGES = 2;
/** An entry's last block is loaded as 8 bytes and masked, so this much memory past any data must exist. */
const WINDOW_SLACK_BYTES = 16;
/**
 * The four sums and the count of the last call are stored as i32s at the start of the memory (read
 * through an Int32Array: a WebAssembly.Global's value getter cost 0.4 ms a request, five per
 * chunk); the bytes to hash are copied in after them.
 */
const RESULT_BYTES = 32;
/** The most of a request digestEntryRun copies into the module's memory at once. */
export const RUN_WINDOW_BYTES = MEMORY_PAGES * 65536 - RESULT_BYTES - WINDOW_SLACK_BYTES;

// ---- The WebAssembly module, assembled from its opcodes (WebAssembly 1.0 binary format). ----

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

function sleb(value: bigint): number[] {
  const out: number[] = [];
  let n = value;
  for (;;) {
    const b = Number(n & 0x7fn);
    n >>= 7n;
    if ((n === 0n && (b & 0x40) === 0) || (n === -1n && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
const exportName = (s: string): number[] => [...uleb(s.length), ...Buffer.from(s, 'latin1')];

const T_I32 = 0x7f;
const T_I64 = 0x7e;
const BLOCK = 0x02;
const LOOP = 0x03;
const BR = 0x0c;
const BR_IF = 0x0d;
const END = 0x0b;
const VOID = 0x40;
const LOCAL_GET = 0x20;
const LOCAL_SET = 0x21;
const LOCAL_TEE = 0x22;
const I32_STORE = 0x36;
const I64_LOAD = 0x29;
const I32_LOAD8_U = 0x2d;
const I32_CONST = 0x41;
const I64_CONST = 0x42;
const I32_NE = 0x47;
const I32_LT_U = 0x49;
const I32_GT_U = 0x4b;
const I32_GE_U = 0x4f;
const I32_ADD = 0x6a;
const I32_SUB = 0x6b;
const I32_SHL = 0x74;
const I64_SUB = 0x7d;
const I64_MUL = 0x7e;
const I64_AND = 0x83;
const I64_XOR = 0x85;
const I64_SHL = 0x86;
const I64_SHR_U = 0x88;
const I32_WRAP_I64 = 0xa7;
const I64_EXTEND_I32_U = 0xad;

const i32c = (n: number): number[] => [I32_CONST, ...sleb(BigInt(n | 0))];
const i64c = (n: bigint): number[] => [I64_CONST, ...sleb(BigInt.asIntN(64, n))];
const get = (l: number): number[] => [LOCAL_GET, l];
const set = (l: number): number[] => [LOCAL_SET, l];
const tee = (l: number): number[] => [LOCAL_TEE, l];
/** A byte load at the address on the stack plus `offset`. */
const load8 = (offset: number): number[] => [I32_LOAD8_U, 0, ...uleb(offset)];

// Locals of both functions: the parameters (start, end), then nine i32 and three i64.
const L_POS = 0;
const L_END = 1;
const L_I = 2; // the next block of the entry being hashed
const L_E = 3; // the entry's end
const L_LEN = 4; // the entry's length
const L_NAME = 5; // run: the entry's name length
const L_SUM = [6, 7, 8, 9] as const; // the four sums, in locals while a call lasts
const L_COUNT = 10;
const L_A = 11;
const L_B = 12;
const L_K = 13;
const I32_LOCALS = 9;
const I64_LOCALS = 3;

const D = DIGEST_CONSTANTS;
const step = (lane: number, mul: bigint, shift: bigint): number[] => [
  ...get(lane),
  ...get(L_K),
  I64_XOR,
  ...i64c(mul),
  I64_MUL,
  ...tee(lane),
  ...get(lane),
  ...i64c(shift),
  I64_SHR_U,
  I64_XOR,
  ...set(lane),
];
const xorShift33 = (lane: number): number[] => [...tee(lane), ...get(lane), ...i64c(33n), I64_SHR_U, I64_XOR];
const fmix64 = (lane: number): number[] => [
  ...get(lane),
  ...xorShift33(lane),
  ...i64c(D.fmix1),
  I64_MUL,
  ...xorShift33(lane),
  ...i64c(D.fmix2),
  I64_MUL,
  ...xorShift33(lane),
  ...set(lane),
];
const addWord = (sum: number, lane: number, high: boolean): number[] => [
  ...get(sum),
  ...get(lane),
  ...(high ? [...i64c(32n), I64_SHR_U] : []),
  I32_WRAP_I64,
  I32_ADD,
  ...set(sum),
];

/** Hashes the entry bytes [L_I, L_E), L_LEN long, and adds it to the sums and count. */
const HASH_ENTRY: number[] = [
  ...i64c(D.seedA),
  ...set(L_A),
  ...i64c(D.seedB),
  ...set(L_B),
  BLOCK,
  VOID,
  LOOP,
  VOID,
  // while (i + 8 <= e): k = the 8 bytes at i
  ...get(L_I),
  ...i32c(8),
  I32_ADD,
  ...get(L_E),
  I32_GT_U,
  BR_IF,
  1,
  ...get(L_I),
  I64_LOAD,
  0,
  0,
  ...set(L_K),
  ...step(L_A, D.mulA, D.shiftA),
  ...step(L_B, D.mulB, D.shiftB),
  ...get(L_I),
  ...i32c(8),
  I32_ADD,
  ...set(L_I),
  BR,
  0,
  END,
  END,
  // k = (the 8 bytes at i) & ((1 << 8 * (e - i)) - 1), ^ len * mulLength
  ...get(L_I),
  I64_LOAD,
  0,
  0,
  ...i64c(1n),
  ...get(L_E),
  ...get(L_I),
  I32_SUB,
  ...i32c(3),
  I32_SHL,
  I64_EXTEND_I32_U,
  I64_SHL,
  ...i64c(1n),
  I64_SUB,
  I64_AND,
  ...get(L_LEN),
  I64_EXTEND_I32_U,
  ...i64c(D.mulLength),
  I64_MUL,
  I64_XOR,
  ...set(L_K),
  ...step(L_A, D.mulA, D.shiftA),
  ...step(L_B, D.mulB, D.shiftB),
  ...fmix64(L_A),
  ...fmix64(L_B),
  ...addWord(L_SUM[0], L_A, false),
  ...addWord(L_SUM[1], L_A, true),
  ...addWord(L_SUM[2], L_B, false),
  ...addWord(L_SUM[3], L_B, true),
  ...get(L_COUNT),
  ...i32c(1),
  I32_ADD,
  ...set(L_COUNT),
];

const STORE_RESULT: number[] = [L_SUM[0], L_SUM[1], L_SUM[2], L_SUM[3], L_COUNT].flatMap((l, i) => [
  ...i32c(0),
  ...get(l),
  I32_STORE,
  2,
  ...uleb(4 * i),
]);

/** Leaves the run (the block around its loop) when the i32 on the stack is nonzero. */
const STOP_IF = [BR_IF, 1];

/**
 * run(start, end) -> where it stopped. Hashes, in place, the entries from `start` that lie wholly
 * before `end` as initial_resource_versions fields with a one-byte length (0x2a, len) whose
 * payload is in the canonical form with one-byte lengths (0x0a, n, name, 0x12, len - 4 - n,
 * version); stops at the first that is not. The sums and count of what it hashed are left in the
 * globals.
 */
const RUN: number[] = [
  BLOCK,
  VOID,
  LOOP,
  VOID,
  // pos + 2 <= end
  ...get(L_POS),
  ...i32c(2),
  I32_ADD,
  ...get(L_END),
  I32_GT_U,
  ...STOP_IF,
  // mem[pos] == 0x2a
  ...get(L_POS),
  ...load8(0),
  ...i32c(IRV_TAG),
  I32_NE,
  ...STOP_IF,
  // len = mem[pos + 1] < 0x80
  ...get(L_POS),
  ...load8(1),
  ...tee(L_LEN),
  ...i32c(0x80),
  I32_GE_U,
  ...STOP_IF,
  // e = (i = pos + 2) + len <= end
  ...get(L_POS),
  ...i32c(2),
  I32_ADD,
  ...tee(L_I),
  ...get(L_LEN),
  I32_ADD,
  ...tee(L_E),
  ...get(L_END),
  I32_GT_U,
  ...STOP_IF,
  // mem[i] == 0x0a
  ...get(L_I),
  ...load8(0),
  ...i32c(KEY_TAG),
  I32_NE,
  ...STOP_IF,
  // len < 4 + (n = mem[i + 1]) stops (a length byte >= 0x80 too, as len < 0x80)
  ...get(L_LEN),
  ...get(L_I),
  ...load8(1),
  ...tee(L_NAME),
  ...i32c(4),
  I32_ADD,
  I32_LT_U,
  ...STOP_IF,
  // mem[i + n + 2] == 0x12
  ...get(L_I),
  ...get(L_NAME),
  I32_ADD,
  ...load8(2),
  ...i32c(VALUE_TAG),
  I32_NE,
  ...STOP_IF,
  // mem[i + n + 3] == len - 4 - n
  ...get(L_I),
  ...get(L_NAME),
  I32_ADD,
  ...load8(3),
  ...get(L_LEN),
  ...i32c(4),
  I32_SUB,
  ...get(L_NAME),
  I32_SUB,
  I32_NE,
  ...STOP_IF,
  ...HASH_ENTRY,
  ...get(L_E),
  ...set(L_POS),
  BR,
  0,
  END,
  END,
  ...STORE_RESULT,
  ...get(L_POS),
  END,
];

/** one(start, end): hashes the bytes [start, end) as one entry; its hash is left in the globals. */
const ONE: number[] = [
  ...get(L_POS),
  ...set(L_I),
  ...get(L_END),
  ...set(L_E),
  ...get(L_END),
  ...get(L_POS),
  I32_SUB,
  ...set(L_LEN),
  ...HASH_ENTRY,
  ...STORE_RESULT,
  END,
];

function moduleBytes(): Uint8Array {
  const locals = vec([
    [I32_LOCALS, T_I32],
    [I64_LOCALS, T_I64],
  ]);
  const code = (body: number[]): number[] => [...uleb(locals.length + body.length), ...locals, ...body];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0],
    // types: 0 = (i32, i32) -> i32, 1 = (i32, i32) -> ()
    ...section(
      1,
      vec([
        [0x60, ...vec([[T_I32], [T_I32]]), ...vec([[T_I32]])],
        [0x60, ...vec([[T_I32], [T_I32]]), 0],
      ]),
    ),
    ...section(3, vec([[0], [1]])),
    ...section(5, vec([[0x00, MEMORY_PAGES]])),
    ...section(
      7,
      vec([
        [...exportName('run'), 0, 0],
        [...exportName('one'), 0, 1],
        [...exportName('memory'), 2, 0],
      ]),
    ),
    ...section(10, vec([code(RUN), code(ONE)])),
  ]);
}

/** The parts of the WebAssembly API used here (the project's TypeScript libraries do not declare it). */
interface WasmExports {
  run(start: number, end: number): number;
  one(start: number, end: number): void;
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}

const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
const wasm = new wasmApi.Instance(new wasmApi.Module(moduleBytes()), {}).exports as WasmExports;
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
