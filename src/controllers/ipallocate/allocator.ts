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
// - An address is freed when its entry is deleted, when a write that drops it lands (a host left
//   spec.hosts, the entry gained spec.addresses, was opted out or set resolution NONE), or when a
//   write that took it fails. A freed address below the cursor is the next one handed out.

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
import { PrefixExhaustedError, PrefixPool, ipKey, ipText, readIp, type Family, type Ip } from './prefix-pool';

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
  /** Taken for a write under way (a subset of held). */
  pending: Map<string, Ip>;
}

export class ServiceEntryAllocator {
  private readonly pools: Record<Family, PrefixPool>;
  private readonly owners = new Map<string, Owner>();

  constructor(prefixes: AllocatorPrefixes) {
    this.pools = { 4: new PrefixPool(prefixes.ipv4), 6: new PrefixPool(prefixes.ipv6) };
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

  /** The entry is gone: everything it held is free. */
  release(key: string): void {
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

  /** The write of `plan` failed: what it took is free again. */
  abandon(plan: Plan): void {
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
    const sameHosts = hosts.length === existing.size && hosts.every((h) => existing.has(h));
    if (sameHosts && lost.size === 0) return { kind: 'none', key, reassign };

    const fresh: Ip[] = [];
    const addresses: ServiceEntryAddress[] = [];
    const kept = new Set<string>();
    for (const host of hosts) {
      const had = existing.get(host);
      const ips = had
        ? had.map((ip) => (lost.has(ipKey(ip)) ? this.take(key, owner, ip.family, fresh) : ip))
        : FAMILIES.map((f) => this.take(key, owner, f, fresh));
      for (const ip of ips) {
        if (!ip) continue;
        kept.add(ipKey(ip));
        addresses.push({ value: ipText(ip), host });
      }
    }
    const drop = [...owner.held.values()].filter((ip) => !kept.has(ipKey(ip)));
    if (JSON.stringify(addresses) === JSON.stringify(current ?? [])) {
      // Nothing new could be taken (a range is exhausted) and nothing else changed: no write.
      this.abandon({ kind: 'write', key, addresses, fresh, drop: [], reassign });
      return { kind: 'none', key, reassign };
    }
    return { kind: 'write', key, addresses, fresh, drop, reassign };
  }

  /** A fresh address of `family` for `key`, or undefined (logged) when its range is exhausted. */
  private take(key: string, owner: Owner, family: Family, fresh: Ip[]): Ip | undefined {
    try {
      const ip = this.pools[family].allocate(key);
      owner.held.set(ipKey(ip), ip);
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
      owner = { age: ageOf(se), user: new Map(), held: new Map(), pending: new Map() };
      this.owners.set(key, owner);
    }
    owner.age = ageOf(se);
    return owner;
  }

  private freeHeld(key: string, owner: Owner, ip: Ip): void {
    if (owner.pending.has(ipKey(ip))) return;
    owner.held.delete(ipKey(ip));
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
        other?.pending.delete(k);
        reassign.push(holder);
      }
      owner.user.set(k, ip);
    }

    // status.addresses: claimed, or lost to an older entry or a user.
    const seen = new Set<string>();
    for (const ips of statusAddresses(se).values()) {
      for (const ip of ips) {
        const k = ipKey(ip);
        seen.add(k);
        const pool = this.pools[ip.family];
        if (!pool.contains(ip) || owner.user.has(k)) continue;
        const holder = pool.claim(ip, key);
        if (holder === undefined) {
          owner.held.set(k, ip);
          continue;
        }
        const other = this.owners.get(holder);
        if (!other || other.user.has(k) || olderFirst(other.age, owner.age) <= 0) {
          lost.add(k);
          continue;
        }
        pool.transfer(ip, key);
        other.held.delete(k);
        other.pending.delete(k);
        owner.held.set(k, ip);
        reassign.push(holder);
      }
    }
    // Held but no longer in status (and not part of a write under way): someone removed it.
    for (const [k, ip] of owner.held) if (!seen.has(k) && !owner.pending.has(k)) this.freeHeld(key, owner, ip);
    if (lost.size > 0)
      log.warn({ serviceEntry: key, lost: lost.size }, 'ServiceEntry lost auto-allocated addresses to a conflict');
    return lost;
  }
}
