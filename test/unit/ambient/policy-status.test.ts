// What ztunnel made of an AuthorizationPolicy, as the facts its ZtunnelAccepted condition is written from.

import { hasEnforceableRule, httpAttributesOf, policyStatusFacts } from '../../../src/ambient/policy-status';
import { convertAuthorizationPolicy } from '../../../src/ambient/authorization';
import { authz } from '../../support/ambient/fixtures';

const facts = (spec: Record<string, unknown>, meta = {}, enableDryRun = false) =>
  policyStatusFacts(authz('p', 'ns1', spec, { generation: 3, ...meta }).object, 'istio-system', enableDryRun);

describe('policy status facts', () => {
  test('an L4 policy is accepted, with the generation it was computed from', () => {
    expect(facts({ rules: [{ from: [{ source: { principals: ['a'] } }] }] })).toEqual({
      namespace: 'ns1',
      name: 'p',
      generation: 3,
      outcome: { kind: 'accepted' },
    });
  });

  test('a policy with targetRef(s) is not ztunnel’s: no facts, so no condition', () => {
    expect(facts({ targetRef: { kind: 'Gateway', name: 'wp' } })).toBeUndefined();
    expect(facts({ targetRefs: [{ kind: 'Service', name: 's' }] })).toBeUndefined();
  });

  test('dry-run without ztunnel dry-run support is refused, even with a targetRef (istiod checks it first)', () => {
    const dry = { annotations: { 'istio.io/dry-run': 'true' } };
    expect(facts({}, dry)?.outcome).toEqual({ kind: 'dryRunUnsupported' });
    expect(facts({ targetRef: { kind: 'Gateway', name: 'wp' } }, dry)?.outcome).toEqual({ kind: 'dryRunUnsupported' });
    expect(facts({}, dry, true)?.outcome).toEqual({ kind: 'accepted' });
    expect(facts({}, { annotations: { 'istio.io/dry-run': 'maybe' } })?.outcome).toEqual({ kind: 'accepted' });
  });

  test('AUDIT and CUSTOM are actions ztunnel cannot enforce', () => {
    expect(facts({ action: 'AUDIT' })?.outcome).toEqual({ kind: 'unsupportedAction', action: 'AUDIT' });
    expect(facts({ action: 'CUSTOM', provider: { name: 'x' } })?.outcome).toEqual({
      kind: 'unsupportedAction',
      action: 'CUSTOM',
    });
  });

  test('HTTP attributes are listed sorted and once, from operations, sources and non-L4 when keys', () => {
    const spec = {
      rules: [
        {
          to: [{ operation: { paths: ['/a'], methods: ['GET'], ports: ['80'] } }],
          from: [{ source: { requestPrincipals: ['*'] } }],
          when: [
            { key: 'request.headers[x]', values: ['1'] },
            { key: 'source.ip', values: ['1.2.3.4'] },
          ],
        },
        { to: [{ operation: { paths: ['/b'], notHosts: ['h'] } }] },
      ],
    };
    expect(httpAttributesOf(spec)).toEqual(['methods', 'notHosts', 'paths', 'request.headers[x]', 'requestPrincipals']);
  });

  test('an ALLOW policy with HTTP attributes is sent with those rules omitted', () => {
    expect(facts({ rules: [{ to: [{ operation: { methods: ['GET'] } }] }] })?.outcome).toEqual({
      kind: 'httpAttributesIgnored',
      attributes: ['methods'],
      effect: 'allowRulesOmitted',
    });
  });

  test('a DENY policy keeps its L4 parts; with none left it has no effect at ztunnel', () => {
    const mixed = { action: 'DENY', rules: [{ to: [{ operation: { methods: ['GET'], ports: ['80'] } }] }] };
    expect(facts(mixed)?.outcome).toEqual({
      kind: 'httpAttributesIgnored',
      attributes: ['methods'],
      effect: 'denyWithoutHttpRules',
    });
    const httpOnly = { action: 'DENY', rules: [{ to: [{ operation: { methods: ['GET'] } }] }] };
    expect(facts(httpOnly)?.outcome).toEqual({
      kind: 'httpAttributesIgnored',
      attributes: ['methods'],
      effect: 'denyHasNoEffect',
    });
    const httpWhen = { action: 'DENY', rules: [{ when: [{ key: 'request.auth.claims[iss]', values: ['x'] }] }] };
    expect(facts(httpWhen)?.outcome).toMatchObject({ effect: 'denyHasNoEffect' });
  });

  test('a rule without clauses matches everything; a clause of only empty matches never fires', () => {
    const ap = (spec: Record<string, unknown>) =>
      convertAuthorizationPolicy(authz('p', 'ns1', spec).object, 'istio-system')!;
    expect(hasEnforceableRule(ap({ action: 'DENY', rules: [{}] }))).toBe(true);
    expect(hasEnforceableRule(ap({ action: 'DENY', rules: [] }))).toBe(false);
    expect(hasEnforceableRule(ap({ action: 'DENY', rules: [{ to: [{ operation: { paths: ['/'] } }] }] }))).toBe(false);
  });
});
