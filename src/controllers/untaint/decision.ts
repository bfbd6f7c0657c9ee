// The node untaint rule, as pure functions: a node that carries the istio-cni readiness taint
// loses it (and only it) once an istio-cni pod on that node reports Ready. Nothing here ever adds
// a taint: tainting new nodes is the cluster operator's (or the node pool's) job.

import type { JsonPatchOp } from '../../store/kube/writes';
import type { KubeObject } from '../../store/types';

/** The label istio-cni's DaemonSet puts on its pods (istiod selects them by it). */
export const CNI_POD_LABEL_KEY = 'k8s-app';
export const CNI_POD_LABEL_VALUE = 'istio-cni-node';
/** The same selection as a label selector, for the watch. */
export const CNI_POD_LABEL_SELECTOR = `${CNI_POD_LABEL_KEY}=${CNI_POD_LABEL_VALUE}`;
/** A Failed pod never becomes Ready again; the watch leaves it out as istiod's does. */
export const CNI_POD_FIELD_SELECTOR = 'status.phase!=Failed';

/** A node taint as the API holds it; extra fields are kept as they are. */
export interface Taint {
  key: string;
  value?: string;
  effect?: string;
  timeAdded?: string;
  [field: string]: unknown;
}

export interface UntaintRule {
  /** The taint key to remove (PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME). */
  taintKey: string;
  /** Where istio-cni runs (--cniNamespace). */
  cniNamespace: string;
}

export type UntaintDecision =
  { remove: true; taintKey: string; keep: Taint[] } | { remove: false; reason: 'no-taint' | 'cni-not-ready' };

/** The node's taints, or [] when it has none (or a spec we cannot read as a list). */
export function taintsOf(node: KubeObject): Taint[] {
  const taints = (node.spec as { taints?: unknown } | undefined)?.taints;
  return Array.isArray(taints) ? (taints as Taint[]) : [];
}

/** An istio-cni pod of the cni namespace, scheduled on `nodeName`, not Failed, with condition Ready=True. */
export function isReadyCniPod(pod: KubeObject, nodeName: string, cniNamespace: string): boolean {
  if (pod.metadata.namespace !== cniNamespace) return false;
  if (pod.metadata.labels?.[CNI_POD_LABEL_KEY] !== CNI_POD_LABEL_VALUE) return false;
  if ((pod.spec as { nodeName?: string } | undefined)?.nodeName !== nodeName) return false;
  const status = pod.status as { phase?: string; conditions?: { type: string; status: string }[] } | undefined;
  if (status?.phase === 'Failed') return false;
  return (status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Whether the taint goes: only when the node carries it and one of `pods` is a Ready istio-cni pod on it. */
export function untaintDecision(node: KubeObject, pods: readonly KubeObject[], rule: UntaintRule): UntaintDecision {
  const taints = taintsOf(node);
  const keep = taints.filter((t) => t.key !== rule.taintKey);
  if (keep.length === taints.length) return { remove: false, reason: 'no-taint' };
  if (!pods.some((p) => isReadyCniPod(p, node.metadata.name, rule.cniNamespace)))
    return { remove: false, reason: 'cni-not-ready' };
  return { remove: true, taintKey: rule.taintKey, keep };
}

/**
 * The JSON patch that removes every taint with `taintKey` from a node whose taints are `current`
 * (read just before), or undefined when none has it. The `test` op makes the API server refuse the
 * patch if the taints changed since that read, so a taint another writer just added is never
 * dropped by our `replace`.
 */
export function taintRemovalPatch(current: readonly Taint[], taintKey: string): JsonPatchOp[] | undefined {
  const keep = current.filter((t) => t.key !== taintKey);
  if (keep.length === current.length) return undefined;
  return [
    { op: 'test', path: '/spec/taints', value: current },
    { op: 'replace', path: '/spec/taints', value: keep },
  ];
}
