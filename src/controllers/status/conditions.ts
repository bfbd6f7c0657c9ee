// The words of the ambient status conditions: facts from the ambient index (what ztunnel got) to
// the condition istiod writes, with istiod's types, reasons and messages
// (pilot/pkg/model/service.go, serviceregistry/ambient/status.go and authorization.go).

import type { HttpAttributeEffect, PolicyStatusFacts } from '../../ambient/policy-status';
import type { ServiceEntryFacts, WaypointProblem, WaypointStatusFacts } from '../../ambient/waypoint-status';
import {
  WAYPOINT_CONTROLLER,
  type TargetBinding,
  type WaypointPolicyFacts,
} from '../../ambient/waypoint-policy-status';
import type { WorkloadWaypointFacts } from '../../ambient/workload-waypoint-status';

/** Condition types this controller owns; it never touches another type. */
export const CONDITION_TYPE = {
  /** On AuthorizationPolicies: whether ztunnel enforces the policy. */
  ztunnelAccepted: 'ZtunnelAccepted',
  /** On Services, ServiceEntries and WorkloadEntries: whether istio.io/use-waypoint bound a waypoint. */
  waypointBound: 'istio.io/WaypointBound',
  /** On AuthorizationPolicies with targetRefs: whether they reach a waypoint. */
  waypointAccepted: 'WaypointAccepted',
  /** On ServiceEntries that do nothing without a waypoint and have none. */
  waypointMissing: 'istio.io/WaypointMissing',
  /** On ServiceEntries, while meshConfig sets serviceEntryVisibility: what it resolved to. */
  visibilityApplied: 'istio.io/VisibilityApplied',
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
  invalid: 'Invalid',
  partiallyInvalid: 'PartiallyInvalid',
  ancestorNotBound: 'AncestorNotBound',
  targetNotFound: 'TargetNotFound',
  /** A targetRef kind no waypoint is reached through: istiod's placeholder reason, lower case. */
  unknown: 'unknown',
  noWaypointForWildcardService: 'NoWaypointForWildcardService',
  noWaypointForRacingConnectStrategy: 'NoWaypointForRacingConnectStrategy',
  visibilityPublic: 'Public',
  visibilityNamespace: 'Namespace',
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

/** istio.io/WaypointMissing and istio.io/VisibilityApplied of a ServiceEntry (service.go GetConditions). */
function serviceEntryConditions(entry: ServiceEntryFacts, bound: boolean): DesiredCondition[] {
  const out: DesiredCondition[] = [];
  // The connect strategy's reason wins over the wildcard's when both apply, as in istiod.
  if (!bound && entry.racingConnectStrategy)
    out.push({
      type: CONDITION_TYPE.waypointMissing,
      status: 'True',
      reason: REASON.noWaypointForRacingConnectStrategy,
      message:
        'ServiceEntry has a non-default connect strategy but no waypoint bound. ' +
        'A waypoint is required for connect strategies to take effect for ambient clients.',
    });
  else if (!bound && entry.wildcardHost)
    out.push({
      type: CONDITION_TYPE.waypointMissing,
      status: 'True',
      reason: REASON.noWaypointForWildcardService,
      message: 'ServiceEntry will not apply until it is bound to a valid waypoint.',
    });
  if (entry.visibility === 'PUBLIC')
    out.push({
      type: CONDITION_TYPE.visibilityApplied,
      status: 'True',
      reason: REASON.visibilityPublic,
      message: 'ServiceEntry is visible to the entire mesh (PUBLIC).',
    });
  else if (entry.visibility === 'NAMESPACE')
    out.push({
      type: CONDITION_TYPE.visibilityApplied,
      status: 'True',
      reason: REASON.visibilityNamespace,
      message: 'ServiceEntry is visible only within its own namespace (NAMESPACE), per mesh serviceEntryVisibility.',
    });
  return out;
}

/**
 * The istio.io/WaypointBound condition (none when the object names no waypoint: it is pruned),
 * and on a ServiceEntry its istio.io/WaypointMissing and istio.io/VisibilityApplied.
 */
export function waypointConditions(facts: WaypointStatusFacts | undefined): DesiredCondition[] {
  if (!facts) return [];
  const entry = facts.entry ? serviceEntryConditions(facts.entry, facts.bound !== undefined) : [];
  return [...waypointBoundConditions(facts), ...entry];
}

function waypointBoundConditions(facts: WaypointStatusFacts): DesiredCondition[] {
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

/** A WorkloadEntry's istio.io/WaypointBound: no ingress or canary words (service.go WorkloadInfo.GetConditions). */
export function workloadEntryConditions(facts: WorkloadWaypointFacts | undefined): DesiredCondition[] {
  if (!facts) return [];
  const type = CONDITION_TYPE.waypointBound;
  if (facts.bound)
    return [
      {
        type,
        status: 'True',
        reason: REASON.waypointAccepted,
        message: `Successfully attached to waypoint ${facts.bound}`,
      },
    ];
  if (!facts.problem) return [];
  return [{ type, status: 'False', ...waypointProblemStatus(facts.problem) }];
}

/** What istiod says of one targetRef (policies.go WaypointPolicyStatusCollection). */
export function targetStatus(b: TargetBinding): { bound: boolean; reason: string; message: string } {
  switch (b.kind) {
    case 'bound':
      return { bound: true, reason: REASON.accepted, message: `bound to ${b.via}` };
    case 'gatewayClassOutsideRoot':
      return {
        bound: false,
        reason: REASON.invalid,
        message: `AuthorizationPolicy must be in the root namespace \`${b.rootNamespace}\` when referencing a GatewayClass`,
      };
    case 'gatewayClassNotWaypoint':
      return {
        bound: false,
        reason: REASON.invalid,
        message: `GatewayClass must use controller name \`${WAYPOINT_CONTROLLER}\` for waypoints`,
      };
    case 'targetNotFound':
      return {
        bound: false,
        reason: REASON.targetNotFound,
        // istiod names only a missing Service or ServiceEntry; a missing Gateway(Class) is "not bound".
        message:
          b.targetKind === 'Service' || b.targetKind === 'ServiceEntry'
            ? `${b.targetKind} ${b.target} was not found`
            : 'not bound',
      };
    case 'ancestorNotBound':
      return {
        bound: false,
        reason: REASON.ancestorNotBound,
        message: `${b.targetKind} ${b.target} is not bound to a waypoint`,
      };
    case 'unsupportedKind':
      return { bound: false, reason: REASON.unknown, message: 'not bound' };
  }
}

/**
 * The WaypointAccepted condition of a policy with targetRefs (istiod's flattenConditions): one
 * target speaks for itself; several make True/Accepted when all are bound, True/PartiallyInvalid
 * when some are, False/Invalid when none are, naming the unbound ones.
 */
export function waypointPolicyConditions(facts: WaypointPolicyFacts | undefined): DesiredCondition[] {
  if (!facts || facts.targets.length === 0) return [];
  const generation = facts.generation > 0 ? { observedGeneration: facts.generation } : {};
  const type = CONDITION_TYPE.waypointAccepted;
  const statuses = facts.targets.map((t) => ({ ancestor: t.ancestor, ...targetStatus(t.binding) }));
  const only = statuses.length === 1 ? statuses[0] : undefined;
  if (only)
    return [{ type, status: only.bound ? 'True' : 'False', reason: only.reason, message: only.message, ...generation }];
  const unbound = statuses.filter((s) => !s.bound).map((s) => s.ancestor);
  const anyBound = unbound.length < statuses.length;
  const reason = !anyBound ? REASON.invalid : unbound.length > 0 ? REASON.partiallyInvalid : REASON.accepted;
  const message = unbound.length > 0 ? `Invalid targetRefs: ${unbound.join(', ')}` : '';
  return [{ type, status: anyBound ? 'True' : 'False', reason, message, ...generation }];
}
