// One auto-allocation range (PILOT_IP_AUTOALLOCATE_IPV4_PREFIX or _IPV6_PREFIX) and who holds
// which address in it. Addresses are handed out next-fit, as istiod does: from just after the
// last one given, wrapping once to the start of the range, skipping addresses in use. The first
// usable address is the one after the network address; the last one of the range is usable too.

import { ipToText, maskCidr, parseCidr, parseIp } from '../../ambient/ip';

export type Family = 4 | 6;

/** An address as a number of its family, so ranges are arithmetic. */
export interface Ip {
  family: Family;
  value: bigint;
}

/** Every address of the range is taken: nothing more can be allocated until one is freed. */
export class PrefixExhaustedError extends Error {
  override name = 'PrefixExhaustedError';
  constructor(readonly prefix: string) {
    super(`auto-allocation range ${prefix} is exhausted: every address in it is in use`);
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

export class PrefixPool {
  readonly family: Family;
  /** The range as configured, for messages. */
  readonly prefix: string;
  private readonly first: bigint;
  private readonly last: bigint;
  /** How many addresses the range can hand out. */
  readonly capacity: bigint;
  private readonly used = new Map<bigint, string>();
  private next: bigint;

  /** `prefix` was checked by src/config (PILOT_IP_AUTOALLOCATE_*_PREFIX); a bad one is a programming error. */
  constructor(prefix: string) {
    const cidr = parseCidr(prefix);
    if (!cidr || !prefix.includes('/')) throw new Error(`${prefix} is not a CIDR prefix`);
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

  /**
   * Records `ip` as held by `owner` when it is in the range and free. Returns the holder it
   * already had when someone else holds it (a conflict for the caller to resolve), else undefined.
   */
  claim(ip: Ip, owner: string): string | undefined {
    if (!this.contains(ip)) return undefined;
    const holder = this.used.get(ip.value);
    if (holder !== undefined && holder !== owner) return holder;
    this.used.set(ip.value, owner);
    return undefined;
  }

  /** Hands `ip` to `owner` whoever held it (the winner of a conflict). */
  transfer(ip: Ip, owner: string): void {
    if (this.contains(ip)) this.used.set(ip.value, owner);
  }

  /**
   * The next free address for `owner`. The walk visits at most one address more than are in use
   * before it finds a free one, and a full range is refused before any walk.
   */
  allocate(owner: string): Ip {
    if (BigInt(this.used.size) >= this.capacity) throw new PrefixExhaustedError(this.prefix);
    let n = this.next > this.last || this.next < this.first ? this.first : this.next;
    while (this.used.has(n)) n = n === this.last ? this.first : n + 1n;
    this.used.set(n, owner);
    this.next = n + 1n;
    return { family: this.family, value: n };
  }

  /** Frees `ip` if `owner` holds it; an address below the cursor is the next one handed out. */
  free(ip: Ip, owner: string): void {
    if (!this.contains(ip) || this.used.get(ip.value) !== owner) return;
    this.used.delete(ip.value);
    if (ip.value < this.next) this.next = ip.value;
  }
}
