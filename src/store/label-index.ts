// An index of objects by label pairs, nested scope -> key -> value. Selectors and labels are the
// hottest lookups of the ambient index (a pod's labels against Service, ServiceEntry and policy
// selectors, several per pod in a build), and a flat index keyed by "<ns>\0<k>=<v>" built a new
// string per lookup and hashed it: the nested maps are reached with the label's own strings, about
// twice as fast at 100k pods, and skip a scope with nothing in it at the first lookup.

import type { KubeObject, LabelFiling, LabelIndexFunction, LabelIndexView } from './types';

const NOTHING: readonly KubeObject[] = [];

export class LabelIndex implements LabelIndexView {
  /** scope -> label key -> label value -> objects */
  private readonly pairs = new Map<string, Map<string, Map<string, Set<KubeObject>>>>();
  /** scope -> objects filed with `all` */
  private readonly alls = new Map<string, Set<KubeObject>>();
  /** object key -> what it was filed as, to unfile exactly that */
  private readonly filed = new Map<string, { object: KubeObject; filing: LabelFiling }>();

  constructor(readonly fn: LabelIndexFunction) {}

  file(key: string, object: KubeObject): void {
    if (this.filed.has(key)) this.unfile(key);
    const filing = this.fn(object);
    if (!filing) return;
    const { scope, labels, all } = filing;
    let filedAny = false;
    if (labels) {
      let byKey = this.pairs.get(scope);
      for (const k in labels) {
        const v = String(labels[k]);
        if (!byKey) this.pairs.set(scope, (byKey = new Map<string, Map<string, Set<KubeObject>>>()));
        let byValue = byKey.get(k);
        if (!byValue) byKey.set(k, (byValue = new Map<string, Set<KubeObject>>()));
        let objects = byValue.get(v);
        if (!objects) byValue.set(v, (objects = new Set<KubeObject>()));
        objects.add(object);
        filedAny = true;
      }
    }
    if (all) {
      let objects = this.alls.get(scope);
      if (!objects) this.alls.set(scope, (objects = new Set<KubeObject>()));
      objects.add(object);
      filedAny = true;
    }
    if (filedAny) this.filed.set(key, { object, filing });
  }

  unfile(key: string): void {
    const entry = this.filed.get(key);
    if (!entry) return;
    this.filed.delete(key);
    const { object, filing } = entry;
    const { scope, labels, all } = filing;
    const byKey = this.pairs.get(scope);
    if (labels && byKey) {
      for (const k in labels) {
        const byValue = byKey.get(k);
        const v = String(labels[k]);
        const objects = byValue?.get(v);
        if (!byValue || !objects) continue;
        objects.delete(object);
        if (objects.size > 0) continue;
        byValue.delete(v);
        if (byValue.size === 0) byKey.delete(k);
      }
      if (byKey.size === 0) this.pairs.delete(scope);
    }
    if (all) {
      const objects = this.alls.get(scope);
      objects?.delete(object);
      if (objects?.size === 0) this.alls.delete(scope);
    }
  }

  withLabel(scope: string, key: string, value: string): Iterable<KubeObject> {
    return this.pairs.get(scope)?.get(key)?.get(value) ?? NOTHING;
  }

  selectingAll(scope: string): Iterable<KubeObject> {
    return this.alls.get(scope) ?? NOTHING;
  }

  hasScope(scope: string): boolean {
    return this.pairs.has(scope) || this.alls.has(scope);
  }

  scopes(): Iterable<string> {
    return new Set([...this.pairs.keys(), ...this.alls.keys()]);
  }
}
