// Validators read user input of any shape: whatever type sits at any field, they report errors
// and never throw (a throw would leave the API server waiting for an answer).

import { validateConfig } from '../../../src/webhook/validators/registry';

const SAMPLES: Record<string, [string, unknown]> = {
  AuthorizationPolicy: [
    'security.istio.io/v1',
    {
      action: 'DENY',
      selector: { matchLabels: { a: 'b' } },
      rules: [
        {
          from: [{ source: { principals: ['a'], ipBlocks: ['1.1.1.1'] } }],
          to: [{ operation: { ports: ['80'], paths: ['/a/{*}'] } }],
          when: [{ key: 'source.ip', values: ['1.1.1.1'] }],
        },
      ],
    },
  ],
  PeerAuthentication: [
    'security.istio.io/v1',
    { selector: { matchLabels: { a: 'b' } }, mtls: { mode: 'STRICT' }, portLevelMtls: { '80': { mode: 'DISABLE' } } },
  ],
  RequestAuthentication: [
    'security.istio.io/v1',
    {
      jwtRules: [
        {
          issuer: 'i',
          jwks: '{"keys":[]}',
          fromHeaders: [{ name: 'h' }],
          outputClaimToHeaders: [{ header: 'x', claim: 'c' }],
          timeout: '1s',
        },
      ],
    },
  ],
  VirtualService: [
    'networking.istio.io/v1',
    {
      hosts: ['a'],
      gateways: ['ns/gw'],
      http: [
        {
          match: [{ uri: { regex: 'a' }, headers: { h: { exact: 'x' } } }],
          route: [
            { destination: { host: 'a', port: { number: 80 } }, weight: 1, headers: { request: { set: { a: 'b' } } } },
          ],
          retries: { attempts: 1 },
          fault: { abort: { httpStatus: 500 } },
          corsPolicy: { allowOrigins: [{ exact: 'x' }] },
          redirect: { uri: '/x' },
          rewrite: { uri: '/y' },
          mirrors: [{ destination: { host: 'm' } }],
        },
      ],
      tls: [{ match: [{ sniHosts: ['a'] }], route: [{ destination: { host: 'a' } }] }],
      tcp: [{ match: [{ port: 1 }], route: [{ destination: { host: 'a' } }] }],
    },
  ],
  DestinationRule: [
    'networking.istio.io/v1',
    {
      host: 'a',
      trafficPolicy: {
        connectionPool: { tcp: { maxConnections: 1 }, http: { http2KeepAlive: { interval: '1s', timeout: '1s' } } },
        outlierDetection: { interval: '1s' },
        loadBalancer: {
          consistentHash: { maglev: { tableSize: 7 }, httpCookie: { name: 'c' } },
          localityLbSetting: { distribute: [{ from: 'a', to: { b: 100 } }] },
        },
        tls: { mode: 'MUTUAL' },
        portLevelSettings: [{ port: { number: 1 }, tls: {} }],
        tunnel: { targetHost: 'a', targetPort: 1 },
      },
      subsets: [{ name: 'v1', labels: { a: 'b' } }],
      exportTo: ['.'],
    },
  ],
  Gateway: [
    'networking.istio.io/v1',
    {
      servers: [
        {
          port: { number: 443, name: 'h', protocol: 'HTTPS' },
          hosts: ['*'],
          tls: {
            mode: 'SIMPLE',
            credentialName: 'c',
            cipherSuites: ['x'],
            tlsCertificates: [{ serverCertificate: 'a' }],
          },
        },
      ],
    },
  ],
  ServiceEntry: [
    'networking.istio.io/v1',
    {
      hosts: ['a.b'],
      addresses: ['1.1.1.1'],
      ports: [{ number: 80, name: 'h', protocol: 'HTTP' }],
      resolution: 'STATIC',
      endpoints: [{ address: '1.1.1.1', ports: { h: 80 }, labels: { a: 'b' } }],
      workloadSelector: { labels: { a: 'b' } },
      exportTo: ['*'],
    },
  ],
  Sidecar: [
    'networking.istio.io/v1',
    {
      workloadSelector: { labels: { a: 'b' } },
      ingress: [
        {
          port: { number: 1, name: 'a', protocol: 'HTTPS' },
          defaultEndpoint: '127.0.0.1:1',
          tls: { mode: 'SIMPLE' },
          connectionPool: { http: {} },
        },
      ],
      egress: [{ port: { number: 1 }, hosts: ['./*'] }],
      outboundTrafficPolicy: { mode: 'ALLOW_ANY', egressProxy: { host: 'a.b', port: { number: 1 } } },
    },
  ],
  WorkloadEntry: ['networking.istio.io/v1', { address: '1.1.1.1', ports: { a: 1 }, labels: { a: 'b' } }],
  WorkloadGroup: [
    'networking.istio.io/v1',
    { metadata: { labels: { a: 'b' } }, template: {}, probe: { httpGet: { port: 1, httpHeaders: [{ name: 'a' }] } } },
  ],
  EnvoyFilter: [
    'networking.istio.io/v1alpha3',
    {
      workloadSelector: { labels: { a: 'b' } },
      configPatches: [
        {
          applyTo: 'HTTP_FILTER',
          match: {
            proxy: { proxyVersion: 'x' },
            listener: { filterChain: { filter: { name: 'n', subFilter: { name: 's' } } } },
          },
          patch: { operation: 'MERGE', value: { a: { '@type': 'type.googleapis.com/x.y' } } },
        },
      ],
    },
  ],
  Telemetry: [
    'telemetry.istio.io/v1',
    {
      metrics: [
        {
          providers: [{ name: 'p' }],
          overrides: [{ match: { customMetric: 'm' }, tagOverrides: { a: { operation: 'UPSERT', value: 'v' } } }],
        },
      ],
      tracing: [{ customTags: { a: { literal: { value: 'v' } } } }],
      accessLogging: [{ filter: { expression: 'a' } }],
    },
  ],
  WasmPlugin: [
    'extensions.istio.io/v1alpha1',
    {
      url: 'oci://a/b',
      vmConfig: { env: [{ name: 'a' }] },
      match: [{ ports: [{ number: 1 }] }],
      targetRefs: [{ kind: 'Service', name: 'a' }],
    },
  ],
  ProxyConfig: ['networking.istio.io/v1beta1', { selector: { matchLabels: { a: 'b' } }, concurrency: 1 }],
  TrafficExtension: ['extensions.istio.io/v1alpha1', { lua: { inlineCode: 'x' }, match: [{ ports: [{ number: 1 }] }] }],
};

const REPLACEMENTS: unknown[] = [null, 0, -1, 1.5, '', 'x', true, [], [null], [1], {}, { a: 1 }];

/** Every copy of `value` with one field (at any depth) replaced by each replacement. */
function* mutations(value: unknown): Generator {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      for (const r of REPLACEMENTS) yield value.map((v: unknown, j) => (j === i ? r : v));
      for (const m of mutations(value[i])) yield value.map((v: unknown, j) => (j === i ? m : v));
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const k of Object.keys(value)) {
      for (const r of REPLACEMENTS) yield { ...value, [k]: r };
      for (const m of mutations((value as Record<string, unknown>)[k])) yield { ...value, [k]: m };
    }
  }
}

describe('validators never throw', () => {
  test.each(Object.entries(SAMPLES))(
    '%s: any type at any field is reported, not thrown',
    (kind, [apiVersion, spec]) => {
      let cases = 0;
      for (const mutated of [spec, ...mutations(spec)]) {
        expect(() =>
          validateConfig({ apiVersion, kind, metadata: { name: 'x', namespace: 'ns' }, spec: mutated }),
        ).not.toThrow();
        cases++;
      }
      expect(cases).toBeGreaterThan(REPLACEMENTS.length);
    },
  );
});
