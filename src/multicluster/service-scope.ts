// meshConfig serviceScopeConfigs: which Kubernetes Services are GLOBAL (merged across clusters by
// hostname, their workloads reachable from every cluster) and which LOCAL (their own cluster's
// only). istiod's rule: the first entry of scope GLOBAL whose namespaceSelector matches the
// Service's namespace labels and whose servicesSelector matches its labels makes it GLOBAL; an
// absent or empty selector matches everything; anything else, and a Service whose namespace is not
// known, is LOCAL.

import type { MeshConfig } from '../mesh/types';
import { matchesSelector, type LabelSelector } from '../store/selector';
import type { KubeObject } from '../store/types';

export type ServiceScope = 'GLOBAL' | 'LOCAL';

interface ScopeConfig {
  namespaceSelector?: LabelSelector | null;
  servicesSelector?: LabelSelector | null;
  scope?: string;
}

/** The entries of meshConfig.serviceScopeConfigs, each as far as it reads as one. */
export function scopeConfigsOf(mesh: MeshConfig): readonly ScopeConfig[] {
  const raw = mesh['serviceScopeConfigs'];
  return Array.isArray(raw) ? (raw.filter((c) => typeof c === 'object' && c !== null) as ScopeConfig[]) : [];
}

export function serviceScope(
  configs: readonly ScopeConfig[],
  service: KubeObject,
  namespace: KubeObject | undefined,
): ServiceScope {
  if (!namespace) return 'LOCAL';
  for (const c of configs) {
    if (c.scope !== 'GLOBAL') continue;
    if (!matchesSelector(namespace.metadata.labels, c.namespaceSelector ?? {})) continue;
    if (!matchesSelector(service.metadata.labels, c.servicesSelector ?? {})) continue;
    return 'GLOBAL';
  }
  return 'LOCAL';
}
