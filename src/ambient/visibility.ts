// meshConfig.serviceEntryVisibility: which ServiceEntries ztunnel sees, decided by the labels of
// the ServiceEntry's namespace (istiod's ServiceEntryVisibilityMatcher).

import type { LabelSelector } from '../store/selector';
import { matchesSelector } from '../store/selector';

export type SeVisibility = 'PUBLIC' | 'NAMESPACE' | 'NONE';

export interface ServiceEntryVisibilityConfig {
  defaultVisibility?: string;
  /** From meshConfig YAML, where `namespaceSelector:` with no value reads as null. */
  policies?: { visibility?: string; matchingRules?: { namespaceSelector?: LabelSelector | null }[] }[];
}

/** UNSPECIFIED and unknown values are PUBLIC, the legacy default. */
function toVisibility(v: string | undefined): SeVisibility {
  return v === 'NAMESPACE' || v === 'NONE' ? v : 'PUBLIC';
}

/**
 * The first policy whose every rule matches wins, else the default. A rule without a
 * namespaceSelector never matches; a policy without rules matches every namespace (as istiod's).
 */
export function visibilityFor(
  config: ServiceEntryVisibilityConfig | undefined,
  namespaceLabels: Record<string, string> | undefined,
): SeVisibility {
  if (!config) return 'PUBLIC';
  for (const p of config.policies ?? []) {
    const rules = p.matchingRules ?? [];
    if (
      rules.every(
        (r) =>
          r.namespaceSelector !== undefined &&
          r.namespaceSelector !== null &&
          matchesSelector(namespaceLabels ?? {}, r.namespaceSelector),
      )
    ) {
      return toVisibility(p.visibility);
    }
  }
  return toVisibility(config.defaultVisibility);
}
