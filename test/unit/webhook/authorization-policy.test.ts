import { describeKind, InvalidCase, validate, ValidCase } from './table';

const src = (source: object) => ({ rules: [{ from: [{ source }] }] });
const op = (operation: object) => ({ rules: [{ to: [{ operation }] }] });
const when = (w: object) => ({ rules: [{ when: [w] }] });

const valid: ValidCase[] = [
  ['an empty policy (ALLOW nothing)', {}],
  [
    'allow from principals and namespaces',
    src({ principals: ['cluster.local/ns/default/sa/a'], namespaces: ['default'] }),
  ],
  ['allow serviceAccounts in ns/sa and sa form', src({ serviceAccounts: ['default/a', 'b'] })],
  ['ipBlocks with an address and a CIDR', src({ ipBlocks: ['10.0.0.1', '10.0.0.0/8', '2001:db8::/32'] })],
  ['trust domains with a leading or trailing wildcard', src({ trustDomains: ['*.example.com', 'cluster.*'] })],
  ['DENY with an empty rule matches everything', { action: 'DENY', rules: [{}] }],
  [
    'DENY with ports is not warned about',
    { action: 'DENY', rules: [{ to: [{ operation: { ports: ['8080'], methods: ['GET'] } }] }] },
  ],
  [
    'CUSTOM with a provider and ipBlocks',
    { action: 'CUSTOM', provider: { name: 'ext-authz' }, rules: [{ from: [{ source: { ipBlocks: ['1.2.3.4'] } }] }] },
  ],
  ['path templates with {*} and a final {**}', op({ paths: ['/api/{*}/items/{**}'] })],
  [
    'when on a request header and a claim',
    {
      rules: [
        {
          when: [
            { key: 'request.headers[x-user]', values: ['a'] },
            { key: 'request.auth.claims[iss]', notValues: ['b'] },
          ],
        },
      ],
    },
  ],
  ['when on source.ip with a CIDR', when({ key: 'source.ip', values: ['10.0.0.0/16'] })],
  ['a targetRef to a Service (core group)', { targetRef: { kind: 'Service', group: '', name: 'reviews' } }],
  [
    'targetRefs to a Gateway',
    { targetRefs: [{ kind: 'Gateway', group: 'gateway.networking.k8s.io', name: 'waypoint' }] },
  ],
  ['the action by enum number', { action: 1, rules: [{}] }],
  ['an unknown spec field (istiod retries allowing unknown fields)', { futureField: true }],
  ['empty from list decodes to unset (match all)', { rules: [{ from: [] }] }],
  ['a selector with labels', { selector: { matchLabels: { app: 'web' } } }],
  ['dry-run annotation on ALLOW', {}, undefined, { annotations: { 'istio.io/dry-run': 'true' } }],
];

const invalid: InvalidCase[] = [
  [
    'an empty principal',
    src({ principals: ['a', 'b', ''] }),
    'spec.rules[0].from[0].source.principals[2]: must not be empty',
  ],
  ['an empty namespace', src({ namespaces: [''] }), 'spec.rules[0].from[0].source.namespaces[0]: must not be empty'],
  ['from without source', { rules: [{ from: [{}] }] }, 'spec.rules[0].from[0].source: must not be null'],
  ['an empty source', src({}), 'spec.rules[0].from[0].source: must not be empty'],
  ['to without operation', { rules: [{ to: [{}] }] }, 'spec.rules[0].to[0].operation: must not be null'],
  ['an empty operation', op({}), 'spec.rules[0].to[0].operation: must not be empty'],
  [
    'serviceAccounts with principals',
    src({ serviceAccounts: ['a'], principals: ['b'] }),
    'cannot set serviceAccounts with namespaces or principals',
  ],
  ['a serviceAccount wildcard', src({ serviceAccounts: ['ns/*'] }), 'serviceAccounts[0]: wildcard not allowed'],
  [
    'a serviceAccount with two slashes',
    src({ serviceAccounts: ['a/b/c'] }),
    "expected format 'serviceAccount' or 'namespace/serviceAccount'",
  ],
  ['a serviceAccount with an empty namespace', src({ serviceAccounts: ['/sa'] }), 'found empty namespace'],
  [
    'more than 16 serviceAccounts',
    src({ serviceAccounts: Array.from({ length: 17 }, (_, i) => `sa${i}`) }),
    'may not have more than 16 values',
  ],
  [
    'a serviceAccount over 320 characters',
    src({ serviceAccounts: ['a'.repeat(321)] }),
    'value cannot exceed 320 characters',
  ],
  ['a trust domain with two wildcards', src({ trustDomains: ['*.a.*'] }), 'at most one wildcard is allowed'],
  [
    'a trust domain with a middle wildcard',
    src({ trustDomains: ['a.*.b'] }),
    'wildcard is only allowed at the start or end',
  ],
  ['a trust domain with a slash', src({ trustDomains: ['a/b'] }), "trust domain must not contain '/'"],
  ['a bad IP', src({ ipBlocks: ['10.0.0.256'] }), 'bad IP address (10.0.0.256)'],
  ['a bad CIDR', src({ remoteIpBlocks: ['10.0.0.0/33'] }), 'bad CIDR range (10.0.0.0/33)'],
  ['a port above 65535', op({ ports: ['65536'] }), 'spec.rules[0].to[0].operation.ports[0]: bad port (65536)'],
  ['a non-numeric port', op({ notPorts: ['http'] }), 'bad port (http)'],
  ['an empty method', op({ methods: ['GET', ''] }), 'spec.rules[0].to[0].operation.methods[1]: must not be empty'],
  ['{**} not last in a path', op({ paths: ['/a/{**}/b/{*}'] }), '{**} is not the last operator'],
  ['braces beyond a template', op({ paths: ['/a/{id}'] }), "contains '{' or '}' beyond a supported path template"],
  ['a when without key', when({ values: ['a'] }), 'spec.rules[0].when[0].key: must not be empty'],
  [
    'a when without values',
    when({ key: 'source.ip' }),
    'at least one of values or notValues must be set for key source.ip',
  ],
  ['a when on an unknown attribute', when({ key: 'source.color', values: ['red'] }), 'unknown attribute: source.color'],
  [
    'a when on destination.namespace',
    when({ key: 'destination.namespace', values: ['a'] }),
    'replaced by the metadata.namespace',
  ],
  [
    'a when on destination.labels',
    when({ key: 'destination.labels[app]', values: ['a'] }),
    'replaced by the workload selector',
  ],
  ['a when on destination.user', when({ key: 'destination.user', values: ['a'] }), 'only supported in v1alpha1'],
  ['a header key without brackets', when({ key: 'request.headers', values: ['a'] }), 'should have format a[b]'],
  ['a bad destination.port value', when({ key: 'destination.port', values: ['x'] }), 'bad port (x)'],
  ['DENY without rules', { action: 'DENY' }, 'spec.rules: DENY action without rules is meaningless'],
  ['CUSTOM without rules', { action: 'CUSTOM', provider: { name: 'x' } }, 'spec.rules: CUSTOM action without rules'],
  ['CUSTOM without a provider name', { action: 'CUSTOM', rules: [{}] }, 'spec.provider.name: must not be empty'],
  [
    'CUSTOM with principals',
    { action: 'CUSTOM', provider: { name: 'x' }, rules: [{ from: [{ source: { principals: ['a'] } }] }] },
    'principals: is currently not supported with CUSTOM action',
  ],
  [
    'CUSTOM with a request.auth when',
    {
      action: 'CUSTOM',
      provider: { name: 'x' },
      rules: [{ when: [{ key: 'request.auth.principal', values: ['a'] }] }],
    },
    'request.auth.principal is currently not supported with CUSTOM action',
  ],
  [
    'a provider with ALLOW',
    { provider: { name: 'x' } },
    'spec.provider: must not be set with non CUSTOM action, found ALLOW',
  ],
  ['an unknown action', { action: 'BLOCK' }, 'spec.action: unknown value "BLOCK"'],
  ['a null rule', { rules: [null] }, 'spec.rules[0]: rule must not be null'],
  [
    'selector and targetRef together',
    { selector: { matchLabels: { a: 'b' } }, targetRef: { kind: 'Service', name: 'x' } },
    'only one of targetRefs or workloadSelector can be set',
  ],
  ['a wildcard selector value', { selector: { matchLabels: { app: '*' } } }, 'wildcard is not supported in selector'],
  ['an empty selector key', { selector: { matchLabels: { '': 'a' } } }, 'empty key is not supported in selector'],
  ['a targetRef without name', { targetRef: { kind: 'Service' } }, 'spec.targetRef.name: targetRef name must be set'],
  [
    'a targetRef with a namespace',
    { targetRef: { kind: 'Service', name: 'a', namespace: 'b' } },
    'targetRef namespace must not be set',
  ],
  [
    'a targetRef to a Deployment',
    { targetRefs: [{ kind: 'Deployment', group: 'apps', name: 'a' }] },
    'spec.targetRefs[0]: targetRef must be to one of',
  ],
  ['principals of the wrong type', src({ principals: 'a' }), 'spec.rules[0].from[0].source.principals: must be a list'],
  [
    'dry-run on a CUSTOM policy',
    { action: 'CUSTOM', provider: { name: 'x' }, rules: [{}] },
    'only supports action ALLOW/DENY',
    { annotations: { 'istio.io/dry-run': 'true' } },
  ],
  ['dry-run that is not a boolean', {}, 'with invalid value (maybe)', { annotations: { 'istio.io/dry-run': 'maybe' } }],
];

describeKind('AuthorizationPolicy', valid, invalid);

describe('AuthorizationPolicy warnings', () => {
  test('a DENY rule with only HTTP attributes warns that TCP traffic is denied', () => {
    const v = validate('AuthorizationPolicy', {
      action: 'DENY',
      rules: [{ to: [{ operation: { methods: ['GET'] } }] }],
    });
    expect(v.errors).toEqual([]);
    expect(v.warnings[0]).toContain('spec.rules[0]: configured AuthorizationPolicy will deny all traffic to TCP ports');
  });

  test('a selector without labels is a warning, not an error', () => {
    const v = validate('AuthorizationPolicy', { selector: {} });
    expect(v.errors).toEqual([]);
    expect(v.warnings).toEqual(['spec.selector: workload selector specified without labels']);
  });

  test('every error is reported, not only the first', () => {
    const v = validate('AuthorizationPolicy', src({ principals: [''], namespaces: [''] }));
    expect(v.errors).toEqual([
      'spec.rules[0].from[0].source.principals[0]: must not be empty',
      'spec.rules[0].from[0].source.namespaces[0]: must not be empty',
    ]);
  });
});
