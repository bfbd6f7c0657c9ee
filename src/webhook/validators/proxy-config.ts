// ProxyConfig (networking.istio.io): per-workload proxy settings.

import { int, obj } from './common/fields';
import { checkWorkloadSelector } from './common/selectors';
import type { SpecValidator } from './types';

export const validateProxyConfig: SpecValidator = (r, spec) => {
  checkWorkloadSelector(r, spec['selector'], 'spec.selector');
  // concurrency is a google.protobuf.Int32Value: a bare number in JSON.
  const concurrency = int(r, spec['concurrency'], 'spec.concurrency');
  if (concurrency !== undefined && concurrency < 0)
    r.error('spec.concurrency', 'concurrency must be greater than or equal to 0');
  obj(r, spec['environmentVariables'], 'spec.environmentVariables');
};
