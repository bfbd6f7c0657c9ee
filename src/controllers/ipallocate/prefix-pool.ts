// One auto-allocation range (PILOT_IP_AUTOALLOCATE_IPV4_PREFIX or _IPV6_PREFIX) and who holds
// which address in it. The first usable address is the one after the network address; the last
// one of the range is usable too.
//
// A freed address may still be in a client's DNS cache or in ztunnel's view of the old service,
// so it is not handed out again at once (istiod never hands it out again until it restarts):
//
// - Never-used addresses go first, in order, from a cursor that only moves forward. Every address
//   behind the cursor is in use or has been freed (the invariant the walk relies on).
// - Once the cursor has passed the end, freed addresses are reused oldest-freed first, and only
//   after they have been free for the quarantine (IP_ALLOCATE_QUARANTINE_MS unless configured).
// - A freed address that an entry claims again (its status still carries it) leaves quarantine.
//
// Quarantine is kept in memory: a new leader knows what is in use but not what was freed lately.

import { ipToText, maskCidr, parseCidr, parseIp } from '../../ambient/ip';

export type Family = 4 | 6;

/** An address as a number of its family, so ranges are arithmetic. */
export interface Ip {
  family: Family;
  value: bigint;
}

/**
 * How long a freed address stays out of use. It must outlast every cache that can still map a
 * hostname to the old VIP: istio's DNS proxy answers with a 30 s TTL, resolver libraries and JVMs
 * cap theirs at minutes, and ztunnel drops the old service as soon as xDS removes it. An hour is
 * far beyond each, and costs nothing while never-used addresses remain (they go first): it only
 * bites once a range has been cycled through, and then only holds back what was freed in the
 * last hour.
 */
export const IP_ALLOCATE_QUARANTINE_MS = 60 * 60_000;

/** Every address of the range is taken or in quarantine: nothing more can be allocated for now. */
export class PrefixExhaustedError extends Error {
  override name = 'PrefixExhaustedError';
  constructor(
    readonly prefix: string,
    /** Freed addresses still in quarantine: they become usable as it ends. */
    readonly quarantined: number,
  ) {
    super(
      quarantined > 0
        ? `auto-allocation range ${prefix} is exhausted: every address in it is in use or in quarantine (${quarantined} freed, not yet reusable)`
        : `auto-allocation range ${prefix} is exhausted: every address in it is in use`,
    );
  }
}

function toBigInt(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

function toBytes(ip: Ip): Uint8Array {
  const out = new Uint8Array(ip.family === 4 ? 4 : 16);
  let v = ip.value;
  for (let i = out.length - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** Reads an address as istiod does: IPv4-mapped IPv6 (::ffff:a.b.c.d) is the IPv4 address. */
export function readIp(text: string | undefined): Ip | undefined {
  const bytes = parseIp(text);
  if (!bytes) return undefined;
  if (bytes.length === 4) return { family: 4, value: toBigInt(bytes) };
  const v = toBigInt(bytes);
  if (v >> 32n === 0xffffn) return { family: 4, value: v & 0xffffffffn };
  return { family: 6, value: v };
}

/** Canonical text (RFC 5952 for IPv6), the form written to status. */
export function ipText(ip: Ip): string {
  return ipToText(toBytes(ip));
}

/** A map key for an address that cannot collide across families. */
export function ipKey(ip: Ip): string {
  return `${ip.family}/${ip.value.toString(16)}`;
}

export interface PrefixPoolOptions {
  /** How long a freed address stays out of use; default IP_ALLOCATE_QUARANTINE_MS. */
  quarantineMs?: number;
  /** Milliseconds, monotonic enough for quarantine; default Date.now (tests inject one). */
  now?: () => number;
}

export class PrefixPool {
  readonly family: Family;
  /** The range as configured, for messages. */
  readonly prefix: string;
  private readonly first: bigint;
  private readonly last: bigint;
  /** How many addresses the range can hand out. */
  readonly capacity: bigint;
  private readonly used = new Map<bigint, string>();
  /** Freed addresses not in use, with when they were freed; insertion order is freeing order. */
  private readonly freed = new Map<bigint, number>();
  /** The lowest address never handed out by the walk (past `last` once every one has been). */
  private next: bigint;
  private readonly quarantineMs: number;
  private readonly now: () => number;

  /** `prefix` was checked by src/config (PILOT_IP_AUTOALLOCATE_*_PREFIX); a bad one is a programming error. */
  constructor(prefix: string, options: PrefixPoolOptions = {}) {
    const cidr = parseCidr(prefix);
    if (!cidr || !prefix.includes('/')) throw new Error(`${prefix} is not a CIDR prefix`);
    const quarantineMs = options.quarantineMs ?? IP_ALLOCATE_QUARANTINE_MS;
    if (!Number.isFinite(quarantineMs) || quarantineMs < 0)
      throw new Error(`the address quarantine must be a duration of 0 ms or more, not ${quarantineMs}`);
    this.quarantineMs = quarantineMs;
    this.now = options.now ?? Date.now;
    const masked = maskCidr(cidr);
    this.family = masked.address.length === 4 ? 4 : 6;
    this.prefix = prefix;
    const bits = BigInt(masked.address.length * 8 - masked.length);
    const base = toBigInt(masked.address);
    this.first = base + 1n;
    this.last = base + (1n << bits) - 1n;
    this.capacity = this.last >= this.first ? this.last - this.first + 1n : 0n;
    this.next = this.first;
  }

  contains(ip: Ip): boolean {
    return ip.family === this.family && ip.value >= this.first && ip.value <= this.last;
  }

  /** Who holds `ip`, if it is in the range and taken. */
  ownerOf(ip: Ip): string | undefined {
    return this.contains(ip) ? this.used.get(ip.value) : undefined;
  }

  get size(): number {
    return this.used.size;
  }

  /** Freed addresses not in use (in quarantine or past it). */
  get freedCount(): number {
    return this.freed.size;
  }

  /**
   * When the next freed address leaves quarantine (ms on the pool's clock), or undefined when
   * none is freed. A time not after now means a freed address is reusable already.
   */
  nextReuseAt(): number | undefined {
    for (const at of this.freed.values()) return at + this.quarantineMs;
    return undefined;
  }

  /**
   * Records `ip` as held by `owner` when it is in the range and free. Returns the holder it
   * already had when someone else holds it (a conflict for the caller to resolve), else undefined.
   * A freed address claimed again (an entry still carries it) is in use and out of quarantine.
   */
  claim(ip: Ip, owner: string): string | undefined {
    if (!this.contains(ip)) return undefined;
    const holder = this.used.get(ip.value);
    if (holder !== undefined && holder !== owner) return holder;
    this.used.set(ip.value, owner);
    this.freed.delete(ip.value);
    return undefined;
  }

  /** Hands `ip` to `owner` whoever held it (the winner of a conflict). */
  transfer(ip: Ip, owner: string): void {
    if (!this.contains(ip)) return;
    this.used.set(ip.value, owner);
    this.freed.delete(ip.value);
  }

  /**
   * A never-used address for `owner` while there is one, else the longest-freed address whose
   * quarantine has ended. The walk from the cursor skips only addresses in use or freed, so it
   * visits at most one address more than those; reuse looks at the oldest freed address only.
   */
  allocate(owner: string): Ip {
    let n = this.next;
    while (n <= this.last && (this.used.has(n) || this.freed.has(n))) n++;
    if (n <= this.last) {
      this.next = n + 1n;
      this.used.set(n, owner);
      return { family: this.family, value: n };
    }
    this.next = n;
    const oldest = this.freed.entries().next();
    if (oldest.done || oldest.value[1] + this.quarantineMs > this.now())
      throw new PrefixExhaustedError(this.prefix, this.freed.size);
    const value = oldest.value[0];
    this.freed.delete(value);
    this.used.set(value, owner);
    return { family: this.family, value };
  }

  /** Frees `ip` if `owner` holds it: it goes into quarantine from now. */
  free(ip: Ip, owner: string): void {
    if (!this.contains(ip) || this.used.get(ip.value) !== owner) return;
    this.used.delete(ip.value);
    this.freed.delete(ip.value);
    this.freed.set(ip.value, this.now());
  }
}
