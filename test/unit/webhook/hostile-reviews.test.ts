// Reviews built to hurt: duplicate-heavy lists, values nested thousands of levels deep, and
// error lists without end. Each must get an answer (HTTP 200 and a review response) whose work
// and size stay proportional to the request, or bounded outright.

import { MAX_JSON_DEPTH, MIN_BYTES_TOO_DEEP, reviewAdmission } from '../../../src/webhook/admission';
import {
  MAX_REPORTED_ERRORS,
  MAX_REPORTED_TEXT_LENGTH,
  MAX_REPORTED_WARNINGS,
} from '../../../src/webhook/validators/common/report';
import { validateConfig } from '../../../src/webhook/validators/registry';
import {
  deepArray,
  deepObject,
  deepObjectText,
  DEEP_PLACEHOLDER,
  envoyFilter,
  jsonDepth,
  reviewBytes,
  virtualService,
} from '../../support/webhook/hostile-input';
import { parseReview } from '../../support/webhook/review';

const answer = (body: Buffer) => {
  const reply = reviewAdmission(body, 'application/json');
  expect(reply.status).toBe(200);
  return {
    reply,
    response: parseReview(reply.body).response,
  };
};

const route = [{ destination: { host: 'a.example.com' } }];

describe('duplicate-heavy lists', () => {
  test('10,000 identical VirtualService hosts are denied with one message per duplicated value', () => {
    const body = reviewBytes(virtualService({ hosts: Array(10_000).fill('a.example.com'), http: [{ route }] }));
    expect(body.length).toBeGreaterThan(150_000);
    const { reply, response } = answer(body);
    expect(response.allowed).toBe(false);
    expect(response.status!.message).toBe(
      'configuration is invalid: spec.hosts: duplicate hosts in virtual service: a.example.com & a.example.com',
    );
    expect(reply.body.length).toBeLessThan(1024);
  });

  test('hosts overlapping through a wildcard each name the earliest host they overlap', () => {
    const hosts = ['*.example.com', ...Array.from({ length: 10_000 }, (_, i) => `h${i}.example.com`)];
    const verdict = validateConfig(virtualService({ hosts, http: [{ route }] }));
    if (verdict.outcome !== 'validated') throw new Error(verdict.outcome);
    const errors = verdict.result.errors;
    expect(errors[0]).toEqual({
      path: 'spec.hosts',
      message: 'duplicate hosts in virtual service: *.example.com & h0.example.com',
    });
    expect(errors).toHaveLength(MAX_REPORTED_ERRORS + 1);
    expect(errors[MAX_REPORTED_ERRORS]).toEqual({
      path: '',
      message: `... and ${10_000 - MAX_REPORTED_ERRORS} more errors`,
    });
  });

  test('10,000 copies of an SNI host outside the hosts are reported once, with the host list clipped', () => {
    const hosts = Array.from({ length: 2_000 }, (_, i) => `h${i}.example.com`);
    const sniHosts = Array(10_000).fill('other.example.org');
    const { reply, response } = answer(reviewBytes(virtualService({ hosts, tls: [{ match: [{ sniHosts }], route }] })));
    expect(response.allowed).toBe(false);
    const message = response.status!.message;
    expect(message).toMatch(
      /^configuration is invalid: spec\.tls\[0\]\.match\[0\]\.sniHosts\[0\]: SNI host "other\.example\.org" is not a compatible subset of any of the virtual service hosts: \[h0\.example\.com, h1\.example\.com, /,
    );
    expect(message.split('SNI host').length - 1).toBe(1);
    expect(reply.body.length).toBeLessThan(2 * MAX_REPORTED_TEXT_LENGTH);
  });

  test('10,000 SNI hosts within 10,000 hosts are allowed', () => {
    const hosts = Array.from({ length: 10_000 }, (_, i) => `h${i}.example.com`);
    const { response } = answer(reviewBytes(virtualService({ hosts, tls: [{ match: [{ sniHosts: hosts }], route }] })));
    expect(response).toEqual({ uid: 'hostile-1', allowed: true });
  });

  test('a repeated exportTo entry is reported once however often it repeats', () => {
    const { response } = answer(
      reviewBytes(
        virtualService({ hosts: ['a.example.com'], http: [{ route }], exportTo: Array(1_000).fill('other') }),
      ),
    );
    expect(response.status!.message).toBe(
      'configuration is invalid: spec.exportTo: duplicate entries in exportTo for entry other',
    );
  });
});

describe('named limits on what a denial reports', () => {
  test(`at most MAX_REPORTED_ERRORS (${MAX_REPORTED_ERRORS}) errors are listed, then how many more there were`, () => {
    const hosts = Array.from({ length: 500 }, (_, i) => `bad_host_${i}`);
    const verdict = validateConfig(virtualService({ hosts, http: [{ route }] }));
    if (verdict.outcome !== 'validated') throw new Error(verdict.outcome);
    expect(verdict.result.errors).toHaveLength(MAX_REPORTED_ERRORS + 1);
    expect(verdict.result.errors[0]!.path).toBe('spec.hosts[0]');
    expect(verdict.result.errors[MAX_REPORTED_ERRORS]!.message).toBe(
      `... and ${500 - MAX_REPORTED_ERRORS} more errors`,
    );
  });

  test(`at most MAX_REPORTED_WARNINGS (${MAX_REPORTED_WARNINGS}) warnings are returned, then how many more there were`, () => {
    const sidecar = {
      apiVersion: 'networking.istio.io/v1',
      kind: 'Sidecar',
      metadata: { name: 's', namespace: 'default' },
      spec: { egress: [{ hosts: Array(200).fill('ns/a.example.com') }] },
    };
    const { response } = answer(reviewBytes(sidecar));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toHaveLength(MAX_REPORTED_WARNINGS + 1);
    expect(response.warnings![0]).toBe('spec.egress[0].hosts[1]: duplicated egress host: ns/a.example.com');
    expect(response.warnings![MAX_REPORTED_WARNINGS]).toBe(`... and ${199 - MAX_REPORTED_WARNINGS} more warnings`);
  });

  test(`a path or message longer than MAX_REPORTED_TEXT_LENGTH (${MAX_REPORTED_TEXT_LENGTH}) is clipped, saying how much was left out`, () => {
    const host = `${'x'.repeat(100_000)}.com`;
    const { reply, response } = answer(reviewBytes(virtualService({ hosts: [host], http: [{ route }] })));
    expect(response.status!.message).toMatch(
      /^configuration is invalid: spec\.hosts\[0\]: domain name "x+\.\.\. \(\d+ more characters\)$/,
    );
    expect(reply.body.length).toBeLessThan(MAX_REPORTED_TEXT_LENGTH + 1024);
  });

  test(`a review nested deeper than MAX_JSON_DEPTH (${MAX_JSON_DEPTH}) is denied naming the limit and where; at the limit it is read`, () => {
    // request (2) > object (3) > status (4): `status` is never validated, so only the depth decides.
    const atLimit = reviewBytes(virtualService({ hosts: ['a.example.com'], http: [{ route }] }), { uid: 'deep' });
    const withStatus = (levels: number) => {
      const object = { ...virtualService({ hosts: ['a.example.com'], http: [{ route }] }), status: DEEP_PLACEHOLDER };
      return reviewBytes(object, { uid: 'deep', splice: deepObjectText(levels) });
    };
    expect(answer(atLimit).response.allowed).toBe(true);
    const deepest = withStatus(MAX_JSON_DEPTH - 3);
    expect(jsonDepth(deepest.toString())).toBe(MAX_JSON_DEPTH);
    expect(answer(deepest).response).toEqual({ uid: 'deep', allowed: true });
    const tooDeep = answer(withStatus(MAX_JSON_DEPTH - 2));
    expect(tooDeep.response.uid).toBe('deep');
    expect(tooDeep.response.allowed).toBe(false);
    expect(tooDeep.response.status!.message).toMatch(
      new RegExp(
        `^could not decode body: exceeded max depth of ${MAX_JSON_DEPTH} nested JSON values at request\\.object\\.status\\.a\\.a\\.a`,
      ),
    );
    expect(tooDeep.reply.body.length).toBeLessThan(MAX_REPORTED_TEXT_LENGTH + 1024);
  });
});

describe(`the depth walk is skipped below MIN_BYTES_TOO_DEEP (${MIN_BYTES_TOO_DEEP}) bytes`, () => {
  test('the densest document nested one level past MAX_JSON_DEPTH is exactly MIN_BYTES_TOO_DEEP bytes long', () => {
    const densest = '['.repeat(MAX_JSON_DEPTH + 1) + ']'.repeat(MAX_JSON_DEPTH + 1);
    expect(jsonDepth(densest)).toBe(MAX_JSON_DEPTH + 1);
    expect(densest.length).toBe(MIN_BYTES_TOO_DEEP);
  });

  test('a review nested past the limit with arrays, the densest nesting there is, is still denied', () => {
    // request (2) > object (3) > status (4): arrays from level 4 down to one past the limit.
    const object = { ...virtualService({ hosts: ['a.example.com'], http: [{ route }] }), status: DEEP_PLACEHOLDER };
    const levels = MAX_JSON_DEPTH - 2;
    const body = reviewBytes(object, { uid: 'dense', splice: '['.repeat(levels) + ']'.repeat(levels) });
    expect(jsonDepth(body.toString())).toBe(MAX_JSON_DEPTH + 1);
    expect(body.length).toBeGreaterThanOrEqual(MIN_BYTES_TOO_DEEP);
    const { response } = answer(body);
    expect(response.allowed).toBe(false);
    expect(response.status!.message).toMatch(
      new RegExp(
        `^could not decode body: exceeded max depth of ${MAX_JSON_DEPTH} nested JSON values at request\\.object\\.status\\[0\\]\\[0\\]`,
      ),
    );
  });
});

describe('values nested 5,000 levels deep', () => {
  const DEPTH = 5_000;

  // istiod accepts this: Go's JSON decoders allow 10,000 levels, and istiod converts
  // patch.value to the Envoy type with unknown fields allowed, so a deep value under an
  // unknown key is dropped rather than refused. Depth alone is not a reason to deny here.
  test('an EnvoyFilter whose patch.value nests 5,000 levels is allowed, as istiod allows it', () => {
    const { response } = answer(reviewBytes(envoyFilter(DEEP_PLACEHOLDER), { splice: deepObjectText(DEPTH) }));
    expect(response.allowed).toBe(true);
  });

  test('a bad @type 5,000 levels down is still found, at its path', () => {
    const { reply, response } = answer(
      reviewBytes(envoyFilter(DEEP_PLACEHOLDER), { splice: deepObjectText(DEPTH, '{"@type":"not a url"}') }),
    );
    expect(response.allowed).toBe(false);
    expect(response.status!.message).toMatch(
      /^configuration is invalid: spec\.configPatches\[0\]\.patch\.value\.a\.a\.a\.a/,
    );
    expect(response.status!.message).toContain('invalid type URL "not a url"');
    expect(reply.body.length).toBeLessThan(2 * MAX_REPORTED_TEXT_LENGTH);
  });

  test('a VirtualService match with a 5,000-level unknown field goes through the duplicate-match check', () => {
    const match = { uri: { prefix: '/' }, extra: DEEP_PLACEHOLDER };
    const vs = virtualService({
      hosts: ['a.example.com'],
      http: [
        { match: [match], route },
        { match: [match], route },
      ],
    });
    const { response } = answer(reviewBytes(vs, { splice: deepObjectText(DEPTH) }));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toContain(
      'spec.http[1]: virtualService rule #1 match #0 is not used (duplicate/overlapping match in rule #0)',
    );
  });

  test('a 5,000-level operation is answered, not thrown', () => {
    const { response } = answer(
      reviewBytes(virtualService({}), { operation: DEEP_PLACEHOLDER, splice: '['.repeat(DEPTH) + ']'.repeat(DEPTH) }),
    );
    expect(response).toEqual({ uid: 'hostile-1', allowed: true });
  });

  test('a 5,000-level apiVersion of the review is a decode error', () => {
    const body = Buffer.from(`{"kind":"AdmissionReview","apiVersion":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}`);
    const { response } = answer(body);
    expect(response.allowed).toBe(false);
    expect(response.status!.message).toBe(
      'could not decode body: no kind "AdmissionReview" is registered for version "a list"',
    );
  });
});

/** One object per kind with the fields validators read as more than plain values. */
const SAMPLES: [string, string, object][] = [
  [
    'AuthorizationPolicy',
    'security.istio.io/v1',
    {
      action: 'DENY',
      selector: { matchLabels: { a: 'b' } },
      rules: [
        {
          from: [{ source: { principals: ['a'], ipBlocks: ['1.1.1.1'] } }],
          to: [{ operation: { ports: ['80'], paths: ['/a'] } }],
          when: [{ key: 'source.ip', values: ['1.1.1.1'] }],
        },
      ],
    },
  ],
  [
    'PeerAuthentication',
    'security.istio.io/v1',
    { selector: { matchLabels: { a: 'b' } }, mtls: { mode: 'STRICT' }, portLevelMtls: { '80': { mode: 'DISABLE' } } },
  ],
  [
    'RequestAuthentication',
    'security.istio.io/v1',
    {
      jwtRules: [
        {
          issuer: 'i',
          jwks: '{"keys":[{"kty":"RSA"}]}',
          fromHeaders: [{ name: 'h' }],
          outputClaimToHeaders: [{ header: 'x', claim: 'c' }],
          timeout: '1s',
        },
      ],
    },
  ],
  [
    'VirtualService',
    'networking.istio.io/v1',
    {
      hosts: ['a.b'],
      http: [
        {
          match: [{ uri: { prefix: '/' }, headers: { h: { exact: 'x' } } }, { uri: { prefix: '/' } }],
          route: [{ destination: { host: 'a.b' } }],
          headers: { request: { set: { host: 'x' } } },
          rewrite: { authority: 'y' },
          retries: { attempts: 1, perTryTimeout: '1s' },
          timeout: '1s',
        },
      ],
      tls: [{ match: [{ sniHosts: ['a.b'] }], route: [{ destination: { host: 'a.b' } }] }],
    },
  ],
  [
    'DestinationRule',
    'networking.istio.io/v1',
    {
      host: 'a.b',
      trafficPolicy: {
        connectionPool: { tcp: { connectTimeout: '1s' } },
        outlierDetection: { interval: '1s' },
        loadBalancer: { localityLbSetting: { distribute: [{ from: 'a', to: { b: 100 } }] } },
      },
      subsets: [{ name: 'v1', labels: { a: 'b' } }],
    },
  ],
  [
    'Gateway',
    'networking.istio.io/v1',
    {
      servers: [
        {
          port: { number: 443, name: 'h', protocol: 'HTTPS' },
          hosts: ['*'],
          tls: { mode: 'SIMPLE', credentialName: 'c', cipherSuites: ['x'] },
        },
      ],
    },
  ],
  [
    'ServiceEntry',
    'networking.istio.io/v1',
    {
      hosts: ['a.b'],
      ports: [{ number: 80, name: 'h', protocol: 'HTTP' }],
      resolution: 'STATIC',
      endpoints: [{ address: '1.1.1.1', ports: { h: 80 }, labels: { a: 'b' } }],
    },
  ],
  [
    'ServiceEntry',
    'networking.istio.io/v1',
    {
      hosts: ['a.b'],
      ports: [{ number: 80, name: 'h', protocol: 'HTTP' }],
      resolution: 'DNS',
      endpoints: [{ address: 'a.b', ports: { h: 80 }, labels: { a: 'b' } }],
    },
  ],
  [
    'Sidecar',
    'networking.istio.io/v1',
    {
      ingress: [{ port: { number: 1, name: 'a', protocol: 'HTTP' }, defaultEndpoint: '127.0.0.1:1' }],
      egress: [{ port: { number: 1 }, hosts: ['./*'] }],
    },
  ],
  ['WorkloadEntry', 'networking.istio.io/v1', { address: '1.1.1.1', ports: { a: 1 }, labels: { a: 'b' } }],
  [
    'WorkloadGroup',
    'networking.istio.io/v1',
    { metadata: { labels: { a: 'b' } }, template: {}, probe: { httpGet: { port: 1, httpHeaders: [{ name: 'a' }] } } },
  ],
  [
    'EnvoyFilter',
    'networking.istio.io/v1alpha3',
    {
      configPatches: [
        {
          applyTo: 'HTTP_FILTER',
          match: { listener: { filterChain: { filter: { name: 'n' } } } },
          patch: { operation: 'MERGE', value: { a: { '@type': 'type.googleapis.com/x.y' } } },
        },
      ],
    },
  ],
  [
    'Telemetry',
    'telemetry.istio.io/v1',
    {
      metrics: [
        { providers: [{ name: 'p' }], overrides: [{ tagOverrides: { a: { operation: 'UPSERT', value: 'v' } } }] },
      ],
      accessLogging: [{ filter: { expression: 'a' } }],
    },
  ],
  [
    'WasmPlugin',
    'extensions.istio.io/v1alpha1',
    { url: 'oci://a/b', vmConfig: { env: [{ name: 'a', valueFrom: 'INLINE' }] }, match: [{ ports: [{ number: 1 }] }] },
  ],
  [
    'ProxyConfig',
    'networking.istio.io/v1beta1',
    { selector: { matchLabels: { a: 'b' } }, concurrency: 1, environmentVariables: { a: 'b' } },
  ],
  [
    'TrafficExtension',
    'extensions.istio.io/v1alpha1',
    { lua: { inlineCode: 'x' }, match: [{ ports: [{ number: 1 }] }] },
  ],
];

/** Every copy of `value` with one field or element, at any depth, replaced by `deep`. */
function* withDeepValue(value: unknown, deep: unknown): Generator {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      yield value.map((v: unknown, j) => (j === i ? deep : v));
      for (const m of withDeepValue(value[i], deep)) yield value.map((v: unknown, j) => (j === i ? m : v));
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const k of Object.keys(value)) {
      yield { ...value, [k]: deep };
      for (const m of withDeepValue((value as Record<string, unknown>)[k], deep)) yield { ...value, [k]: m };
    }
  }
}

describe('a 5,000-level value in any field of any kind is reported or accepted, never thrown', () => {
  const deep = [deepArray(5_000), deepObject(5_000)];
  test.each(SAMPLES)('%s (%s)', (kind, apiVersion, spec) => {
    let cases = 0;
    for (const d of deep) {
      for (const mutated of withDeepValue(spec, d)) {
        expect(() =>
          validateConfig({ apiVersion, kind, metadata: { name: 'x', namespace: 'ns' }, spec: mutated }),
        ).not.toThrow();
        cases++;
      }
    }
    expect(cases).toBeGreaterThan(4);
  });

  test('a dry-run AuthorizationPolicy whose action is 5,000 levels deep is denied, not thrown', () => {
    const verdict = validateConfig({
      apiVersion: 'security.istio.io/v1',
      kind: 'AuthorizationPolicy',
      metadata: { name: 'x', namespace: 'ns', annotations: { 'istio.io/dry-run': 'true' } },
      spec: { action: deepArray(5_000) },
    });
    if (verdict.outcome !== 'validated') throw new Error(verdict.outcome);
    // The enum decoder runs first (as istiod decodes before it validates) and names the value by kind.
    expect(verdict.result.errors[0]!.message).toBe(
      'invalid value a list for enum istio.security.v1beta1.AuthorizationPolicy.Action',
    );
  });

  test('a JWKS whose "kty" nests 5,000 levels is a parse error', () => {
    const jwks = `{"keys":[{"kty":${'['.repeat(5_000)}${']'.repeat(5_000)}}]}`;
    const verdict = validateConfig({
      apiVersion: 'security.istio.io/v1',
      kind: 'RequestAuthentication',
      metadata: { name: 'x', namespace: 'ns' },
      spec: { jwtRules: [{ issuer: 'i', jwks }] },
    });
    if (verdict.outcome !== 'validated') throw new Error(verdict.outcome);
    expect(verdict.result.errors).toEqual([
      { path: 'spec.jwtRules[0].jwks', message: 'jwks parse error: key 0 has unsupported "kty" a list' },
    ]);
  });
});
