// The WebAssembly module that hashes the held-versions digest's entries (version-digest.ts says
// what is hashed and why it is order-independent), assembled here from its opcodes (WebAssembly
// 1.0 binary format; no dependency). A 64-bit multiply takes 8 bytes a step where JavaScript's
// Math.imul takes 4, and the lanes' steps are a chain of dependent multiplies, so the step count
// is what the time is. The module also walks a request's entries itself, checking each is in the
// canonical form. The tests check it against a BigInt transcription of the definition.

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

export const KEY_TAG = 0x0a;
export const VALUE_TAG = 0x12;
/** initial_resource_versions (field 5, length-delimited): the tag of each of a request's entries. */
const IRV_TAG = 0x2a;

/**
 * The module's linear memory at start, in 64 KiB pages: a request's bytes are copied in a window
 * of at most RUN_WINDOW_BYTES at a time (a DATA chunk is at most 16 KiB). It grows for a single
 * entry (digestStrings, digestEntryIn) longer than that.
 */
const MEMORY_PAGES = 2;
/** An entry's last block is loaded as 8 bytes and masked, so this much memory past any data must exist. */
export const WINDOW_SLACK_BYTES = 16;
/**
 * The four sums and the count of the last call are stored as i32s at the start of the memory (read
 * through an Int32Array, not five WebAssembly.Global value getters per chunk, each a call out of
 * the hot loop); the bytes to hash are copied in after them.
 */
export const RESULT_BYTES = 32;
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

/** Stores the four sums and the count as i32s at addresses 0, 4, ... 16 (RESULT_BYTES). */
const STORE_RESULT: number[] = [L_SUM[0], L_SUM[1], L_SUM[2], L_SUM[3], L_COUNT].flatMap((l, i) => [
  ...i32c(0),
  ...get(l),
  I32_STORE,
  2,
  ...uleb(4 * i),
]);

/** Leaves the run (the block around its loop) when the i32 on the stack is nonzero. */
const STOP_IF = [BR_IF, 1];
/** Leaves the run unless the byte at the address `address` leaves on the stack, plus `offset`, is `value`. */
const stopUnlessByte = (address: number[], offset: number, value: number): number[] => [
  ...address,
  ...load8(offset),
  ...i32c(value),
  I32_NE,
  ...STOP_IF,
];

/**
 * run(start, end) -> where it stopped. Hashes, in place, the entries from `start` that lie wholly
 * before `end` as initial_resource_versions fields with a one-byte length (0x2a, len) whose
 * payload is in the canonical form with one-byte lengths (0x0a, n, name, 0x12, len - 4 - n,
 * version); stops at the first that is not. The sums and count of what it hashed are left in the
 * results at the start of the memory (RESULT_BYTES).
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
  ...stopUnlessByte(get(L_POS), 0, IRV_TAG),
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
  ...stopUnlessByte(get(L_I), 0, KEY_TAG),
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
  ...stopUnlessByte([...get(L_I), ...get(L_NAME), I32_ADD], 2, VALUE_TAG),
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

/** one(start, end): hashes the bytes [start, end) as one entry; its hash is left in the results. */
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

/** The module's exports (the project's TypeScript libraries do not declare the WebAssembly API). */
export interface DigestModule {
  run(start: number, end: number): number;
  one(start: number, end: number): void;
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}

/** Compiles and instantiates the module (synchronously: it is a few hundred bytes). */
export function instantiateDigestModule(): DigestModule {
  const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  return new wasmApi.Instance(new wasmApi.Module(moduleBytes()), {}).exports as DigestModule;
}
