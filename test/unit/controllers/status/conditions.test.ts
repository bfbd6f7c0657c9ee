// The ambient status conditions in istiod's exact words (pilot/pkg/model/service.go,
// serviceregistry/ambient/status.go, authorization.go and policies.go).

import {
  CONDITION_TYPE,
  policyConditions,
  waypointConditions,
  waypointPolicyConditions,
  workloadEntryConditions,
} from '../../../../src/controllers/status/conditions';
import type { PolicyOutcome } from '../../../../src/ambient/policy-status';
import type { ServiceEntryFacts, WaypointProblem } from '../../../../src/ambient/waypoint-status';
import type { TargetBinding, TargetFacts } from '../../../../src/ambient/waypoint-policy-status';

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

describe('WaypointAccepted on AuthorizationPolicies with targetRefs', () => {
  const target = (ancestor: string, binding: TargetBinding): TargetFacts => ({ ancestor, binding });
  const accepted = (targets: TargetFacts[], generation = 2) =>
    waypointPolicyConditions({ namespace: 'ns1', name: 'p', generation, targets });
  const gw = (name: string, binding: TargetBinding) => target(`Gateway.gateway.networking.k8s.io:ns1/${name}`, binding);

  const single: [TargetBinding, 'True' | 'False', string, string][] = [
    [{ kind: 'bound', via: 'ns1/wp' }, 'True', 'Accepted', 'bound to ns1/wp'],
    [{ kind: 'bound', via: 'istio-waypoint' }, 'True', 'Accepted', 'bound to istio-waypoint'],
    [{ kind: 'targetNotFound', targetKind: 'Gateway', target: 'ns1/wp' }, 'False', 'TargetNotFound', 'not bound'],
    [{ kind: 'targetNotFound', targetKind: 'GatewayClass', target: 'ns1/c' }, 'False', 'TargetNotFound', 'not bound'],
    [
      { kind: 'targetNotFound', targetKind: 'Service', target: 'ns1/app' },
      'False',
      'TargetNotFound',
      'Service ns1/app was not found',
    ],
    [
      { kind: 'targetNotFound', targetKind: 'ServiceEntry', target: 'ns1/se' },
      'False',
      'TargetNotFound',
      'ServiceEntry ns1/se was not found',
    ],
    [
      { kind: 'ancestorNotBound', targetKind: 'Service', target: 'ns1/app' },
      'False',
      'AncestorNotBound',
      'Service ns1/app is not bound to a waypoint',
    ],
    [
      { kind: 'ancestorNotBound', targetKind: 'ServiceEntry', target: 'ns1/se' },
      'False',
      'AncestorNotBound',
      'ServiceEntry ns1/se is not bound to a waypoint',
    ],
    [
      { kind: 'gatewayClassOutsideRoot', rootNamespace: 'istio-system' },
      'False',
      'Invalid',
      'AuthorizationPolicy must be in the root namespace `istio-system` when referencing a GatewayClass',
    ],
    [
      { kind: 'gatewayClassNotWaypoint' },
      'False',
      'Invalid',
      'GatewayClass must use controller name `istio.io/mesh-controller` for waypoints',
    ],
    [{ kind: 'unsupportedKind' }, 'False', 'unknown', 'not bound'],
  ];
  test.each(single)('one target %j: %s/%s %j, at the generation', (binding, status, reason, message) => {
    expect(accepted([gw('wp', binding)])).toEqual([
      { type: 'WaypointAccepted', status, reason, message, observedGeneration: 2 },
    ]);
  });

  test('several targets: Accepted with no message when all are bound', () => {
    expect(accepted([gw('a', { kind: 'bound', via: 'ns1/a' }), gw('b', { kind: 'bound', via: 'ns1/b' })])).toEqual([
      { type: 'WaypointAccepted', status: 'True', reason: 'Accepted', message: '', observedGeneration: 2 },
    ]);
  });

  test('several targets: True/PartiallyInvalid when some are bound, False/Invalid when none, naming the unbound', () => {
    const missing: TargetBinding = { kind: 'targetNotFound', targetKind: 'Gateway', target: 'x' };
    const svc = target('Service.core:ns1/app', { kind: 'ancestorNotBound', targetKind: 'Service', target: 'ns1/app' });
    expect(accepted([gw('a', { kind: 'bound', via: 'ns1/a' }), gw('b', missing), svc])).toEqual([
      {
        type: 'WaypointAccepted',
        status: 'True',
        reason: 'PartiallyInvalid',
        message: 'Invalid targetRefs: Gateway.gateway.networking.k8s.io:ns1/b, Service.core:ns1/app',
        observedGeneration: 2,
      },
    ]);
    expect(accepted([gw('b', missing), svc], 0)).toEqual([
      {
        type: 'WaypointAccepted',
        status: 'False',
        reason: 'Invalid',
        message: 'Invalid targetRefs: Gateway.gateway.networking.k8s.io:ns1/b, Service.core:ns1/app',
      },
    ]);
  });

  test('no targetRefs: no condition (a written one is pruned)', () => {
    expect(waypointPolicyConditions(undefined)).toEqual([]);
  });
});

describe('istio.io/WaypointBound on WorkloadEntries', () => {
  const base = { namespace: 'ns1', name: 'vm' };

  test('bound: True/WaypointAccepted, without the ingress or canary sentences of Services', () => {
    expect(workloadEntryConditions({ ...base, bound: 'ns1/wp' })).toEqual([
      {
        type: 'istio.io/WaypointBound',
        status: 'True',
        reason: 'WaypointAccepted',
        message: 'Successfully attached to waypoint ns1/wp',
      },
    ]);
  });

  test('a waypoint not for workloads: False/UnsupportedTrafficType naming the workload traffic type', () => {
    expect(
      workloadEntryConditions({
        ...base,
        problem: { kind: 'unsupportedTrafficType', waypoint: 'ns1/wp', trafficType: 'workload' },
      }),
    ).toEqual([
      {
        type: 'istio.io/WaypointBound',
        status: 'False',
        reason: 'UnsupportedTrafficType',
        message: 'attempting to bind to traffic type "workload" which the waypoint "ns1/wp" does not support',
      },
    ]);
    expect(workloadEntryConditions({ ...base, problem: { kind: 'notReady', waypoint: 'ns1/wp' } })).toEqual([
      {
        type: 'istio.io/WaypointBound',
        status: 'False',
        reason: 'WaypointIsNotReady',
        message: 'waypoint "ns1/wp" is not ready',
      },
    ]);
  });

  test('nothing named, an instance of a waypoint, or gone: no condition', () => {
    expect(workloadEntryConditions(base)).toEqual([]);
    expect(workloadEntryConditions(undefined)).toEqual([]);
  });
});

describe('istio.io/WaypointMissing and istio.io/VisibilityApplied on ServiceEntries', () => {
  const entry = (e: Partial<ServiceEntryFacts> = {}): ServiceEntryFacts => ({
    wildcardHost: false,
    racingConnectStrategy: false,
    ...e,
  });
  const se = (e: ServiceEntryFacts, bound = false) =>
    waypointConditions({
      kind: 'ServiceEntry',
      namespace: 'ns1',
      name: 'se',
      entry: e,
      ...(bound ? { bound: { waypoint: 'ns1/wp', ingressLabelPresent: false, ingressUseWaypoint: false } } : {}),
    });
  const types = (conditions: { type: string }[]) => conditions.map((c) => c.type);

  test('a wildcard host without a waypoint: True/NoWaypointForWildcardService', () => {
    expect(se(entry({ wildcardHost: true }))).toEqual([
      {
        type: 'istio.io/WaypointMissing',
        status: 'True',
        reason: 'NoWaypointForWildcardService',
        message: 'ServiceEntry will not apply until it is bound to a valid waypoint.',
      },
    ]);
  });

  test('a racing connect strategy without a waypoint: True/NoWaypointForRacingConnectStrategy, winning over the wildcard', () => {
    const expected = [
      {
        type: 'istio.io/WaypointMissing',
        status: 'True',
        reason: 'NoWaypointForRacingConnectStrategy',
        message:
          'ServiceEntry has a non-default connect strategy but no waypoint bound. A waypoint is required for ' +
          'connect strategies to take effect for ambient clients.',
      },
    ];
    expect(se(entry({ racingConnectStrategy: true }))).toEqual(expected);
    expect(se(entry({ racingConnectStrategy: true, wildcardHost: true }))).toEqual(expected);
  });

  test('bound, or needing no waypoint: no WaypointMissing (a written one is pruned)', () => {
    expect(types(se(entry({ wildcardHost: true, racingConnectStrategy: true }), true))).toEqual([
      'istio.io/WaypointBound',
    ]);
    expect(se(entry())).toEqual([]);
  });

  test('VisibilityApplied is True with the resolved visibility as reason, only while configured', () => {
    expect(se(entry({ visibility: 'PUBLIC' }))).toEqual([
      {
        type: 'istio.io/VisibilityApplied',
        status: 'True',
        reason: 'Public',
        message: 'ServiceEntry is visible to the entire mesh (PUBLIC).',
      },
    ]);
    expect(se(entry({ visibility: 'NAMESPACE' }))).toEqual([
      {
        type: 'istio.io/VisibilityApplied',
        status: 'True',
        reason: 'Namespace',
        message: 'ServiceEntry is visible only within its own namespace (NAMESPACE), per mesh serviceEntryVisibility.',
      },
    ]);
    expect(types(se(entry({ visibility: 'PUBLIC', wildcardHost: true }), true))).toEqual([
      'istio.io/WaypointBound',
      'istio.io/VisibilityApplied',
    ]);
  });
});
