// Checks on every kind's metadata, before its spec: internal annotations users may not set,
// and the dry-run annotation that only AuthorizationPolicy understands.

import { parseGoBool } from '../../config/bool';
import { isObject, JsonObject, quote } from './common/fields';
import { Report } from './common/report';
import { AUTHZ_ACTIONS } from './authorization-policy';
import type { ObjectMeta } from './types';

/** istiod's own readiness probe creates a dry-run Gateway with this; it must always be denied. */
export const ALWAYS_REJECT_ANNOTATION = 'internal.istio.io/webhook-always-reject';
export const PARENT_NAMESPACE_ANNOTATION = 'internal.istio.io/parent-namespace';
export const PARENTS_ANNOTATION = 'internal.istio.io/parents';
export const DRY_RUN_ANNOTATION = 'istio.io/dry-run';

/** Returns false when validation must stop here (istiod returns at the first metadata error). */
export function checkMetadata(r: Report, kind: string, meta: ObjectMeta, spec: JsonObject): boolean {
  const a = meta.annotations;
  const path = 'metadata.annotations';
  if (DRY_RUN_ANNOTATION in a) {
    const value = a[DRY_RUN_ANNOTATION];
    if (kind !== 'AuthorizationPolicy') {
      r.error(
        path,
        `${meta.namespace}/${meta.name} has unsupported annotation ${DRY_RUN_ANNOTATION}, please remove the annotation`,
      );
      return false;
    }
    const raw = spec['action'];
    const action = typeof raw === 'number' ? AUTHZ_ACTIONS[raw] : raw === undefined || raw === null ? 'ALLOW' : raw;
    const shown = typeof action === 'string' ? action : quote(action);
    if (action !== 'ALLOW' && action !== 'DENY') {
      r.error(
        path,
        `the annotation ${DRY_RUN_ANNOTATION} currently only supports action ALLOW/DENY, found action ${shown} in ${meta.namespace}/${meta.name}`,
      );
      return false;
    }
    if (parseGoBool(value) === undefined) {
      r.error(
        path,
        `${meta.namespace}/${meta.name} has annotation ${DRY_RUN_ANNOTATION} with invalid value (${value}): must be true or false`,
      );
      return false;
    }
  }
  if (ALWAYS_REJECT_ANNOTATION in a) {
    r.error(path, `"${ALWAYS_REJECT_ANNOTATION}" annotation found, rejecting`);
    return false;
  }
  for (const internal of [PARENT_NAMESPACE_ANNOTATION, PARENTS_ANNOTATION]) {
    if (internal in a) {
      r.error(path, `"${internal}" annotation found, this may not be set by users`);
      return false;
    }
  }
  return true;
}

/** Reads name, namespace, labels and annotations; wrong types are errors at their path. */
export function readMetadata(r: Report, v: unknown): ObjectMeta {
  const m = isObject(v) ? v : {};
  if (v !== undefined && v !== null && !isObject(v)) r.error('metadata', 'must be an object');
  const strings = (x: unknown, path: string): Record<string, string> => {
    if (x === undefined || x === null) return {};
    if (!isObject(x)) {
      r.error(path, 'must be a map of strings');
      return {};
    }
    const out: Record<string, string> = {};
    for (const [k, val] of Object.entries(x)) {
      if (typeof val === 'string') out[k] = val;
      else r.error(`${path}[${JSON.stringify(k)}]`, 'must be a string');
    }
    return out;
  };
  const text = (x: unknown, path: string): string => {
    if (x === undefined || x === null) return '';
    if (typeof x !== 'string') {
      r.error(path, 'must be a string');
      return '';
    }
    return x;
  };
  return {
    name: text(m['name'] ?? m['generateName'], 'metadata.name'),
    namespace: text(m['namespace'], 'metadata.namespace'),
    labels: strings(m['labels'], 'metadata.labels'),
    annotations: strings(m['annotations'], 'metadata.annotations'),
  };
}
