// A small seeded PRNG for the fuzzer: every input is derived from (run seed, target, case index)
// alone, so any failure can be replayed on its own with `--seed S --target T --case N`.

/** splitmix32 finalizer: spreads one 32-bit integer over all bits. */
function mix32(x: number): number {
  x = (x + 0x9e3779b9) | 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The seed of one case: a pure function of the run seed, the target's name and the case index. */
export function caseSeed(runSeed: number, target: string, index: number): number {
  return mix32(mix32(runSeed ^ hashString(target)) ^ mix32(index));
}

/** Share of size choices that take an extreme value (thousands of levels or copies, megabytes). */
export const EXTREME_CHANCE = 0.01;

/** sfc32: fast, 128 bits of state, good enough statistics for choosing mutations. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    this.a = mix32(seed);
    this.b = mix32(this.a ^ 0x1234567);
    this.c = mix32(this.b ^ 0x89abcdef);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.u32();
  }

  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, n). */
  int(n: number): number {
    return n <= 0 ? 0 : Math.floor((this.u32() / 4294967296) * n);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.u32() / 4294967296 < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)]!;
  }

  /** Small sizes are likely, large ones possible: 1..max, roughly log-uniform. */
  size(max: number): number {
    const bits = Math.log2(Math.max(2, max));
    return Math.min(max, Math.max(1, Math.floor(2 ** ((this.u32() / 4294967296) * bits))));
  }

  /**
   * A size from `usual`, or now and then (EXTREME_CHANCE) from `extreme`: inputs far beyond every
   * limit must be tried, but if every case were huge a million of them would take hours.
   */
  scale<T>(usual: readonly T[], extreme: readonly T[]): T {
    return this.chance(EXTREME_CHANCE) ? this.pick(extreme) : this.pick(usual);
  }

  bytes(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) out[i] = this.u32() & 0xff;
    return out;
  }
}
