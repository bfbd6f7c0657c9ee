import { describeKind, InvalidCase, validate, ValidCase } from './table';

const dest = (host: string, extra: object = {}) => ({ destination: { host, ...extra } });
const vs = (http: object[], extra: object = {}) => ({ hosts: ['reviews'], http, ...extra });
const route = (r: object) => vs([{ route: [dest('reviews')], ...r }]);

const valid: ValidCase[] = [
  ['a simple route', vs([{ route: [dest('reviews')] }])],
  [
    'weights that do not sum to 100',
    vs([
      {
        route: [
          { ...dest('a'), weight: 10 },
          { ...dest('b'), weight: 20 },
        ],
      },
    ]),
  ],
  ['a redirect', vs([{ redirect: { uri: '/new', redirectCode: 301 } }])],
  ['a direct response', vs([{ directResponse: { status: 503, body: { string: 'down' } } }])],
  [
    'matches with regex, prefix and headers',
    vs([{ match: [{ uri: { regex: '^/api/v[0-9]+' }, headers: { 'x-user': { exact: 'a' } } }], route: [dest('a')] }]),
  ],
  [
    'a gateway-bound VirtualService with JWT claim routing',
    {
      hosts: ['app.example.com'],
      gateways: ['istio-system/gw'],
      http: [{ match: [{ headers: { '@request.auth.claims.group': { exact: 'admin' } } }], route: [dest('a')] }],
    },
  ],
  ['a delegate VirtualService without hosts', { http: [{ route: [dest('a')] }] }],
  [
    'a TLS route with SNI hosts',
    { hosts: ['*.example.com'], tls: [{ match: [{ sniHosts: ['a.example.com'] }], route: [dest('a.example.com')] }] },
  ],
  [
    'a TCP route',
    { hosts: ['db'], tcp: [{ match: [{ port: 5432 }], route: [dest('db', { port: { number: 5432 } })] }] },
  ],
  [
    'retries, timeout, fault and header operations',
    route({
      retries: { attempts: 3, perTryTimeout: '2s', retryOn: '5xx,503,reset' },
      timeout: '10s',
      fault: { delay: { fixedDelay: '1s', percentage: { value: 10 } } },
      headers: { request: { set: { 'x-a': '%DOWNSTREAM_REMOTE_ADDRESS%' } } },
    }),
  ],
  [
    'a legacy gateway name warns',
    { hosts: ['a.example.com'], gateways: ['gw.istio-system'], http: [{ route: [dest('a')] }] },
    'using legacy gatewayName format "gw.istio-system"',
  ],
  [
    'a rule after a catch-all warns',
    vs([{ route: [dest('a')] }, { route: [dest('b')] }]),
    'virtualService rule #1 not used (only the last rule can have no matches)',
  ],
  [
    'a match repeated from an earlier rule (keys in another order) warns',
    vs([
      { match: [{ uri: { prefix: '/a' }, headers: { u: { exact: 'x' } } }], route: [dest('a')] },
      { match: [{ headers: { u: { exact: 'x' } }, uri: { prefix: '/a' } }], route: [dest('b')] },
    ]),
    'virtualService rule #1 match #0 is not used (duplicate/overlapping match in rule #0)',
  ],
  [
    'mirrorPercent warns as deprecated',
    route({ mirror: { host: 'm' }, mirrorPercent: 50 }),
    'using deprecated setting "mirrorPercent"',
  ],
];

const invalid: InvalidCase[] = [
  ['no routes at all', { hosts: ['a'] }, 'spec: http, tcp or tls must be provided in virtual service'],
  [
    'the * host bound to the mesh',
    { hosts: ['*'], http: [{ route: [dest('a')] }] },
    'spec.hosts[0]: wildcard host * is not allowed for virtual services bound to the mesh gateway',
  ],
  [
    'overlapping hosts',
    { hosts: ['*.example.com', 'a.example.com'], http: [{ route: [dest('a')] }] },
    'duplicate hosts in virtual service: *.example.com & a.example.com',
  ],
  [
    'a bad host',
    { hosts: ['bad_host'], http: [{ route: [dest('a')] }] },
    'spec.hosts[0]: domain name "bad_host" invalid',
  ],
  [
    'a delegate with gateways',
    { gateways: ['ns/gw'], http: [{ route: [dest('a')] }] },
    'delegate virtual service must have no gateways specified',
  ],
  [
    'an http route without route, redirect or directResponse',
    vs([{ match: [{ uri: { prefix: '/a' } }] }]),
    'spec.http[0]: HTTP route, redirect or direct_response is required',
  ],
  [
    'route and redirect together',
    route({ redirect: { uri: '/x' } }),
    'HTTP route cannot contain both route and redirect',
  ],
  [
    'route and directResponse together',
    route({ directResponse: { status: 200 } }),
    'HTTP route cannot contain both route and direct_response',
  ],
  [
    'fault and redirect together',
    vs([{ redirect: { uri: '/x' }, fault: { abort: { httpStatus: 500 } } }]),
    'HTTP route cannot contain both fault and redirect',
  ],
  [
    'mirror and mirrors together',
    route({ mirror: { host: 'm' }, mirrors: [{ destination: { host: 'n' } }] }),
    'HTTP route cannot contain both mirror and mirrors',
  ],
  ['a negative weight', vs([{ route: [{ ...dest('a'), weight: -1 }] }]), 'spec.http[0].route[0].weight: weight -1 < 0'],
  [
    'several destinations all weighted 0',
    vs([
      {
        route: [
          { ...dest('a'), weight: 0 },
          { ...dest('b'), weight: 0 },
        ],
      },
    ]),
    'spec.http[0].route: total destination weight = 0',
  ],
  [
    'the * destination host',
    vs([{ route: [dest('*')] }]),
    'spec.http[0].route[0].destination.host: invalid destination host *',
  ],
  [
    'a subset that is not a DNS label',
    vs([{ route: [dest('a', { subset: 'v1.0' })] }]),
    'subset name is invalid: v1.0',
  ],
  [
    'an invalid regex',
    vs([{ match: [{ uri: { regex: '(unclosed' } }], route: [dest('a')] }]),
    'spec.http[0].match[0].uri.regex:',
  ],
  [
    'a lookahead regex RE2 cannot run',
    vs([{ match: [{ uri: { regex: '^(?=a)' } }], route: [dest('a')] }]),
    'lookaround assertions are not supported',
  ],
  [
    'a regex over 1024 characters',
    vs([{ match: [{ uri: { regex: 'a'.repeat(1025) } }], route: [dest('a')] }]),
    'regex is too large, max length allowed is 1024',
  ],
  [
    'an empty prefix header match',
    vs([{ match: [{ headers: { 'x-a': { prefix: '' } } }], route: [dest('a')] }]),
    'prefix string match should not be empty',
  ],
  [
    'a redirect code that is not 3xx',
    vs([{ redirect: { uri: '/x', redirectCode: 200 } }]),
    'spec.http[0].redirect.redirectCode: 200 is not a valid redirect code, must be 3xx',
  ],
  ['a redirect without target', vs([{ redirect: {} }]), 'redirect must specify URI, authority, scheme, or port'],
  [
    'a mirror percentage over 100',
    route({ mirror: { host: 'm' }, mirrorPercentage: { value: 101 } }),
    'mirror_percentage must have a max value of 100',
  ],
  [
    'JWT claim routing bound to the mesh',
    vs([{ match: [{ headers: { '@request.auth.claims.group': { exact: 'a' } } }], route: [dest('a')] }]),
    'JWT claim based routing (key: @request.auth.claims.group) is only supported for gateway',
  ],
  [
    'a TLS route without SNI hosts',
    { hosts: ['a.example.com'], gateways: ['ns/gw'], tls: [{ match: [{ port: 443 }], route: [dest('a')] }] },
    'spec.tls[0].match[0].sniHosts: TLS match must have at least one SNI host',
  ],
  [
    'an SNI host outside the hosts',
    {
      hosts: ['a.example.com'],
      gateways: ['ns/gw'],
      tls: [{ match: [{ sniHosts: ['b.example.com'] }], route: [dest('a')] }],
    },
    'SNI host "b.example.com" is not a compatible subset',
  ],
  [
    'a TCP route without route',
    { hosts: ['db'], tcp: [{ match: [{ port: 5432 }] }] },
    'spec.tcp[0].route: TCP route is required',
  ],
  ['a timeout below 1ms', route({ timeout: '0s' }), 'spec.http[0].timeout: duration must be greater than 1ms'],
  [
    'retries with a bad retryOn',
    route({ retries: { attempts: 2, retryOn: 'sometimes' } }),
    '"sometimes" is not a valid retryOn policy',
  ],
  [
    'retry settings with 0 attempts',
    route({ retries: { attempts: 0, perTryTimeout: '1s' } }),
    'http retry policy configured when attempts are set to 0 (disabled)',
  ],
  [
    'an abort with a bad HTTP status',
    route({ fault: { abort: { httpStatus: 700 } } }),
    'HTTP status 700 is not in range 200-599',
  ],
  [
    'setting the Host header on responses',
    route({ headers: { response: { set: { host: 'x' } } } }),
    'invalid header "host": cannot set Host header',
  ],
  [
    'an unterminated header variable',
    route({ headers: { request: { add: { 'x-a': '%START_TIME' } } } }),
    'Un-terminated variable expression',
  ],
  [
    'a rewrite with uri and regex',
    route({ rewrite: { uri: '/a', uriRegexRewrite: { match: 'a', rewrite: 'b' } } }),
    'rewrite may only contain one of URI or UriRegexRewrite',
  ],
  [
    'an unsupported CORS method',
    route({ corsPolicy: { allowMethods: ['FETCH'] } }),
    '"FETCH" is not a supported HTTP method',
  ],
  [
    'a bad gateway reference',
    { hosts: ['a.example.com'], gateways: ['Bad_NS/gw'], http: [{ route: [dest('a')] }] },
    'invalid value for namespace: "Bad_NS"',
  ],
  [
    'exportTo ~',
    vs([{ route: [dest('a')] }], { exportTo: ['~'] }),
    'exportTo ~ (none) is not allowed for Istio configuration objects',
  ],
];

describeKind('VirtualService', valid, invalid);

test('header matches on different values are not duplicates of each other (bookinfo reviews)', () => {
  const jason = {
    match: [{ headers: { 'end-user': { exact: 'jason' } } }],
    route: [dest('reviews', { subset: 'v2' })],
  };
  const mary = { match: [{ headers: { 'end-user': { exact: 'mary' } } }], route: [dest('reviews', { subset: 'v3' })] };
  expect(validate('VirtualService', vs([jason, mary, { route: [dest('reviews', { subset: 'v1' })] }]))).toEqual({
    errors: [],
    warnings: [],
  });
});

test('a typical mesh VirtualService reports nothing at all', () => {
  expect(
    validate(
      'VirtualService',
      vs([
        { match: [{ uri: { prefix: '/v1' } }], route: [dest('reviews', { subset: 'v1' })] },
        { route: [dest('reviews')] },
      ]),
    ),
  ).toEqual({ errors: [], warnings: [] });
});

// Paths are built only for fields that are set (http-route.ts): a field written as null must
// still read as unset, and one of the wrong type must still be an error at its own path.
describe('optional route fields, null or of the wrong type', () => {
  const optional = [
    'match',
    'headers',
    'corsPolicy',
    'fault',
    'mirror',
    'mirrors',
    'mirrorPercentage',
    'redirect',
    'directResponse',
    'retries',
    'rewrite',
    'timeout',
  ];

  test('every optional HTTP route field written as null reads as unset', () => {
    const nulls = Object.fromEntries(optional.map((f) => [f, null]));
    expect(validate('VirtualService', route(nulls))).toEqual(validate('VirtualService', route({})));
    const match = { uri: null, scheme: null, method: null, authority: null, headers: null, withoutHeaders: null };
    const matchOrigin = { queryParams: null, port: null, sourceLabels: null, gateways: null, sourceNamespace: null };
    expect(validate('VirtualService', route({ match: [{ ...match, ...matchOrigin, name: 'm' }] }))).toEqual(
      validate('VirtualService', route({ match: [{ name: 'm' }] })),
    );
    expect(
      validate('VirtualService', vs([{ route: [{ destination: { host: 'reviews', subset: null, port: null } }] }])),
    ).toEqual(validate('VirtualService', vs([{ route: [dest('reviews')] }])));
  });

  test('each of them set to a number is a type error at its own path, in field order', () => {
    const errors = validate('VirtualService', route(Object.fromEntries(optional.map((f) => [f, 7])))).errors;
    for (const f of optional) expect(errors.some((e) => e.startsWith(`spec.http[0].${f}: `))).toBe(true);
    const { errors: matchErrors } = validate(
      'VirtualService',
      route({ match: [{ uri: 1, scheme: 1, method: 1, authority: 1, headers: 1, withoutHeaders: 1, port: 'x' }] }),
    );
    expect(matchErrors.map((e) => e.slice(0, e.indexOf(':')))).toEqual([
      'spec.http[0].match[0].headers',
      'spec.http[0].match[0].withoutHeaders',
      'spec.http[0].match[0].uri',
      'spec.http[0].match[0].scheme',
      'spec.http[0].match[0].method',
      'spec.http[0].match[0].authority',
      'spec.http[0].match[0].port',
    ]);
    expect(validate('VirtualService', vs([{ route: [{ destination: { host: 5, subset: 6 } }] }])).errors).toEqual([
      expect.stringMatching(/^spec\.http\[0\]\.route\[0\]\.destination\.host: must be a string/),
      expect.stringMatching(/^spec\.http\[0\]\.route\[0\]\.destination\.host: /),
      expect.stringMatching(/^spec\.http\[0\]\.route\[0\]\.destination\.subset: must be a string/),
    ]);
  });
});
