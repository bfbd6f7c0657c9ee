// The ServiceEntry address allocator: which address each eligible host holds, with no I/O. The
// controller feeds it entries as the store sees them and tells it which writes landed; the same
// inputs in the same order always give the same addresses.
//
// - What is already in status (and spec) is claimed before anything is allocated (`warm`), so a
//   restarted or new leader keeps every address and writes nothing.
// - Two entries never share an address. When they claim one, istiod's rule picks who keeps it: an
//   entry naming it in spec.addresses beats every auto-allocation; between auto-allocations the
//   oldest entry (creationTimestamp, then namespace/name) keeps it. The loser's host gets a fresh
//   address of that family in place of the lost one (istiod renews every host of the loser; only
//   the lost address changes here, so the loser's other VIPs and their connections stay).
// - Addresses belong to what the API server holds. One is freed only when its entry is gone from
//   the API server (not merely from the filtered store), when a write that drops it lands (a host
//   left spec.hosts, the entry gained spec.addresses, was opted out or set resolution NONE), or
//   when the entry's status, as read (back), has every host addressed without it. An address that
//   left the status otherwise (a failed write, a status cleared by hand, a local file edited) stays
//   held for its host and is given back to it. A freed address goes into the pool's quarantine
//   (prefix-pool.ts) before anyone can have it again.
// - Each new host takes one address of each family. A host that could not get one (its range
//   exhausted) is waiting for it; the controller plans its entry again when an address can be
//   reused. Only a host known to wait takes a missing family later: a status that holds one
//   family only for another reason (written so, or before a leader change) is left as it is, as
//   istiod leaves it.

import { scopedLogger } from '../../log/logger';
import type { KubeObject } from '../../store/types';
import {
  ageOf,
  eligibleHosts,
  entryKey,
  olderFirst,
  specIps,
  statusAddresses,
  statusAddressesRaw,
  wantsAutoallocation,
  type EntryAge,
  type ServiceEntryAddress,
} from './entries';
import {
  PrefixExhaustedError,
  PrefixPool,
  ipKey,
  ipText,
  readIp,
  type Family,
  type Ip,
  type PrefixPoolOptions,
} from './prefix-pool';

/** Each new host takes one address of each family, IPv4 first, as istiod allocates. */
const FAMILIES: readonly Family[] = [4, 6];

const log = scopedLogger('ipallocate');

export interface AllocatorPrefixes {
  /** PILOT_IP_AUTOALLOCATE_IPV4_PREFIX */
  ipv4: string;
  /** PILOT_IP_AUTOALLOCATE_IPV6_PREFIX */
  ipv6: string;
}

/** What one entry's status.addresses should become. */
export type Plan =
  | { kind: 'none'; key: string; reassign: string[] }
  | {
      kind: 'write';
      key: string;
      /** The whole new status.addresses ([] clears it). */
      addresses: ServiceEntryAddress[];
      /** Taken for this write: given back if it fails. */
      fresh: Ip[];
      /** Held now, not in `addresses`: freed once the write lands. */
      drop: Ip[];
      reassign: string[];
    };

interface Owner {
  age: EntryAge;
  /** Its spec.addresses inside a range. */
  user: Map<string, Ip>;
  /** Auto-allocated addresses it holds: seen in its status, or taken for a write under way. */
  held: Map<string, Ip>;
  /**
   * The host each held address was given to or read for. An address that left the entry's status
   * without a write of ours (a file edit in local mode, a status cleared by hand, a write that
   * failed) stays held and goes back to its host at the next plan: it never served anyone else.
   */
  hostOf: Map<string, string>;
  /** Taken for a write under way (a subset of held). */
  pending: Map<string, Ip>;
}

export class ServiceEntryAllocator {
  private readonly pools: Record<Family, PrefixPool>;
  private readonly owners = new Map<string, Owner>();
  /** Per entry, its hosts that lack an address of a family whose range was exhausted, and those families. */
  private readonly waiting = new Map<string, Map<string, Set<Family>>>();

  constructor(prefixes: AllocatorPrefixes, pool: PrefixPoolOptions = {}) {
    this.pools = { 4: new PrefixPool(prefixes.ipv4, pool), 6: new PrefixPool(prefixes.ipv6, pool) };
  }

  /** Hosts waiting for an address, over every entry. */
  waitingHosts(): number {
    let n = 0;
    for (const hosts of this.waiting.values()) n += hosts.size;
    return n;
  }

  /** Entries with waiting hosts. */
  waitingEntries(): string[] {
    return [...this.waiting.keys()];
  }

  /**
   * When a waiting host could next get an address: the earliest end of quarantine in a range some
   * host waits on (not after now: one is reusable already), or undefined when nothing there is freed.
   */
  nextReuseAt(): number | undefined {
    const families = new Set<Family>();
    for (const hosts of this.waiting.values()) for (const fs of hosts.values()) for (const f of fs) families.add(f);
    let at: number | undefined;
    for (const f of families) {
      const t = this.pools[f].nextReuseAt();
      if (t !== undefined && (at === undefined || t < at)) at = t;
    }
    return at;
  }

  /** Addresses in use per family, for the debug page and tests. */
  inUse(): { ipv4: number; ipv6: number } {
    return { ipv4: this.pools[4].size, ipv6: this.pools[6].size };
  }

  /** Who holds `text`, if anyone. */
  holderOf(text: string): string | undefined {
    const ip = readIp(text);
    return ip ? this.pools[ip.family].ownerOf(ip) : undefined;
  }

  /** Claims every address the entries already carry, oldest entry first; returns their keys in that order. */
  warm(entries: readonly KubeObject[]): string[] {
    const sorted = [...entries].sort((a, b) => olderFirst(ageOf(a), ageOf(b)));
    for (const se of sorted) this.observe(se, []);
    return sorted.map(entryKey);
  }

  /** The entry is gone from the API server: everything it held is freed. */
  release(key: string): void {
    this.waiting.delete(key);
    const owner = this.owners.get(key);
    if (!owner) return;
    for (const ip of [...owner.user.values(), ...owner.held.values()]) this.pools[ip.family].free(ip, key);
    this.owners.delete(key);
  }

  /** The write of `plan` landed. */
  commit(plan: Plan): void {
    if (plan.kind !== 'write') return;
    const owner = this.owners.get(plan.key);
    if (!owner) return;
    for (const ip of plan.fresh) owner.pending.delete(ipKey(ip));
    for (const ip of plan.drop) this.freeHeld(plan.key, owner, ip);
  }

  /**
   * A write of `plan` failed or its outcome is unknown, and `truth` is the entry as the API server
   * holds it now (read back), or undefined when it is gone. What it carries stays held, whether
   * the write landed or not; what it took for the write and does not carry stays held for its
   * host, for the next plan to give back or free. Returns the entries that lost an address to it.
   */
  settle(plan: Plan, truth: KubeObject | undefined): string[] {
    if (!truth) {
      this.release(plan.key);
      return [];
    }
    const owner = this.owners.get(plan.key);
    if (plan.kind === 'write' && owner) for (const ip of plan.fresh) owner.pending.delete(ipKey(ip));
    const reassign: string[] = [];
    this.observe(truth, reassign);
    return reassign;
  }

  /**
   * Holds what `se` carries without planning a write for it: an entry the API server holds that
   * the store does not show (outside discoverySelectors). Returns the entries that lost an address to it.
   */
  hold(se: KubeObject): string[] {
    // Not planned, so not waiting: nothing would be written for it.
    this.waiting.delete(entryKey(se));
    const reassign: string[] = [];
    this.observe(se, reassign);
    return reassign;
  }

  /** Nothing was taken for `plan` after all (no write was made): what it took is free again. */
  private abandon(plan: Plan): void {
    if (plan.kind !== 'write') return;
    const owner = this.owners.get(plan.key);
    for (const ip of plan.fresh) {
      if (owner) {
        owner.pending.delete(ipKey(ip));
        this.freeHeld(plan.key, owner, ip);
      } else this.pools[ip.family].free(ip, plan.key);
    }
  }

  /** What the entry's status.addresses should become, given the entry as last seen. */
  plan(se: KubeObject): Plan {
    const key = entryKey(se);
    const reassign: string[] = [];
    const lost = this.observe(se, reassign);
    const current = statusAddressesRaw(se);
    const owner = this.ownerFor(se);
    if (!wantsAutoallocation(se)) {
      this.waiting.delete(key);
      if (!Array.isArray(current) || current.length === 0) return { kind: 'none', key, reassign };
      return { kind: 'write', key, addresses: [], fresh: [], drop: [...owner.held.values()], reassign };
    }
    const { hosts, dropped } = eligibleHosts(se);
    if (dropped > 0)
      log.warn(
        { serviceEntry: key, hosts: hosts.length + dropped, dropped },
        'ServiceEntry has more hosts than MAX_AUTOALLOCATED_HOSTS_PER_ENTRY; the rest get no address',
      );
    const existing = statusAddresses(se);
    const waited = this.waiting.get(key);
    const sameHosts = hosts.length === existing.size && hosts.every((h) => existing.has(h) && !waited?.has(h));
    const listed = new Set([...existing.values()].flat().map(ipKey));
    if (sameHosts && lost.size === 0) {
      this.waiting.delete(key);
      // Held for a host but in no status, and not needed: nobody else ever had it, it can go.
      for (const [k, ip] of owner.held) if (!listed.has(k) && !owner.pending.has(k)) this.freeHeld(key, owner, ip);
      return { kind: 'none', key, reassign };
    }

    const fresh: Ip[] = [];
    const addresses: ServiceEntryAddress[] = [];
    const kept = new Set<string>();
    const taken = { fresh, listed, kept };
    const waits = new Map<string, Set<Family>>();
    for (const host of hosts) {
      const had = existing.get(host) ?? [];
      const wanted: { family: Family; ip: Ip | undefined }[] = [];
      for (const ip of had) {
        const ipNow = lost.has(ipKey(ip)) ? this.give(key, owner, host, ip.family, taken) : ip;
        if (ipNow) kept.add(ipKey(ipNow));
        wanted.push({ family: ip.family, ip: ipNow });
      }
      // A new host takes every family; a host with addresses only the families it waits for.
      const missing = had.length === 0 ? FAMILIES : [...(waited?.get(host) ?? [])];
      for (const family of missing)
        if (!had.some((ip) => ip.family === family)) {
          const ip = this.give(key, owner, host, family, taken);
          if (ip) kept.add(ipKey(ip));
          wanted.push({ family, ip });
        }
      for (const { family, ip } of wanted) {
        if (!ip) {
          waits.set(host, (waits.get(host) ?? new Set<Family>()).add(family));
          continue;
        }
        kept.add(ipKey(ip));
        addresses.push({ value: ipText(ip), host });
      }
    }
    if (waits.size > 0) this.waiting.set(key, waits);
    else this.waiting.delete(key);
    const drop = [...owner.held.values()].filter((ip) => !kept.has(ipKey(ip)));
    if (JSON.stringify(addresses) === JSON.stringify(current ?? [])) {
      // Nothing new could be taken (a range is exhausted) and nothing else changed: no write.
      this.abandon({ kind: 'write', key, addresses, fresh, drop: [], reassign });
      return { kind: 'none', key, reassign };
    }
    return { kind: 'write', key, addresses, fresh, drop, reassign };
  }

  /**
   * An address for `host`: one the entry still holds for it that no status lists (`listed`) and
   * this plan has not used (`kept`), else a fresh one, else undefined (logged) when the range is
   * exhausted.
   */
  private give(
    key: string,
    owner: Owner,
    host: string,
    family: Family,
    taken: { fresh: Ip[]; listed: Set<string>; kept: Set<string> },
  ): Ip | undefined {
    for (const [k, ip] of owner.held)
      if (ip.family === family && owner.hostOf.get(k) === host && !taken.listed.has(k) && !taken.kept.has(k)) return ip;
    return this.take(key, owner, host, family, taken.fresh);
  }

  /** A fresh address of `family` for `key`, or undefined (logged) when its range is exhausted. */
  private take(key: string, owner: Owner, host: string, family: Family, fresh: Ip[]): Ip | undefined {
    try {
      const ip = this.pools[family].allocate(key);
      owner.held.set(ipKey(ip), ip);
      owner.hostOf.set(ipKey(ip), host);
      owner.pending.set(ipKey(ip), ip);
      fresh.push(ip);
      return ip;
    } catch (err) {
      if (!(err instanceof PrefixExhaustedError)) throw err;
      log.error({ serviceEntry: key, prefix: err.prefix, inUse: this.pools[family].size }, err.message);
      return undefined;
    }
  }

  private ownerFor(se: KubeObject): Owner {
    const key = entryKey(se);
    let owner = this.owners.get(key);
    if (!owner) {
      owner = { age: ageOf(se), user: new Map(), held: new Map(), hostOf: new Map(), pending: new Map() };
      this.owners.set(key, owner);
    }
    owner.age = ageOf(se);
    return owner;
  }

  private freeHeld(key: string, owner: Owner, ip: Ip): void {
    if (owner.pending.has(ipKey(ip))) return;
    owner.held.delete(ipKey(ip));
    owner.hostOf.delete(ipKey(ip));
    this.pools[ip.family].free(ip, key);
  }

  /**
   * Brings the holdings of `se` in line with its spec and status, resolving conflicts with other
   * entries; returns the keys of the addresses in its status that it lost, and adds the entries
   * that lost one to it to `reassign`.
   */
  private observe(se: KubeObject, reassign: string[]): Set<string> {
    const key = entryKey(se);
    const owner = this.ownerFor(se);
    const lost = new Set<string>();

    // spec.addresses: a user's address beats any auto-allocation of it.
    const user = new Map(specIps(se).map((ip) => [ipKey(ip), ip] as const));
    for (const [k, ip] of owner.user) {
      if (!user.has(k)) {
        owner.user.delete(k);
        this.pools[ip.family].free(ip, key);
      }
    }
    for (const [k, ip] of user) {
      const pool = this.pools[ip.family];
      if (!pool.contains(ip)) continue;
      const holder = pool.claim(ip, key);
      if (holder !== undefined) {
        const other = this.owners.get(holder);
        if (other?.user.has(k)) continue; // two users chose one address: theirs to sort out
        pool.transfer(ip, key);
        other?.held.delete(k);
        other?.hostOf.delete(k);
        other?.pending.delete(k);
        reassign.push(holder);
      }
      owner.user.set(k, ip);
    }

    // status.addresses: claimed, or lost to an older entry or a user.
    const seen = new Set<string>();
    for (const [host, ips] of statusAddresses(se)) {
      for (const ip of ips) {
        const k = ipKey(ip);
        seen.add(k);
        const pool = this.pools[ip.family];
        if (!pool.contains(ip) || owner.user.has(k)) continue;
        const holder = pool.claim(ip, key);
        if (holder === undefined) {
          owner.held.set(k, ip);
          owner.hostOf.set(k, host);
          continue;
        }
        const other = this.owners.get(holder);
        if (!other || other.user.has(k) || olderFirst(other.age, owner.age) <= 0) {
          lost.add(k);
          continue;
        }
        pool.transfer(ip, key);
        other.held.delete(k);
        other.hostOf.delete(k);
        other.pending.delete(k);
        owner.held.set(k, ip);
        owner.hostOf.set(k, host);
        reassign.push(holder);
      }
    }
    // Held but no longer in status stays held: the plan gives it back to its host or drops it.
    if (lost.size > 0)
      log.warn({ serviceEntry: key, lost: lost.size }, 'ServiceEntry lost auto-allocated addresses to a conflict');
    return lost;
  }
}
