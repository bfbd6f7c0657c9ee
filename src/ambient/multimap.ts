// key -> names, holding a lone name as a plain string and a few names as an array: most keys (an
// IP, a node with one pod) map to one name, many (a service's pods) to a handful, and a Set per key
// costs several hundred bytes of heap and a rehash each time it grows.

/** Names a key holds in an array before they move to a Set (an array's includes/splice is O(n)). */
export const MULTIMAP_ARRAY_LIMIT = 8;

export class Multimap {
  private readonly map = new Map<string, string | string[] | Set<string>>();

  add(key: string, name: string): void {
    const v = this.map.get(key);
    if (v === undefined) this.map.set(key, name);
    else if (typeof v === 'string') {
      if (v !== name) this.map.set(key, [v, name]);
    } else if (Array.isArray(v)) {
      if (v.includes(name)) return;
      if (v.length < MULTIMAP_ARRAY_LIMIT) v.push(name);
      else {
        // Insertion order is kept, as get() reports it.
        const many = new Set(v);
        many.add(name);
        this.map.set(key, many);
      }
    } else v.add(name);
  }

  delete(key: string, name: string): void {
    const v = this.map.get(key);
    if (v === undefined) return;
    if (typeof v === 'string') {
      if (v === name) this.map.delete(key);
      return;
    }
    if (Array.isArray(v)) {
      const at = v.indexOf(name);
      if (at < 0) return;
      v.splice(at, 1);
      if (v.length === 1) this.map.set(key, v[0] as string);
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
