// exportTo: which namespaces see a resource ("." this one, "*" all, "~" none for ServiceEntry).

import { isDNS1123Label } from './hosts';
import { Report } from './report';

export function checkExportTo(
  r: Report,
  namespace: string,
  exportTo: string[] | undefined,
  path: string,
  opts: { serviceEntry: boolean; destinationRuleWithSelector: boolean },
): void {
  if (!exportTo || exportTo.length === 0) return;
  const seen = new Set<string>();
  // A repeated entry is reported once, however often it repeats.
  const reported = new Set<string>();
  for (const e of exportTo) {
    const k = e === '.' ? namespace : e;
    if (seen.has(k)) {
      if (reported.has(e)) continue;
      reported.add(e);
      r.error(
        path,
        k !== e
          ? `duplicate entries in exportTo: . and current namespace ${namespace}`
          : `duplicate entries in exportTo for entry ${e}`,
      );
      continue;
    }
    if (opts.serviceEntry && e === '~') {
      seen.add(k);
      continue;
    }
    if (k === '~') r.error(path, 'exportTo ~ (none) is not allowed for Istio configuration objects');
    else if (k !== '.' && k !== '*' && !isDNS1123Label(k))
      r.error(path, 'only .,*, or a valid DNS 1123 label is allowed as exportTo entry');
    else seen.add(k);
  }
  if (opts.destinationRuleWithSelector && seen.size > 0) {
    if (seen.has(namespace)) {
      if (seen.size > 1)
        r.error(path, 'destination rule with workload selector cannot have multiple entries in exportTo');
    } else {
      r.error(path, 'destination rule with workload selector cannot have exportTo beyond current namespace');
    }
  }
  if (seen.has('*') && exportTo.length > 1)
    r.error(path, 'cannot have both public (*) and non-public exportTo values for a resource');
  if (seen.has('~') && exportTo.length > 1) r.error(path, 'cannot export service entry to no one (~) and someone');
}
