// Typed reads of the few spec/status fields that decisions outside the ambient index rest on (who
// runs where, which account, which phase). KubeObject leaves spec and status untyped because each
// kind's shape belongs to its readers; these read them as unknown and narrow, so a field of the
// wrong type reads as absent instead of flowing on as `any`.

import type { KubeObject } from './types';

/** `value[key]` when `value` is an object and that field is a string. */
function stringField(value: unknown, key: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const field: unknown = (value as Record<string, unknown>)[key];
  return typeof field === 'string' ? field : undefined;
}

/** spec.nodeName of a Pod: the node it is scheduled on, absent while pending (or with no pod). */
export function podNodeName(pod: KubeObject | undefined): string | undefined {
  return stringField(pod?.spec, 'nodeName');
}

/** spec.serviceAccountName of a Pod, as written (Kubernetes fills in "default" when it is empty). */
export function podServiceAccountName(pod: KubeObject): string | undefined {
  return stringField(pod.spec, 'serviceAccountName');
}

/** status.phase of a Pod or Namespace (Pending, Running, Succeeded, Failed; Active, Terminating). */
export function statusPhase(object: KubeObject): string | undefined {
  return stringField(object.status, 'phase');
}
