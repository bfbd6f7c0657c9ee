// What the allocator reads of a ServiceEntry, with istiod's eligibility rules: an entry takes
// auto-allocated addresses only when its resolution is not NONE (the dataplane could not honour a
// VIP), it has no spec.addresses of its own, and it is not labelled
// networking.istio.io/enable-autoallocate-ip=false. Wildcard hosts take one only with
// DYNAMIC_DNS resolution. Walks over the entry's lists are bounded by the limits below.

import { LABEL } from '../../ambient/constants';
import type { KubeObject } from '../../store/types';
import { readIp, type Ip } from './prefix-pool';

/**
 * Hosts of one entry that get addresses; the rest are logged and get none. Each host takes one
 * address per family, so one entry holds at most twice this. 256 hosts is far beyond a ServiceEntry
 * that names services (istiod's own tests use a handful), and keeps one entry from emptying the
 * default IPv4 range (65,535 addresses) or growing its status past ~40 KB.
 */
export const MAX_AUTOALLOCATED_HOSTS_PER_ENTRY = 256;

/** Address families each host takes an address from: IPv4 and IPv6, as istiod allocates. */
export const AUTOALLOCATED_FAMILIES = 2;

/** Most addresses one entry can hold: hosts x families. Status entries past this are not read. */
export const MAX_AUTOALLOCATED_ADDRESSES_PER_ENTRY = MAX_AUTOALLOCATED_HOSTS_PER_ENTRY * AUTOALLOCATED_FAMILIES;

/** Spec hosts and spec addresses read per entry (the CRD does not bound them). */
export const MAX_SPEC_ITEMS_READ = 4_096;

/** One element of ServiceEntry status.addresses (istio.io/api ServiceEntryAddress). */
export interface ServiceEntryAddress {
  value: string;
  host: string;
}

/** The parts of spec the allocator reads, unchecked: client data. */
interface SpecView {
  resolution?: unknown;
  hosts?: unknown;
  addresses?: unknown;
}

function specOf(se: KubeObject): SpecView {
  const spec: unknown = se.spec;
  return typeof spec === 'object' && spec !== null ? spec : {};
}

export function entryKey(se: KubeObject): string {
  return `${se.metadata.namespace ?? ''}/${se.metadata.name}`;
}

function strings(list: unknown, limit: number): string[] {
  if (!Array.isArray(list)) return [];
  const out: string[] = [];
  for (const v of list.slice(0, limit)) if (typeof v === 'string') out.push(v);
  return out;
}

/** istiod's rule for whether an entry takes auto-allocated addresses at all. */
export function wantsAutoallocation(se: KubeObject): boolean {
  const resolution = specOf(se).resolution ?? 'NONE';
  if (resolution === 'NONE') return false;
  if ((se.metadata.labels?.[LABEL.enableAutoallocateIp] ?? '').toLowerCase() === 'false') return false;
  return specAddresses(se).length === 0;
}

/** The hosts that get addresses, first occurrence order, duplicates once, bounded. */
export function eligibleHosts(se: KubeObject): { hosts: string[]; dropped: number } {
  const dynamic = specOf(se).resolution === 'DYNAMIC_DNS';
  const seen = new Set<string>();
  for (const h of strings(specOf(se).hosts, MAX_SPEC_ITEMS_READ)) if (dynamic || !h.startsWith('*')) seen.add(h);
  const all = [...seen];
  return {
    hosts: all.slice(0, MAX_AUTOALLOCATED_HOSTS_PER_ENTRY),
    dropped: Math.max(0, all.length - MAX_AUTOALLOCATED_HOSTS_PER_ENTRY),
  };
}

/** spec.addresses as written (IPs or CIDRs). */
export function specAddresses(se: KubeObject): string[] {
  return strings(specOf(se).addresses, MAX_SPEC_ITEMS_READ);
}

/** spec.addresses that are single IPs: the only ones that can collide with an allocation. */
export function specIps(se: KubeObject): Ip[] {
  const out: Ip[] = [];
  for (const text of specAddresses(se)) {
    const ip = text.includes('/') ? undefined : readIp(text);
    if (ip) out.push(ip);
  }
  return out;
}

/** status.addresses exactly as stored (the value a JSON patch `test` must match), or null. */
export function statusAddressesRaw(se: KubeObject): unknown {
  const status: unknown = se.status;
  if (typeof status !== 'object' || status === null) return null;
  return (status as { addresses?: unknown }).addresses ?? null;
}

/** Parsed status.addresses by host, in order; unparsable values are skipped, as istiod does. */
export function statusAddresses(se: KubeObject): Map<string, Ip[]> {
  const out = new Map<string, Ip[]>();
  const raw = statusAddressesRaw(se);
  if (!Array.isArray(raw)) return out;
  for (const a of raw.slice(0, MAX_AUTOALLOCATED_ADDRESSES_PER_ENTRY) as unknown[]) {
    if (typeof a !== 'object' || a === null) continue;
    const { value, host } = a as { value?: unknown; host?: unknown };
    const ip = typeof value === 'string' ? readIp(value) : undefined;
    if (!ip) continue;
    const h = typeof host === 'string' ? host : '';
    const list = out.get(h) ?? [];
    list.push(ip);
    out.set(h, list);
  }
  return out;
}

/** Orders entries as istiod resolves conflicts: oldest first; equal timestamps by namespace/name. */
export function olderFirst(a: EntryAge, b: EntryAge): number {
  const ta = a.created ?? '';
  const tb = b.created ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

export interface EntryAge {
  key: string;
  /** metadata.creationTimestamp (RFC 3339, so string order is time order). */
  created: string | undefined;
}

export function ageOf(se: KubeObject): EntryAge {
  return { key: entryKey(se), created: se.metadata.creationTimestamp };
}
