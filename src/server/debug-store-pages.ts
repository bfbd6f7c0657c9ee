// Paged listings of the store for /debug/config and /debug/configz, in one stable order: kind, then
// namespace/name (keys "<kind>/<namespace>/<name>", compared by code units; a kind is alphanumeric,
// so "Gateway/..." sorts before "GatewayClass/..." and per-kind lists concatenate in kind order).

import { byKey, SortedKeys, takePage, type Page, type PageRequest } from '../contract/debug-page';
import { KIND_IDS, type KindId } from '../store/kinds';
import type { KubeObject, ObjectStore } from '../store/types';

export interface StoredObject {
  kind: KindId;
  object: KubeObject;
}

function keyOf(kind: KindId, o: KubeObject): string {
  return `${kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

/** Kinds in the order their keys sort. */
export function sortedKinds(kinds: readonly KindId[]): KindId[] {
  return [...kinds].sort(byKey);
}

/**
 * Per-kind sorted keys of the whole store, kept until that kind changes: a walk over 100k pods
 * sorts them once, not once per page.
 */
export class StorePages {
  private readonly keys = new Map<KindId, SortedKeys>();

  constructor(private readonly store: ObjectStore) {
    for (const kind of KIND_IDS) this.keys.set(kind, new SortedKeys(() => store.list(kind).map((o) => keyOf(kind, o))));
    store.subscribe((events) => {
      for (const kind of new Set(events.map((e) => e.kind))) this.keys.get(kind)?.invalidate();
    });
  }

  /** Objects of `kinds` (optionally one namespace) from the page's position; total counts every match. */
  page(
    kinds: readonly KindId[],
    namespace: string | undefined,
    req: PageRequest,
  ): Page<StoredObject> & { total: number } {
    const sorted: string[] = [];
    const objects = new Map<string, StoredObject>();
    for (const kind of sortedKinds(kinds)) {
      if (namespace === undefined) {
        for (const k of this.keys.get(kind)?.get() ?? []) sorted.push(k);
        continue;
      }
      // One namespace: its objects only, sorted for this request (bounded by the namespace's size).
      const own = this.store.list(kind, namespace).map((object) => {
        const k = keyOf(kind, object);
        objects.set(k, { kind, object });
        return k;
      });
      for (const k of own.sort(byKey)) sorted.push(k);
    }
    const page = takePage(sorted, req, (key) => objects.get(key) ?? this.lookup(key));
    return { ...page, total: sorted.length };
  }

  private lookup(key: string): StoredObject | undefined {
    const first = key.indexOf('/');
    const second = key.indexOf('/', first + 1);
    const kind = key.slice(0, first) as KindId;
    const namespace = key.slice(first + 1, second);
    const object = this.store.get(kind, namespace === '' ? undefined : namespace, key.slice(second + 1));
    return object ? { kind, object } : undefined;
  }
}
