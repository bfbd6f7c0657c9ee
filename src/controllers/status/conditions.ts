// The words of the ambient status conditions: facts from the ambient index (what ztunnel got) to
// the condition istiod writes, with istiod's types, reasons and messages
// (pilot/pkg/model/service.go, serviceregistry/ambient/status.go and authorization.go).

import type { HttpAttributeEffect, PolicyStatusFacts } from '../../ambient/policy-status';
import type { WaypointProblem, WaypointStatusFacts } from '../../ambient/waypoint-status';

/** Condition types this controller owns; it never touches another type. */
export const CONDITION_TYPE = {
  /** On AuthorizationPolicies: whether ztunnel enforces the policy. */
  ztunnelAccepted: 'ZtunnelAccepted',
  /** On Services and ServiceEntries: whether istio.io/use-waypoint bound a waypoint. */
  waypointBound: 'istio.io/WaypointBound',
} as const;

export const REASON = {
  accepted: 'Accepted',
  unsupportedValue: 'UnsupportedValue',
  waypointAccepted: 'WaypointAccepted',
  waypointIsNotReady: 'WaypointIsNotReady',
  attachmentDenied: 'AttachmentDenied',
  unsupportedTrafficType: 'UnsupportedTrafficType',
  canaryInvalidWeight: 'CanaryInvalidWeight',
  canarySameAsPrimary: 'CanarySameAsPrimary',
  crossNamespaceWaypointForbidden: 'CrossNamespaceWaypointForbidden',
} as const;

/** A condition as this controller decides it; lastTransitionTime is added when it is merged. */
export interface DesiredCondition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
  /** Omitted when 0, as istiod's IstioCondition (omitempty). */
  observedGeneration?: number;
}

export const ATTACHED_TO_ZTUNNEL = 'attached to ztunnel';

const HTTP_EFFECT_SENTENCE: Record<HttpAttributeEffect, string> = {
  allowRulesOmitted:
    'Within an ALLOW policy, rules matching HTTP attributes are omitted. This will be more restrictive than requested.',
  denyWithoutHttpRules:
    'DENY policy with HTTP attributes is enforced without the HTTP rules. This will be more restrictive than requested.',
  denyHasNoEffect:
    'After omitting unsupported HTTP attributes, this DENY policy has no enforceable rules at ztunnel and will have ' +
    'no effect. Deploy a waypoint proxy and use a targetRef to enforce this policy.',
};

/** istiod's httpRuleFmt: the attributes found, then what that means for this policy. */
export function httpAttributesMessage(attributes: readonly string[], effect: HttpAttributeEffect): string {
  return (
    `ztunnel does not support HTTP attributes (found: ${attributes.join(', ')}). ` +
    `In ambient mode you must use a waypoint proxy to enforce HTTP rules. ${HTTP_EFFECT_SENTENCE[effect]}`
  );
}

/** The ZtunnelAccepted condition of a policy; none when ztunnel has no part in it (targetRef). */
export function policyConditions(facts: PolicyStatusFacts | undefined): DesiredCondition[] {
  if (!facts) return [];
  const generation = facts.generation > 0 ? { observedGeneration: facts.generation } : {};
  const o = facts.outcome;
  const condition = (status: 'True' | 'False', reason: string, message: string): DesiredCondition[] => [
    { type: CONDITION_TYPE.ztunnelAccepted, status, reason, message, ...generation },
  ];
  switch (o.kind) {
    case 'accepted':
      return condition('True', REASON.accepted, ATTACHED_TO_ZTUNNEL);
    case 'httpAttributesIgnored':
      return condition('True', REASON.unsupportedValue, httpAttributesMessage(o.attributes, o.effect));
    case 'dryRunUnsupported':
      return condition(
        'False',
        REASON.unsupportedValue,
        `found policy "${facts.namespace}/${facts.name}" using dry-run annotation, ` +
          "but support for ambient dry-run authorizationPolicies isn't enabled",
      );
    case 'unsupportedAction':
      return condition('False', REASON.unsupportedValue, `ztunnel does not support the ${o.action} action`);
  }
}

/**
 * Go's %q for a waypoint name. Names come from label values and Kubernetes names, which hold no
 * quote, backslash or control character, so JSON's quoting is the same.
 */
const quoted = (s: string) => JSON.stringify(s);

/** The reason and message istiod reports for a waypoint that cannot be used. */
export function waypointProblemStatus(p: WaypointProblem): { reason: string; message: string } {
  const w = quoted(p.waypoint);
  switch (p.kind) {
    case 'notReady':
      return { reason: REASON.waypointIsNotReady, message: `waypoint ${w} is not ready` };
    case 'attachmentDenied':
      return {
        reason: REASON.attachmentDenied,
        message: `we are not permitted to attach to waypoint ${w} (missing allowedRoutes?)`,
      };
    case 'unsupportedTrafficType':
      return {
        reason: REASON.unsupportedTrafficType,
        message: `attempting to bind to traffic type ${quoted(p.trafficType)} which the waypoint ${w} does not support`,
      };
    case 'crossNamespaceForbidden':
      return {
        reason: REASON.crossNamespaceWaypointForbidden,
        message:
          `cannot bind to waypoint ${w} in another namespace: cross-namespace waypoint binding is ` +
          'not permitted for a ServiceEntry with NAMESPACE visibility',
      };
    case 'canaryInvalidWeight':
      return {
        reason: REASON.canaryInvalidWeight,
        message: `canary waypoint ${w} has an invalid weight; must be an integer in [0,100]`,
      };
    case 'canarySameAsPrimary':
      return {
        reason: REASON.canarySameAsPrimary,
        message: `canary waypoint ${w} must differ from the primary waypoint`,
      };
  }
}

/** The istio.io/WaypointBound condition: none when the object names no waypoint (it is pruned). */
export function waypointConditions(facts: WaypointStatusFacts | undefined): DesiredCondition[] {
  if (!facts) return [];
  const type = CONDITION_TYPE.waypointBound;
  if (facts.bound) {
    let message = `Successfully attached to waypoint ${facts.bound.waypoint}`;
    if (facts.bound.ingressUseWaypoint) message += '. Ingress traffic will traverse the waypoint';
    else if (facts.bound.ingressLabelPresent)
      message +=
        '. Ingress traffic is not using the waypoint, set the istio.io/ingress-use-waypoint label to true if desired.';
    // A canary that cannot be used leaves the object bound to its primary.
    if (facts.problem) message += `. Canary waypoint not attached: ${waypointProblemStatus(facts.problem).message}`;
    return [{ type, status: 'True', reason: REASON.waypointAccepted, message }];
  }
  if (!facts.problem) return [];
  return [{ type, status: 'False', ...waypointProblemStatus(facts.problem) }];
}
