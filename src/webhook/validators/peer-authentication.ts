// PeerAuthentication (security.istio.io): the mTLS mode ztunnel and sidecars accept.

import { MutualTLS_Mode } from './common/enum-types';
import { enumOf, obj, strMap } from './common/fields';
import { at, key, Report } from './common/report';
import { checkWorkloadSelector } from './common/selectors';
import type { SpecValidator } from './types';

function checkMtls(r: Report, v: unknown, path: string): void {
  const m = obj(r, v, path);
  if (m) enumOf(r, m['mode'], at(path, 'mode'), MutualTLS_Mode);
}

export const validatePeerAuthentication: SpecValidator = (r, spec) => {
  const selector = obj(r, spec['selector'], 'spec.selector');
  const matchLabels = selector ? strMap(new Report(), selector['matchLabels'], '') : undefined;
  const emptySelector = !matchLabels || Object.keys(matchLabels).length === 0;
  checkMtls(r, spec['mtls'], 'spec.mtls');
  // An empty map decodes to unset, so `portLevelMtls: {}` is the same as leaving it out.
  const ports = obj(r, spec['portLevelMtls'], 'spec.portLevelMtls');
  const entries = Object.entries(ports ?? {});
  if (emptySelector && entries.length > 0)
    r.error('spec.portLevelMtls', 'mesh/namespace peer authentication cannot have port level mTLS');
  for (const [port, mtls] of entries) {
    const p = key('spec.portLevelMtls', port);
    if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) r.error(p, 'port must be in range 1..65535');
    checkMtls(r, mtls, p);
  }
  checkWorkloadSelector(r, spec['selector'], 'spec.selector');
};
