// Whether each targetRef of an AuthorizationPolicy reaches a waypoint, as plain facts for its
// WaypointAccepted condition (istiod's WaypointPolicyStatusCollection). The words, and how several
// targets make one condition, are the status controller's; this file only says what each target is.

import type { KubeObject } from '../store/types';
import { MANAGED_EASTWEST_CONTROLLER, MANAGED_MESH_CONTROLLER, LABEL } from './constants';
import type { MeshView } from './view';
import { visibilityFor } from './visibility';
import { resolveTarget } from './waypoint-status';

/** The controller a GatewayClass of waypoints names. */
export const WAYPOINT_CONTROLLER = 'istio.io/mesh-controller';

export type TargetKind = 'GatewayClass' | 'Gateway' | 'Service' | 'ServiceEntry';

export type TargetBinding =
  /** The policy reaches `via`: the GatewayClass name, or `<namespace>/<name>` of the waypoint. */
  | { kind: 'bound'; via: string }
  /** A GatewayClass target from outside the root namespace (it would apply mesh-wide). */
  | { kind: 'gatewayClassOutsideRoot'; rootNamespace: string }
  /** The GatewayClass is not one of waypoints. */
  | { kind: 'gatewayClassNotWaypoint' }
  /** No such object (for a Gateway: no such waypoint). `target` is `<namespace>/<name>`. */
  | { kind: 'targetNotFound'; targetKind: TargetKind; target: string }
  /** The Service or ServiceEntry exists but has no waypoint. */
  | { kind: 'ancestorNotBound'; targetKind: 'Service' | 'ServiceEntry'; target: string }
  /** A kind no waypoint can be reached through. */
  | { kind: 'unsupportedKind' };

export interface TargetFacts {
  /** `<kind>.<group or core>:<namespace>/<name>`, as istiod names a policy's ancestor. */
  ancestor: string;
  binding: TargetBinding;
}

export interface WaypointPolicyFacts {
  namespace: string;
  name: string;
  generation: number;
  /** One per targetRef, in the policy's order. */
  targets: TargetFacts[];
}

type Fields = Record<string, unknown>;
const asFields = (v: unknown): Fields => (v !== null && typeof v === 'object' ? (v as Fields) : {});
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** istiod's GetTargetRefs: targetRefs, else the single targetRef. */
export function targetRefsOf(spec: Fields): Fields[] {
  const many = spec['targetRefs'];
  if (Array.isArray(many) && many.length > 0) return many.map(asFields);
  return spec['targetRef'] ? [asFields(spec['targetRef'])] : [];
}

/**
 * istiod's fetchWaypointForService without the reasons: the Service or ServiceEntry's waypoint, if
 * it has one that carries service traffic. Only a ServiceEntry's visibility forbids another
 * namespace's waypoint; whether ztunnel gets a Service from the object does not matter here.
 */
function serviceBoundTo(kind: 'Service' | 'ServiceEntry', o: KubeObject, view: MeshView): string | undefined {
  const managed = o.metadata.labels?.[LABEL.managedGateway];
  if (managed === MANAGED_MESH_CONTROLLER || managed === MANAGED_EASTWEST_CONTROLLER) return undefined;
  const namespace = o.metadata.namespace ?? '';
  const { waypoint } = resolveTarget(namespace, o.metadata.labels, view);
  if (!waypoint || (waypoint.trafficType !== 'service' && waypoint.trafficType !== 'all')) return undefined;
  if (kind === 'ServiceEntry' && waypoint.namespace !== namespace) {
    const nsLabels = view.get('Namespace', undefined, namespace)?.metadata.labels;
    if (visibilityFor(view.settings.serviceEntryVisibility, nsLabels) === 'NAMESPACE') return undefined;
  }
  return `${waypoint.namespace}/${waypoint.name}`;
}

function bindingOf(kind: string, namespace: string, name: string, view: MeshView): TargetBinding {
  const key = `${namespace}/${name}`;
  switch (kind) {
    case 'GatewayClass': {
      const root = view.settings.rootNamespace;
      if (namespace !== root) return { kind: 'gatewayClassOutsideRoot', rootNamespace: root };
      const cls = view.get('GatewayClass', undefined, name);
      if (!cls) return { kind: 'targetNotFound', targetKind: 'GatewayClass', target: key };
      if (text(asFields(cls.spec)['controllerName']) !== WAYPOINT_CONTROLLER)
        return { kind: 'gatewayClassNotWaypoint' };
      return { kind: 'bound', via: cls.metadata.name };
    }
    case 'Gateway':
      return view.waypoint(namespace, name)
        ? { kind: 'bound', via: key }
        : { kind: 'targetNotFound', targetKind: 'Gateway', target: key };
    case 'Service':
    case 'ServiceEntry': {
      const o = view.get(kind, namespace, name);
      if (!o) return { kind: 'targetNotFound', targetKind: kind, target: key };
      const via = serviceBoundTo(kind, o, view);
      return via ? { kind: 'bound', via } : { kind: 'ancestorNotBound', targetKind: kind, target: key };
    }
    default:
      return { kind: 'unsupportedKind' };
  }
}

/** The facts for an AuthorizationPolicy, or undefined when it has no targetRef (no waypoint's business). */
export function waypointPolicyFacts(ap: KubeObject, view: MeshView): WaypointPolicyFacts | undefined {
  const refs = targetRefsOf(asFields(ap.spec));
  if (refs.length === 0) return undefined;
  const policyNamespace = ap.metadata.namespace ?? '';
  const targets = refs.map((ref): TargetFacts => {
    const kind = text(ref['kind']);
    const namespace = text(ref['namespace']) || policyNamespace;
    const name = text(ref['name']);
    const group = text(ref['group']) || 'core';
    return { ancestor: `${kind}.${group}:${namespace}/${name}`, binding: bindingOf(kind, namespace, name, view) };
  });
  return { namespace: policyNamespace, name: ap.metadata.name, generation: ap.metadata.generation ?? 0, targets };
}
