// DestinationRule (networking.istio.io): policies for traffic to a host, and its subsets.

import { checkExportTo } from './common/export-to';
import { isObject, list, obj, str, strList, strMap } from './common/fields';
import { isDNS1123Label, labelErrors, wildcardDomainError } from './common/hosts';
import { RepeatFinder } from './common/repeats';
import { at, idx } from './common/report';
import { checkWorkloadSelector } from './common/selectors';
import { checkTrafficPolicy } from './traffic-policy';
import type { SpecValidator } from './types';

export const validateDestinationRule: SpecValidator = (r, spec, meta) => {
  const host = str(r, spec['host'], 'spec.host') ?? '';
  const hostErr = wildcardDomainError(host);
  if (hostErr) r.error('spec.host', hostErr);
  checkTrafficPolicy(r, spec['trafficPolicy'], 'spec.trafficPolicy');
  const names = new RepeatFinder<string>();
  list(r, spec['subsets'], 'spec.subsets')?.forEach((s, i) => {
    const p = idx('spec.subsets', i);
    if (!isObject(s)) {
      if (s === null) r.error(p, 'subset may not be null');
      else obj(r, s, p);
      return;
    }
    const name = str(r, s['name'], at(p, 'name')) ?? '';
    if (names.isNewRepeat(name)) r.error(at(p, 'name'), `duplicate subset names: ${name}`);
    if (name === '') r.error(at(p, 'name'), 'subset name cannot be empty');
    else if (!isDNS1123Label(name)) r.error(at(p, 'name'), `subset name is invalid: ${name}`);
    for (const err of labelErrors(strMap(r, s['labels'], at(p, 'labels')) ?? {})) r.error(at(p, 'labels'), err);
    checkTrafficPolicy(r, s['trafficPolicy'], at(p, 'trafficPolicy'));
  });
  checkExportTo(r, meta.namespace, strList(r, spec['exportTo'], 'spec.exportTo'), 'spec.exportTo', {
    serviceEntry: false,
    destinationRuleWithSelector: spec['workloadSelector'] != null,
  });
  // DestinationRule uses the security API's selector shape ({matchLabels}).
  checkWorkloadSelector(r, spec['workloadSelector'], 'spec.workloadSelector');
};
