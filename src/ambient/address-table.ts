// The Address resources (workloads and services) with the reverse maps the xDS server's lookups
// need: by `<network>/<ip>` alias, and the workloads that list a service. Workloads by node are
// read from the store's Pod node index instead (AmbientIndex.workloadsOnNode): a third map of every
// workload name kept here would repeat, an insert per workload, what the store already holds.

import { encodeAddress } from './codec';
import { DerivedStore, Entry, KEY_SEPARATOR } from './derived-store';
import { ipToText } from './ip';
import { NetworkMode, Service, Workload } from './messages';
import { Multimap } from './multimap';

/** Files `name` under each key joined in `joined`; a lone key (most entries) is used as it is, no array made. */
function addKeys(map: Multimap, joined: string | undefined, name: string): void {
  if (!joined) return;
  if (joined.indexOf(KEY_SEPARATOR) < 0) map.add(joined, name);
  else for (const k of joined.split(KEY_SEPARATOR)) map.add(k, name);
}

function deleteKeys(map: Multimap, joined: string | undefined, name: string): void {
  if (!joined) return;
  if (joined.indexOf(KEY_SEPARATOR) < 0) map.delete(joined, name);
  else for (const k of joined.split(KEY_SEPARATOR)) map.delete(k, name);
}

export class AddressTable {
  readonly resources = new DerivedStore((prev, next) => this.reindex(prev, next));
  private readonly aliases = new Multimap();
  private readonly members = new Multimap();

  setWorkload(uid: string, w: Workload | undefined): void {
    if (!w) {
      this.resources.set(uid, undefined);
      return;
    }
    const net = w.network ?? '';
    // ztunnel does not index HOST_NETWORK workloads by IP, so neither do we.
    const aliases =
      w.networkMode === NetworkMode.HOST_NETWORK ? [] : (w.addresses ?? []).map((a) => `${net}/${ipToText(a)}`);
    const extra: Omit<Entry, 'name' | 'version' | 'bytes'> = {};
    if (aliases.length) extra.aliases = aliases.join(KEY_SEPARATOR);
    // Object.keys gives a map's keys as V8's internalized strings: one instance per service name
    // already, shared by every workload listing it (a Map interning them again would cost an insert
    // per workload for nothing).
    const services = Object.keys(w.services ?? {});
    const [only] = services;
    if (services.length === 1 && only !== undefined) extra.services = only;
    else if (services.length) extra.services = services.join(KEY_SEPARATOR);
    this.resources.set(uid, encodeAddress({ workload: w }), extra);
  }

  setService(name: string, s: Service | undefined): void {
    if (!s) {
      this.resources.set(name, undefined);
      return;
    }
    const aliases = (s.addresses ?? []).map(
      (a) => `${a.network ?? ''}/${ipToText(a.address)}${a.length !== undefined ? `/${a.length}` : ''}`,
    );
    // `services: ''` marks the entry as a service.
    this.resources.set(
      name,
      encodeAddress({ service: s }),
      aliases.length ? { aliases: aliases.join(KEY_SEPARATOR), services: '' } : { services: '' },
    );
  }

  /** A workload uid, `<network>/<ip>` or `<ns>/<hostname>`; a service brings the workloads listing it. */
  resolve(key: string): string[] {
    const names = new Set<string>();
    const add = (name: string) => {
      names.add(name);
      if (this.resources.entries.get(name)?.services === '') for (const uid of this.members.get(name)) names.add(uid);
    };
    if (this.resources.entries.has(key)) add(key);
    for (const name of this.aliases.get(key)) add(name);
    return [...names];
  }

  private reindex(prev: Entry | undefined, next: Entry | undefined): void {
    if (prev) {
      const name = prev.name;
      deleteKeys(this.aliases, prev.aliases, name);
      deleteKeys(this.members, prev.services, name);
    }
    if (next) {
      const name = next.name;
      addKeys(this.aliases, next.aliases, name);
      addKeys(this.members, next.services, name);
    }
  }
}
