// What the recorded requests need from RBAC, as PolicyRule-like rules: one per API group and
// resource (subresources as "resource/sub"), with the verbs used and where (namespaces, or
// cluster-wide). Chart tests compare these with the chart's ClusterRole and Role.

import type { RecordedRequest } from './server';

export interface NeededRule {
  apiGroup: string;
  resource: string;
  verbs: string[];
  /** Namespaces the calls were made in; "*" when a call spanned all namespaces or the resource is cluster-scoped. */
  namespaces: string[];
}

export function neededRules(requests: readonly RecordedRequest[]): NeededRule[] {
  const rules = new Map<string, { apiGroup: string; resource: string; verbs: Set<string>; namespaces: Set<string> }>();
  for (const r of requests) {
    const resource = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
    const key = `${r.group}|${resource}`;
    let rule = rules.get(key);
    if (!rule) rules.set(key, (rule = { apiGroup: r.group, resource, verbs: new Set(), namespaces: new Set() }));
    rule.verbs.add(r.verb);
    rule.namespaces.add(r.namespace ?? '*');
  }
  return [...rules.values()]
    .map((r) => ({
      apiGroup: r.apiGroup,
      resource: r.resource,
      verbs: [...r.verbs].sort(),
      namespaces: [...r.namespaces].sort(),
    }))
    .sort((a, b) => `${a.apiGroup}/${a.resource}`.localeCompare(`${b.apiGroup}/${b.resource}`));
}
