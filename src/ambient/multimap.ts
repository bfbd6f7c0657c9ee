// key -> names, holding a lone name as a plain string: most keys (an IP, a node with one pod)
// map to one name, and a Set per key would cost several hundred bytes of heap each.

export class Multimap {
  private readonly map = new Map<string, string | Set<string>>();

  add(key: string, name: string): void {
    const v = this.map.get(key);
    if (v === undefined) this.map.set(key, name);
    else if (typeof v === 'string') {
      if (v !== name) this.map.set(key, new Set([v, name]));
    } else v.add(name);
  }

  delete(key: string, name: string): void {
    const v = this.map.get(key);
    if (v === undefined) return;
    if (typeof v === 'string') {
      if (v === name) this.map.delete(key);
      return;
    }
    v.delete(name);
    if (v.size === 1) this.map.set(key, v.values().next().value as string);
  }

  get(key: string): string[] {
    const v = this.map.get(key);
    if (v === undefined) return [];
    return typeof v === 'string' ? [v] : [...v];
  }
}
