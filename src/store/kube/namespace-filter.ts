// meshConfig discoverySelectors, with istiod's semantics (pkg/kube/namespace/filter.go): no
// selectors selects every namespace; otherwise a namespace is selected when any selector matches
// its labels (an empty selector matches all). Namespaced objects pass when their namespace is
// selected, a Namespace when it is itself selected, and cluster-scoped objects always pass.

import type { LabelSelector } from '../selector';
import { matchesSelector } from '../selector';

/**
 * Where the selectors come from: meshConfig in practice. The store states what it reads of it, so
 * it needs nothing of mesh/ (which reads the store) and the import arrows point one way.
 */
export interface DiscoverySelectorSource {
  current(): { discoverySelectors?: LabelSelector[] };
  /** Returns an unsubscribe function. */
  subscribe(listener: (next: { discoverySelectors?: LabelSelector[] }) => void): () => void;
}

export interface MembershipChange {
  added: string[];
  removed: string[];
}

export class NamespaceFilter {
  private selectors: readonly LabelSelector[] = [];
  private readonly labels = new Map<string, Record<string, string>>();
  private readonly selected = new Set<string>();

  constructor(selectors: readonly LabelSelector[] | undefined) {
    this.selectors = selectors ?? [];
  }

  private matches(labels: Record<string, string>): boolean {
    return this.selectors.length === 0 || this.selectors.some((s) => matchesSelector(labels, s));
  }

  /** Whether objects of this namespace reach the store ('' for cluster-scoped objects). */
  allows(namespace: string | undefined): boolean {
    if (!namespace) return true;
    if (this.selectors.length === 0) return true;
    return this.selected.has(namespace);
  }

  /** A Namespace was added or changed; returns whether its membership changed. */
  namespaceSeen(name: string, labels: Record<string, string> | undefined): MembershipChange {
    const was = this.selected.has(name);
    this.labels.set(name, labels ?? {});
    const now = this.matches(labels ?? {});
    if (now) this.selected.add(name);
    else this.selected.delete(name);
    // Without selectors every object already passes; nothing enters or leaves.
    if (now === was || this.selectors.length === 0) return { added: [], removed: [] };
    return now ? { added: [name], removed: [] } : { added: [], removed: [name] };
  }

  namespaceGone(name: string): void {
    this.labels.delete(name);
    this.selected.delete(name);
  }

  /** New selectors; returns the namespaces that entered and left the selection. */
  setSelectors(selectors: readonly LabelSelector[] | undefined): MembershipChange {
    this.selectors = selectors ?? [];
    const added: string[] = [];
    const removed: string[] = [];
    for (const [name, labels] of this.labels) {
      const was = this.selected.has(name);
      const now = this.matches(labels);
      if (now) this.selected.add(name);
      else this.selected.delete(name);
      if (now && !was) added.push(name);
      if (was && !now) removed.push(name);
    }
    return { added, removed };
  }
}
