// The ambient status conditions in istiod's exact words (pilot/pkg/model/service.go,
// serviceregistry/ambient/status.go and authorization.go).

import { CONDITION_TYPE, policyConditions, waypointConditions } from '../../../../src/controllers/status/conditions';
import type { PolicyOutcome } from '../../../../src/ambient/policy-status';
import type { WaypointProblem } from '../../../../src/ambient/waypoint-status';

const policy = (outcome: PolicyOutcome, generation = 4) =>
  policyConditions({ namespace: 'ns1', name: 'p', generation, outcome });

describe('ZtunnelAccepted on AuthorizationPolicies', () => {
  test('an accepted policy is True/Accepted "attached to ztunnel" at its generation', () => {
    expect(policy({ kind: 'accepted' })).toEqual([
      {
        type: 'ZtunnelAccepted',
        status: 'True',
        reason: 'Accepted',
        message: 'attached to ztunnel',
        observedGeneration: 4,
      },
    ]);
  });

  test('HTTP attributes in an ALLOW policy: True/UnsupportedValue naming them', () => {
    expect(
      policy({ kind: 'httpAttributesIgnored', attributes: ['methods', 'paths'], effect: 'allowRulesOmitted' }),
    ).toEqual([
      {
        type: 'ZtunnelAccepted',
        status: 'True',
        reason: 'UnsupportedValue',
        message:
          'ztunnel does not support HTTP attributes (found: methods, paths). In ambient mode you must use a waypoint ' +
          'proxy to enforce HTTP rules. Within an ALLOW policy, rules matching HTTP attributes are omitted. This will ' +
          'be more restrictive than requested.',
        observedGeneration: 4,
      },
    ]);
  });

  test('HTTP attributes in a DENY policy: enforced without them, or with no effect at all', () => {
    expect(
      policy({ kind: 'httpAttributesIgnored', attributes: ['hosts'], effect: 'denyWithoutHttpRules' })[0]?.message,
    ).toBe(
      'ztunnel does not support HTTP attributes (found: hosts). In ambient mode you must use a waypoint proxy to ' +
        'enforce HTTP rules. DENY policy with HTTP attributes is enforced without the HTTP rules. This will be more ' +
        'restrictive than requested.',
    );
    expect(
      policy({ kind: 'httpAttributesIgnored', attributes: ['hosts'], effect: 'denyHasNoEffect' })[0]?.message,
    ).toBe(
      'ztunnel does not support HTTP attributes (found: hosts). In ambient mode you must use a waypoint proxy to ' +
        'enforce HTTP rules. After omitting unsupported HTTP attributes, this DENY policy has no enforceable rules ' +
        'at ztunnel and will have no effect. Deploy a waypoint proxy and use a targetRef to enforce this policy.',
    );
  });

  test('a dry-run policy without dry-run support is False/UnsupportedValue', () => {
    expect(policy({ kind: 'dryRunUnsupported' })).toEqual([
      {
        type: 'ZtunnelAccepted',
        status: 'False',
        reason: 'UnsupportedValue',
        message:
          'found policy "ns1/p" using dry-run annotation, but support for ambient dry-run authorizationPolicies isn\'t enabled',
        observedGeneration: 4,
      },
    ]);
  });

  test('an action ztunnel cannot enforce is False/UnsupportedValue', () => {
    expect(policy({ kind: 'unsupportedAction', action: 'CUSTOM' })).toEqual([
      {
        type: 'ZtunnelAccepted',
        status: 'False',
        reason: 'UnsupportedValue',
        message: 'ztunnel does not support the CUSTOM action',
        observedGeneration: 4,
      },
    ]);
  });

  test('a policy that is not ztunnel’s gets none, and generation 0 is omitted as istiod omits it', () => {
    expect(policyConditions(undefined)).toEqual([]);
    expect(policy({ kind: 'accepted' }, 0)[0]).not.toHaveProperty('observedGeneration');
  });
});

describe('istio.io/WaypointBound on Services and ServiceEntries', () => {
  const base = { kind: 'Service' as const, namespace: 'ns1', name: 'app' };
  const bound = (ingressLabelPresent = false, ingressUseWaypoint = false) => ({
    waypoint: 'ns1/wp',
    ingressLabelPresent,
    ingressUseWaypoint,
  });

  test('bound: True/WaypointAccepted, with the ingress sentence when the label is set', () => {
    expect(waypointConditions({ ...base, bound: bound() })).toEqual([
      {
        type: CONDITION_TYPE.waypointBound,
        status: 'True',
        reason: 'WaypointAccepted',
        message: 'Successfully attached to waypoint ns1/wp',
      },
    ]);
    expect(waypointConditions({ ...base, bound: bound(true, true) })[0]?.message).toBe(
      'Successfully attached to waypoint ns1/wp. Ingress traffic will traverse the waypoint',
    );
    expect(waypointConditions({ ...base, bound: bound(true, false) })[0]?.message).toBe(
      'Successfully attached to waypoint ns1/wp. Ingress traffic is not using the waypoint, set the ' +
        'istio.io/ingress-use-waypoint label to true if desired.',
    );
  });

  test('a canary problem stays True and is appended to the message', () => {
    expect(
      waypointConditions({ ...base, bound: bound(), problem: { kind: 'canarySameAsPrimary', waypoint: 'ns1/wp' } })[0],
    ).toEqual({
      type: 'istio.io/WaypointBound',
      status: 'True',
      reason: 'WaypointAccepted',
      message:
        'Successfully attached to waypoint ns1/wp. Canary waypoint not attached: canary waypoint "ns1/wp" must ' +
        'differ from the primary waypoint',
    });
  });

  const cases: [WaypointProblem, string, string][] = [
    [{ kind: 'notReady', waypoint: 'ns1/wp' }, 'WaypointIsNotReady', 'waypoint "ns1/wp" is not ready'],
    [
      { kind: 'attachmentDenied', waypoint: 'o/wp' },
      'AttachmentDenied',
      'we are not permitted to attach to waypoint "o/wp" (missing allowedRoutes?)',
    ],
    [
      { kind: 'unsupportedTrafficType', waypoint: 'ns1/wp', trafficType: 'service' },
      'UnsupportedTrafficType',
      'attempting to bind to traffic type "service" which the waypoint "ns1/wp" does not support',
    ],
    [
      { kind: 'crossNamespaceForbidden', waypoint: 'o/wp' },
      'CrossNamespaceWaypointForbidden',
      'cannot bind to waypoint "o/wp" in another namespace: cross-namespace waypoint binding is not permitted for ' +
        'a ServiceEntry with NAMESPACE visibility',
    ],
    [
      { kind: 'canaryInvalidWeight', waypoint: 'ns1/c' },
      'CanaryInvalidWeight',
      'canary waypoint "ns1/c" has an invalid weight; must be an integer in [0,100]',
    ],
  ];
  test.each(cases)('unresolved %j: False with istiod’s reason and message', (problem, reason, message) => {
    expect(waypointConditions({ ...base, problem })).toEqual([
      { type: 'istio.io/WaypointBound', status: 'False', reason, message },
    ]);
  });

  test('nothing named, or no Service for ztunnel: no condition (a written one is pruned)', () => {
    expect(waypointConditions(base)).toEqual([]);
    expect(waypointConditions(undefined)).toEqual([]);
  });
});
