// Which workloads a policy applies to: a label selector, or references to a Service,
// ServiceEntry, Gateway or GatewayClass. istiod allows only one of these per policy.

import { JsonObject, list, obj, str, strMap } from './fields';
import { at, idx, key, Report } from './report';

function checkSelectorLabels(r: Report, labels: Record<string, string> | undefined, path: string): void {
  for (const [k, v] of Object.entries(labels ?? {})) {
    if (k === '') r.error(key(path, k), `empty key is not supported in selector: "${k}=${v}"`);
    if (k.includes('*') || v.includes('*')) r.error(key(path, k), `wildcard is not supported in selector: "${k}=${v}"`);
  }
}

/** The security API's `selector: {matchLabels}`; present but without labels is a warning. */
export function checkWorkloadSelector(
  r: Report,
  selector: unknown,
  path: string,
  warning = 'workload selector specified without labels',
): void {
  const sel = obj(r, selector, path);
  if (!sel) return;
  const labels = strMap(r, sel['matchLabels'], at(path, 'matchLabels'));
  checkSelectorLabels(r, labels, at(path, 'matchLabels'));
  if (!labels || Object.keys(labels).length === 0) r.warn(path, warning);
}

/**
 * The networking API's `spec.workloadSelector: {labels}` (ServiceEntry, Sidecar, EnvoyFilter); the
 * warning for one without labels starts with `what`. False when it found an error: istiod stops there.
 */
export function checkAlphaWorkloadSelector(r: Report, spec: JsonObject, what: string): boolean {
  const before = r.errorCount;
  const path = 'spec.workloadSelector';
  const sel = obj(r, spec['workloadSelector'], path);
  if (!sel) return r.errorCount === before;
  const labels = strMap(r, sel['labels'], at(path, 'labels'));
  checkSelectorLabels(r, labels, at(path, 'labels'));
  if (!labels || Object.keys(labels).length === 0)
    r.warn(path, `${what}: workload selector specified without labels, will be applied to all services in namespace`);
  return r.errorCount === before;
}

/** group/kind pairs a targetRef may name; the version is not checked. An empty group is core. */
export const ALLOWED_TARGET_REFS: readonly { group: string; kind: string }[] = [
  { group: 'core', kind: 'Service' },
  { group: 'networking.istio.io', kind: 'ServiceEntry' },
  { group: 'gateway.networking.k8s.io', kind: 'Gateway' },
  { group: 'gateway.networking.k8s.io', kind: 'GatewayClass' },
];

export function checkTargetRef(r: Report, ref: unknown, path: string): void {
  const t = obj(r, ref, path);
  if (!t) return;
  const name = str(r, t['name'], at(path, 'name')) ?? '';
  const namespace = str(r, t['namespace'], at(path, 'namespace')) ?? '';
  const group = str(r, t['group'], at(path, 'group')) ?? '';
  const kind = str(r, t['kind'], at(path, 'kind')) ?? '';
  if (name === '') r.error(at(path, 'name'), 'targetRef name must be set');
  if (namespace !== '')
    r.error(at(path, 'namespace'), 'targetRef namespace must not be set; cross namespace referencing is not supported');
  const canonical = group === '' ? 'core' : group;
  if (!ALLOWED_TARGET_REFS.some((a) => a.group === canonical && a.kind === kind)) {
    const allowed = ALLOWED_TARGET_REFS.map((a) => `${a.group}/${a.kind}`).join(', ');
    r.error(path, `targetRef must be to one of ${allowed} but was ${group}/${kind}`);
  }
}

/** selector/targetRef/targetRefs of a policy: each valid, and at most one of them set. */
export function checkPolicyTargeting(r: Report, spec: JsonObject, path: string): void {
  const refs = list(r, spec['targetRefs'], at(path, 'targetRefs'));
  const set = [spec['selector'] != null, spec['targetRef'] != null, refs !== undefined].filter(Boolean).length;
  if (set > 1) r.error(path, 'only one of targetRefs or workloadSelector can be set');
  checkWorkloadSelector(r, spec['selector'], at(path, 'selector'));
  checkTargetRef(r, spec['targetRef'], at(path, 'targetRef'));
  refs?.forEach((ref, i) => checkTargetRef(r, ref, idx(at(path, 'targetRefs'), i)));
}
