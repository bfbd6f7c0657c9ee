// WorkloadGroup (networking.istio.io): the template VMs register WorkloadEntries from.

import { eachMessage, int, isObject, list, obj, str, strMap, UINT32 } from './common/fields';
import { labelErrors } from './common/hosts';
import { portError } from './common/ports';
import { at, Report } from './common/report';
import type { SpecValidator } from './types';

const PROBE_HEADER_NAME = /^[-A-Za-z0-9]+$/;
const PROBE_COUNTERS = [
  'periodSeconds',
  'initialDelaySeconds',
  'timeoutSeconds',
  'successThreshold',
  'failureThreshold',
];

function checkPort(r: Report, v: unknown, path: string): void {
  const port = int(r, v, path, UINT32) ?? 0;
  const err = portError(port);
  if (err) r.error(path, err);
}

function checkProbe(r: Report, probe: Record<string, unknown>, path: string): void {
  for (const f of PROBE_COUNTERS) {
    const n = int(r, probe[f], at(path, f));
    if (n !== undefined && n < 0) r.error(at(path, f), `${f} must be non-negative`);
  }
  if (isObject(probe['httpGet'])) {
    const p = at(path, 'httpGet');
    const h = probe['httpGet'];
    checkPort(r, h['port'], at(p, 'port'));
    const scheme = str(r, h['scheme'], at(p, 'scheme')) ?? '';
    if (scheme !== '' && scheme !== 'HTTP' && scheme !== 'HTTPS')
      r.error(at(p, 'scheme'), 'httpGet.scheme must be one of "HTTPS", "HTTP"');
    eachMessage(r, h['httpHeaders'], at(p, 'httpHeaders'), 'invalid nil header', (o, hp) => {
      const name = str(r, o['name'], at(hp, 'name')) ?? '';
      if (name === '') r.error(at(hp, 'name'), 'header name cannot be empty');
      else if (!PROBE_HEADER_NAME.test(name)) r.error(at(hp, 'name'), `header name ${name} is not a valid header name`);
    });
  } else if (isObject(probe['tcpSocket'])) {
    checkPort(r, probe['tcpSocket']['port'], at(at(path, 'tcpSocket'), 'port'));
  } else if (isObject(probe['exec'])) {
    if (!list(r, probe['exec']['command'], at(path, 'exec.command')))
      r.error(at(path, 'exec.command'), 'exec.command is required');
  } else {
    r.error(path, 'one of httpGet, tcpSocket or exec must be set');
  }
}

export const validateWorkloadGroup: SpecValidator = (r, spec) => {
  if (!obj(r, spec['template'], 'spec.template')) {
    r.error('spec.template', 'template is required');
    return;
  }
  const metadata = obj(r, spec['metadata'], 'spec.metadata');
  if (metadata) {
    const labels = strMap(r, metadata['labels'], 'spec.metadata.labels');
    const errs = labelErrors(labels ?? {});
    if (errs.length > 0) {
      r.error('spec.metadata.labels', `invalid labels: ${errs.join('; ')}`);
      return;
    }
  }
  const probe = obj(r, spec['probe'], 'spec.probe');
  if (probe) checkProbe(r, probe, 'spec.probe');
};
