import { convertAuthorizationPolicy } from '../../../src/ambient/authorization';
import { inRevision } from '../../../src/ambient/settings';
import { AuthzAction, AuthzScope } from '../../../src/ambient/messages';
import { ipToText } from '../../../src/ambient/ip';
import { podWorkload } from '../../../src/ambient/workloads';
import { authz, pod, viewOf } from '../../support/ambient/fixtures';

const convert = (spec: Record<string, unknown>, ns = 'default', meta = {}) =>
  convertAuthorizationPolicy(authz('p', ns, spec, meta).object, 'istio-system');

describe('AuthorizationPolicy: what is sent', () => {
  it.each([
    ['targetRef', { targetRef: { kind: 'Gateway', name: 'w' } }],
    ['targetRefs', { targetRefs: [{ kind: 'Service', name: 's' }] }],
    ['CUSTOM action', { action: 'CUSTOM', provider: { name: 'ext' } }],
    ['AUDIT action', { action: 'AUDIT' }],
  ])('a policy with %s is not sent', (_what, spec) => {
    expect(convert(spec)).toBeUndefined();
  });
  it('a dry-run policy is not sent', () => {
    expect(convert({}, 'default', { annotations: { 'istio.io/dry-run': 'true' } })).toBeUndefined();
  });
  it('with AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY a dry-run policy is sent with dry_run set', () => {
    const a = convertAuthorizationPolicy(
      authz('p', 'default', {}, { annotations: { 'istio.io/dry-run': 'true' } }).object,
      'istio-system',
      true,
    );
    expect(a!.dryRun).toBe(true);
  });
  it('name, namespace and action come from the policy; ALLOW is the default', () => {
    expect(convert({ action: 'DENY', rules: [{}] })).toMatchObject({
      name: 'p',
      namespace: 'default',
      action: AuthzAction.DENY,
    });
    expect(convert({ rules: [{}] })!.action).toBeUndefined();
  });
});

describe('AuthorizationPolicy: scope', () => {
  it('a selector makes it WORKLOAD_SELECTOR', () =>
    expect(convert({ selector: { matchLabels: { app: 'a' } } })!.scope).toBe(AuthzScope.WORKLOAD_SELECTOR));
  it('no selector makes it NAMESPACE', () => expect(convert({}, 'default')!.scope).toBe(AuthzScope.NAMESPACE));
  it('no selector in the root namespace makes it GLOBAL', () =>
    expect(convert({}, 'istio-system')!.scope).toBeUndefined());
});

describe('AuthorizationPolicy: rules', () => {
  it('no rules gives no rules (an ALLOW that matches nothing)', () => expect(convert({})!.rules).toBeUndefined());
  it('an empty rule gives a Rule with no clauses (matches everything)', () =>
    expect(convert({ rules: [{}] })!.rules).toEqual([{}]));
  it('to, from and each when become clauses in that order', () => {
    const a = convert({
      rules: [
        {
          from: [{ source: { namespaces: ['ns1'] } }],
          to: [{ operation: { ports: ['80'] } }],
          when: [{ key: 'source.ip', values: ['10.0.0.0/8'] }],
        },
      ],
    })!;
    const clauses = a.rules![0]!.clauses!;
    expect(clauses[0]).toEqual({ matches: [{ destinationPorts: [80] }] });
    expect(clauses[1]).toEqual({ matches: [{ namespaces: [{ exact: 'ns1' }] }] });
    expect(ipToText(clauses[2]!.matches![0]!.sourceIps![0]!.address)).toBe('10.0.0.0');
    expect(clauses[2]!.matches![0]!.sourceIps![0]!.length).toBe(8);
  });
  it.each([
    ['*', { presence: {} }],
    ['*.example', { suffix: '.example' }],
    ['spiffe://x/*', { prefix: 'spiffe://x/' }],
    ['cluster.local/ns/a/sa/b', { exact: 'cluster.local/ns/a/sa/b' }],
  ])('value %p becomes %p', (value, match) => {
    expect(
      convert({ rules: [{ from: [{ source: { principals: [value] } }] }] })!.rules![0]!.clauses![0]!.matches![0]!
        .principals,
    ).toEqual([match]);
  });
  it('service accounts "ns/sa" are split; a bare "sa" uses the policy namespace', () => {
    const m = convert({ rules: [{ from: [{ source: { serviceAccounts: ['other/x', 'y'] } }] }] })!.rules![0]!
      .clauses![0]!.matches![0]!;
    expect(m.serviceAccounts).toEqual([
      { namespace: 'other', serviceAccount: 'x' },
      { namespace: 'default', serviceAccount: 'y' },
    ]);
  });
  it('a bare IP becomes /32 and invalid IPs and ports are skipped', () => {
    const m = convert({
      rules: [
        { from: [{ source: { ipBlocks: ['1.2.3.4', 'bad'] } }], to: [{ operation: { ports: ['70000', 'x', '443'] } }] },
      ],
    })!.rules![0]!.clauses!;
    expect(m[0]!.matches![0]!.destinationPorts).toEqual([443]);
    expect(m[1]!.matches![0]!.sourceIps!.map((a) => a.length)).toEqual([32]);
  });
  it.each([
    ['source.namespace', 'namespaces'],
    ['source.principal', 'principals'],
    ['destination.port', 'destinationPorts'],
    ['destination.ip', 'destinationIps'],
  ])('when key %s maps to %s and notValues to its negation', (key, field) => {
    const value = key === 'destination.port' ? '80' : key === 'destination.ip' ? '1.1.1.1' : 'x';
    const m = convert({ rules: [{ when: [{ key, values: [value], notValues: [value] }] }] })!.rules![0]!.clauses![0]!
      .matches![0]!;
    const neg = `not${field[0]!.toUpperCase()}${field.slice(1)}`;
    expect(Object.keys(m).sort()).toEqual([field, neg].sort());
  });
});

describe('AuthorizationPolicy: L7 attributes', () => {
  it.each([
    ['to.operation.methods', { to: [{ operation: { methods: ['GET'] } }] }],
    ['to.operation.paths', { to: [{ operation: { paths: ['/x'] } }] }],
    ['to.operation.hosts', { to: [{ operation: { hosts: ['h'] } }] }],
    ['from.source.requestPrincipals', { from: [{ source: { requestPrincipals: ['*'] } }] }],
    ['from.source.remoteIpBlocks', { from: [{ source: { remoteIpBlocks: ['1.1.1.1'] } }] }],
    ['a request.* when key', { when: [{ key: 'request.headers[x]', values: ['y'] }] }],
  ])('in ALLOW a rule with %s is dropped entirely', (_f, rule) => {
    expect(convert({ rules: [rule, { from: [{ source: { namespaces: ['a'] } }] }] })!.rules).toHaveLength(1);
  });
  it('in DENY the L7 fields are stripped and the L4 parts of the same item kept', () => {
    const a = convert({ action: 'DENY', rules: [{ to: [{ operation: { methods: ['GET'], ports: ['80'] } }] }] })!;
    expect(a.rules).toEqual([{ clauses: [{ matches: [{ destinationPorts: [80] }] }] }]);
  });
  it('in DENY an L7 when becomes an empty match, so that rule never fires', () => {
    const a = convert({ action: 'DENY', rules: [{ when: [{ key: 'request.auth.claims[iss]', values: ['x'] }] }] })!;
    expect(a.rules).toEqual([{ clauses: [{ matches: [{}] }] }]);
  });
  it('from.source.trustDomains is neither converted nor flagged: the item becomes an empty match', () => {
    const a = convert({ rules: [{ from: [{ source: { trustDomains: ['td'] } }] }] })!;
    expect(a.rules).toEqual([{ clauses: [{ matches: [{}] }] }]);
  });
});

describe('Workload.authorization_policies from AuthorizationPolicies', () => {
  const p = pod('a', { labels: { app: 'a' } });
  const names = (...objs: ReturnType<typeof authz>[]) =>
    podWorkload(p.object, viewOf([p, ...objs]))!.authorizationPolicies;
  it('lists selector policies of its namespace and of the root namespace, sorted', () => {
    expect(
      names(
        authz('z', 'default', { selector: { matchLabels: { app: 'a' } } }),
        authz('r', 'istio-system', { selector: { matchLabels: { app: 'a' } } }),
      ),
    ).toEqual(['default/z', 'istio-system/r']);
  });
  it('never lists namespace or global policies (ztunnel finds them by scope)', () => {
    expect(names(authz('ns', 'default', {}), authz('g', 'istio-system', {}))).toBeUndefined();
  });
  it('does not list selector policies of other namespaces or that do not match', () => {
    expect(
      names(
        authz('x', 'other', { selector: { matchLabels: { app: 'a' } } }),
        authz('y', 'default', { selector: { matchLabels: { app: 'b' } } }),
      ),
    ).toBeUndefined();
  });
  it('ignores policies labelled for another control plane revision', () => {
    const other = authz(
      'r',
      'default',
      { selector: { matchLabels: { app: 'a' } } },
      { labels: { 'istio.io/rev': 'canary' } },
    );
    const mine = authz(
      'm',
      'default',
      { selector: { matchLabels: { app: 'a' } } },
      { labels: { 'istio.io/rev': 'default' } },
    );
    expect(podWorkload(p.object, viewOf([p, other, mine], { revision: 'default' }))!.authorizationPolicies).toEqual([
      'default/m',
    ]);
  });
  it('does not list policies that are not sent', () => {
    expect(names(authz('c', 'default', { action: 'CUSTOM', selector: { matchLabels: { app: 'a' } } }))).toBeUndefined();
  });
  it('quirk: a selector without matchLabels is WORKLOAD_SELECTOR scoped yet attached to no workload', () => {
    expect(convert({ selector: {} })!.scope).toBe(AuthzScope.WORKLOAD_SELECTOR);
    expect(names(authz('e', 'default', { selector: {} }))).toBeUndefined();
  });
  it('a selector with empty matchLabels attaches to every workload of the namespace', () => {
    expect(names(authz('e', 'default', { selector: { matchLabels: {} } }))).toEqual(['default/e']);
  });
});

describe('revision filtering (istio.io/rev on AuthorizationPolicy, PeerAuthentication, ServiceEntry, WorkloadEntry)', () => {
  it.each([
    [undefined, 'default', true],
    ['default', 'default', true],
    ['canary', 'default', false],
    ['canary', '', true],
  ])('label %p with control plane revision %p is visible: %p', (label, revision, visible) => {
    expect(inRevision(label === undefined ? {} : { 'istio.io/rev': label }, revision)).toBe(visible);
  });
});
