// Kubernetes label selectors (metav1.LabelSelector semantics), used by discoverySelectors,
// Service selectors and policy workload selectors.

/** metav1.LabelSelectorRequirement. */
export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

/** metav1.LabelSelector: the store owns label matching, so meshConfig and the derivations use its type. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** Every key/value of `match` is present in `labels`. An empty map matches everything. */
export function matchLabels(
  labels: Record<string, string> | undefined,
  match: Record<string, string> | undefined,
): boolean {
  if (!match) return true;
  for (const [k, v] of Object.entries(match)) if (labels?.[k] !== v) return false;
  return true;
}

/** metav1.LabelSelector: matchLabels AND every matchExpression. An empty selector matches all. */
export function matchesSelector(labels: Record<string, string> | undefined, selector: LabelSelector): boolean {
  if (!matchLabels(labels, selector.matchLabels)) return false;
  for (const req of selector.matchExpressions ?? []) {
    const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, req.key);
    const value = has ? labels[req.key] : undefined;
    switch (req.operator) {
      case 'In':
        if (value === undefined || !(req.values ?? []).includes(value)) return false;
        break;
      case 'NotIn':
        if (value !== undefined && (req.values ?? []).includes(value)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        // An operator Kubernetes does not know selects nothing, as the API server would reject it.
        return false;
    }
  }
  return true;
}
