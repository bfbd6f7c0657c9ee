// An index of objects by label pairs, nested scope -> key -> value. Selectors and labels are the
// hottest lookups of the ambient index (a pod's labels against Service, ServiceEntry and policy
// selectors, several per pod in a build), and a flat index keyed by "<ns>\0<k>=<v>" built a new
// string per lookup and hashed it: the nested maps are reached with the label's own strings, about
// twice as fast at 100k pods, and skip a scope with nothing in it at the first lookup.

import type { KubeObject, LabelIndexFunction, LabelIndexView } from './types';

const NOTHING: readonly KubeObject[] = [];

/** Objects one pair holds in an array before they move to a Set (an array's includes/splice is O(n)). */
export const LABEL_INDEX_ARRAY_LIMIT = 8;

/**
 * The objects filed under one pair: most pairs name one object (a Service's selector, a pod's
 * `app`) or a handful, and a Set each cost ~100 B of heap and its own allocation at a cold start.
 */
type Bucket = KubeObject | KubeObject[] | Set<KubeObject>;

function addTo(bucket: Bucket | undefined, object: KubeObject): Bucket {
  if (bucket === undefined) return object;
  if (bucket instanceof Set) return bucket.add(object);
  if (!Array.isArray(bucket)) return bucket === object ? bucket : [bucket, object];
  if (bucket.includes(object)) return bucket;
  if (bucket.length < LABEL_INDEX_ARRAY_LIMIT) {
    bucket.push(object);
    return bucket;
  }
  const many = new Set(bucket);
  return many.add(object);
}

/** The bucket without `object`; undefined once it is empty. */
function removeFrom(bucket: Bucket, object: KubeObject): Bucket | undefined {
  if (bucket instanceof Set) {
    bucket.delete(object);
    return bucket.size > 0 ? bucket : undefined;
  }
  if (!Array.isArray(bucket)) return bucket === object ? undefined : bucket;
  const at = bucket.indexOf(object);
  if (at >= 0) bucket.splice(at, 1);
  if (bucket.length > 1) return bucket;
  return bucket[0];
}

function objectsIn(bucket: Bucket | undefined): Iterable<KubeObject> {
  if (bucket === undefined) return NOTHING;
  return bucket instanceof Set || Array.isArray(bucket) ? bucket : [bucket];
}

export class LabelIndex implements LabelIndexView {
  /** scope -> label key -> label value -> objects */
  private readonly pairs = new Map<string, Map<string, Map<string, Bucket>>>();
  /** scope -> objects filed with `all` */
  private readonly alls = new Map<string, Set<KubeObject>>();
  // No map of what each object was filed as: the store hands the object filed back to unfile(),
  // and the index function, a pure function of it, gives its filing again. Kept per object, it was
  // a 100k-entry map and two objects per pod, ~1/3 of filing a pod (a cold start files 100k).

  /**
   * The last scope looked up and its pairs: one selector lookup is a hasScope then a withLabel per
   * label of the same scope, and each went through the scope map again. Forgotten whenever a scope
   * is added to or removed from `pairs`.
   */
  private lastScope: string | undefined;
  private lastByKey: Map<string, Map<string, Bucket>> | undefined;

  constructor(readonly fn: LabelIndexFunction) {}

  private scopePairs(scope: string): Map<string, Map<string, Bucket>> | undefined {
    if (scope !== this.lastScope) {
      this.lastByKey = this.pairs.get(scope);
      this.lastScope = scope;
    }
    return this.lastByKey;
  }

  /** Files `object`, first unfiling `previous`, the object the store held under the same key. */
  file(object: KubeObject, previous: KubeObject | undefined): void {
    if (previous) this.unfile(previous);
    this.fileNew(object);
  }

  /** Files an object the index does not hold (a new key, or an index being filled over a store). */
  fileNew(object: KubeObject): void {
    const filing = this.fn(object);
    if (!filing) return;
    const { scope, labels, all } = filing;
    if (labels) {
      let byKey = this.pairs.get(scope);
      for (const k in labels) {
        const raw = labels[k];
        const v = typeof raw === 'string' ? raw : String(raw);
        if (!byKey) {
          this.pairs.set(scope, (byKey = new Map<string, Map<string, Bucket>>()));
          this.lastScope = undefined;
        }
        let byValue = byKey.get(k);
        if (!byValue) byKey.set(k, (byValue = new Map<string, Bucket>()));
        const objects = byValue.get(v);
        const next = addTo(objects, object);
        if (next !== objects) byValue.set(v, next);
      }
    }
    if (all) {
      let objects = this.alls.get(scope);
      if (!objects) this.alls.set(scope, (objects = new Set<KubeObject>()));
      objects.add(object);
    }
  }

  /** Unfiles an object filed before, from where its index function puts it. */
  unfile(object: KubeObject): void {
    const filing = this.fn(object);
    if (!filing) return;
    const { scope, labels, all } = filing;
    const byKey = this.pairs.get(scope);
    if (labels && byKey) {
      for (const k in labels) {
        const byValue = byKey.get(k);
        const raw = labels[k];
        const v = typeof raw === 'string' ? raw : String(raw);
        const objects = byValue?.get(v);
        if (!byValue || !objects) continue;
        const left = removeFrom(objects, object);
        if (left !== undefined) {
          if (left !== objects) byValue.set(v, left);
          continue;
        }
        byValue.delete(v);
        if (byValue.size === 0) byKey.delete(k);
      }
      if (byKey.size === 0) {
        this.pairs.delete(scope);
        this.lastScope = undefined;
      }
    }
    if (all) {
      const objects = this.alls.get(scope);
      objects?.delete(object);
      if (objects?.size === 0) this.alls.delete(scope);
    }
  }

  withLabel(scope: string, key: string, value: string): Iterable<KubeObject> {
    return objectsIn(this.scopePairs(scope)?.get(key)?.get(value));
  }

  selectingAll(scope: string): Iterable<KubeObject> {
    return this.alls.get(scope) ?? NOTHING;
  }

  hasScope(scope: string): boolean {
    return this.scopePairs(scope) !== undefined || this.alls.has(scope);
  }

  scopes(): Iterable<string> {
    return new Set([...this.pairs.keys(), ...this.alls.keys()]);
  }
}
