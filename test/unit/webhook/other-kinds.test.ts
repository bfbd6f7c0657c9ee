import { describeKind, validate } from './table';

const probe = (p: object) => ({ template: { ports: { http: 8080 } }, probe: p });

describeKind(
  'WorkloadGroup',
  [
    ['a template only', { template: { serviceAccount: 'vm' } }],
    [
      'an httpGet probe',
      probe({
        httpGet: { port: 8080, path: '/ready', scheme: 'HTTPS', httpHeaders: [{ name: 'x-probe', value: '1' }] },
        periodSeconds: 5,
      }),
    ],
    ['a tcpSocket probe', probe({ tcpSocket: { port: 3306 } })],
    ['an exec probe', probe({ exec: { command: ['cat', '/tmp/ready'] } })],
    ['metadata labels', { metadata: { labels: { app: 'vm' } }, template: {} }],
  ],
  [
    ['no template', { metadata: { labels: { app: 'x' } } }, 'spec.template: template is required'],
    [
      'bad metadata labels',
      { metadata: { labels: { app: 'bad value' } }, template: {} },
      'spec.metadata.labels: invalid labels: invalid tag value: "bad value"',
    ],
    [
      'a negative period',
      probe({ tcpSocket: { port: 1 }, periodSeconds: -1 }),
      'spec.probe.periodSeconds: periodSeconds must be non-negative',
    ],
    [
      'an httpGet port 0',
      probe({ httpGet: { port: 0 } }),
      'spec.probe.httpGet.port: port number 0 must be in the range 1..65535',
    ],
    [
      'an httpGet scheme FTP',
      probe({ httpGet: { port: 80, scheme: 'FTP' } }),
      'httpGet.scheme must be one of "HTTPS", "HTTP"',
    ],
    [
      'a bad probe header name',
      probe({ httpGet: { port: 80, httpHeaders: [{ name: 'x_probe' }] } }),
      'header name x_probe is not a valid header name',
    ],
    ['an exec probe without command', probe({ exec: {} }), 'spec.probe.exec.command: exec.command is required'],
    [
      'a probe without a method',
      probe({ periodSeconds: 5 }),
      'spec.probe: one of httpGet, tcpSocket or exec must be set',
    ],
  ],
);

const patch = (p: object) => ({ configPatches: [p] });
const httpFilter = {
  applyTo: 'HTTP_FILTER',
  match: {
    context: 'SIDECAR_INBOUND',
    listener: {
      filterChain: {
        filter: {
          name: 'envoy.filters.network.http_connection_manager',
          subFilter: { name: 'envoy.filters.http.router' },
        },
      },
    },
  },
};

const EF_WARNING = 'EnvoyFilter exposes internal implementation details';

describe('EnvoyFilter always warns that it exposes internals', () => {
  test('a valid EnvoyFilter is accepted with the warning', () => {
    const v = validate(
      'EnvoyFilter',
      patch({
        ...httpFilter,
        patch: {
          operation: 'INSERT_BEFORE',
          value: {
            name: 'lua',
            typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua' },
          },
        },
      }),
    );
    expect(v.errors).toEqual([]);
    expect(v.warnings[0]).toContain(EF_WARNING);
  });
});

describeKind(
  'EnvoyFilter',
  [
    [
      'a cluster merge',
      patch({
        applyTo: 'CLUSTER',
        match: { cluster: { service: 'a.default.svc.cluster.local' } },
        patch: { operation: 'MERGE', value: { connect_timeout: '1s' } },
      }),
      EF_WARNING,
    ],
    [
      'a REMOVE without value',
      patch({
        applyTo: 'NETWORK_FILTER',
        match: { listener: { filterChain: { filter: { name: 'envoy.filters.network.tcp_proxy' } } } },
        patch: { operation: 'REMOVE' },
      }),
      EF_WARNING,
    ],
    ['a waypoint patch is not validated', patch({ match: { context: 'WAYPOINT' } }), EF_WARNING],
    [
      'a proxyVersion regex',
      patch({
        applyTo: 'CLUSTER',
        match: { proxy: { proxyVersion: '^1\\.2[0-9].*' } },
        patch: { operation: 'MERGE', value: {} },
      }),
      EF_WARNING,
    ],
    [
      'a deprecated filter name warns',
      patch({
        applyTo: 'NETWORK_FILTER',
        match: { listener: { filterChain: { filter: { name: 'envoy.http_connection_manager' } } } },
        patch: { operation: 'MERGE', value: {} },
      }),
      'using deprecated filter name "envoy.http_connection_manager"',
    ],
  ],
  [
    ['a null patch', { configPatches: [null] }, 'spec.configPatches[0]: Envoy filter: null config patch'],
    [
      'a patch without applyTo',
      patch({ patch: { operation: 'MERGE', value: {} } }),
      'spec.configPatches[0].applyTo: Envoy filter: missing applyTo',
    ],
    ['a patch without patch', patch({ applyTo: 'CLUSTER' }), 'Envoy filter: missing patch'],
    [
      'a patch without operation',
      patch({ applyTo: 'CLUSTER', patch: { value: {} } }),
      'Envoy filter: missing patch operation',
    ],
    [
      'a MERGE without value',
      patch({ applyTo: 'CLUSTER', patch: { operation: 'MERGE' } }),
      'Envoy filter: missing patch value for non-remove operation',
    ],
    [
      'a bad proxyVersion regex',
      patch({ applyTo: 'CLUSTER', match: { proxy: { proxyVersion: '(1' } }, patch: { operation: 'MERGE', value: {} } }),
      'Envoy filter: invalid regex for proxy version',
    ],
    [
      'a listener applyTo with a cluster match',
      patch({ applyTo: 'LISTENER', match: { cluster: { name: 'a' } }, patch: { operation: 'MERGE', value: {} } }),
      'applyTo for listener class objects cannot have non listener match',
    ],
    [
      'a route applyTo with a listener match',
      patch({ applyTo: 'HTTP_ROUTE', match: { listener: {} }, patch: { operation: 'MERGE', value: {} } }),
      'applyTo for http route class objects cannot have non route configuration match',
    ],
    [
      'a filter match without name',
      patch({
        applyTo: 'HTTP_FILTER',
        match: { listener: { filterChain: { filter: { subFilter: { name: 'x' } } } } },
        patch: { operation: 'MERGE', value: {} },
      }),
      'Envoy filter: filter match has no name to match on',
    ],
    [
      'a subFilter with NETWORK_FILTER',
      patch({ ...httpFilter, applyTo: 'NETWORK_FILTER', patch: { operation: 'MERGE', value: {} } }),
      'subfilter match can be used with applyTo HTTP_FILTER only',
    ],
    [
      'a v2 type URL',
      patch({
        applyTo: 'CLUSTER',
        patch: {
          operation: 'MERGE',
          value: { typed_config: { '@type': 'type.googleapis.com/envoy.config.filter.http.lua.v2.Lua' } },
        },
      }),
      'referenced type unknown (hint: try using the v3 XDS API)',
    ],
    [
      'an unknown applyTo',
      patch({ applyTo: 'EVERYTHING', patch: { operation: 'MERGE', value: {} } }),
      'spec.configPatches[0].applyTo: unknown value "EVERYTHING"',
    ],
  ],
);

describeKind(
  'Telemetry',
  [
    ['a mesh-wide tracing sample rate', { tracing: [{ randomSamplingPercentage: 10 }] }],
    [
      'metrics overrides',
      {
        metrics: [
          {
            providers: [{ name: 'prometheus' }],
            overrides: [
              {
                match: { metric: 'REQUEST_COUNT' },
                tagOverrides: { source: { operation: 'REMOVE' }, dest: { value: 'x' } },
              },
            ],
          },
        ],
      },
    ],
    [
      'access logging to a provider',
      { accessLogging: [{ providers: [{ name: 'envoy' }], filter: { expression: 'response.code >= 400' } }] },
    ],
    [
      'a filter with strings, calls and brackets',
      { accessLogging: [{ filter: { expression: 'request.headers[\'x-debug\'] == "(on)" || !has(request.host)' } }] },
    ],
    [
      'custom tags',
      { tracing: [{ customTags: { env: { environment: { name: 'ENV' } }, lit: { literal: { value: 'v' } } } }] },
    ],
    ['two tracing entries warn', { tracing: [{}, {}] }, 'multiple tracing is not currently supported'],
  ],
  [
    [
      'a provider without name',
      { accessLogging: [{ providers: [{}] }] },
      'spec.accessLogging[0].providers[0]: providers.name may not be empty',
    ],
    [
      'a sampling percentage over 100',
      { tracing: [{ randomSamplingPercentage: 150 }] },
      'randomSamplingPercentage must be in range [0.0, 100.0]',
    ],
    [
      'an empty literal tag',
      { tracing: [{ customTags: { a: { literal: { value: '' } } } }] },
      'literal tag value may not be empty',
    ],
    [
      'an UPSERT without value',
      { metrics: [{ overrides: [{ tagOverrides: { a: { operation: 'UPSERT' } } }] }] },
      'tagOverrides.value must be set when operation is UPSERT',
    ],
    [
      'a REMOVE with a value',
      { metrics: [{ overrides: [{ tagOverrides: { a: { operation: 'REMOVE', value: 'x' } } }] }] },
      'tagOverrides.value may only be set when operation is UPSERT',
    ],
    [
      'selector with targetRef',
      {
        selector: { matchLabels: { a: 'b' } },
        targetRef: { kind: 'Gateway', group: 'gateway.networking.k8s.io', name: 'g' },
      },
      'only one of targetRefs or workloadSelector can be set',
    ],
    [
      'an empty customMetric',
      { metrics: [{ overrides: [{ match: { customMetric: '' } }] }] },
      'customMetric may not be empty',
    ],
    [
      'an access-log filter with an unclosed paren',
      { accessLogging: [{ filter: { expression: 'response.code >= (400' } }] },
      "spec.accessLogging[0].filter.expression: must be a valid CEL expression, unclosed '('",
    ],
    [
      'an access-log filter with a dangling operator',
      { accessLogging: [{ filter: { expression: 'response.code >= 400 &&' } }] },
      'an operator is missing an operand',
    ],
    ['an empty access-log filter', { accessLogging: [{ filter: {} }] }, 'the expression is empty'],
  ],
);

const sha = 'a'.repeat(64);
describeKind(
  'WasmPlugin',
  [
    ['an OCI image', { url: 'oci://ghcr.io/org/plugin:1.0', sha256: sha }],
    ['a bare image reference', { url: 'ghcr.io/org/plugin:1.0' }],
    ['an https URL', { url: 'https://example.com/plugin.wasm' }],
    ['a file path', { url: 'file:///opt/plugin.wasm' }],
    [
      'env from host and inline',
      {
        url: 'oci://a/b',
        vmConfig: {
          env: [
            { name: 'A', valueFrom: 'HOST' },
            { name: 'B', value: 'x' },
          ],
        },
      },
    ],
  ],
  [
    ['no url', {}, 'spec.url: url field needs to be set'],
    ['an ftp URL', { url: 'ftp://example.com/p.wasm' }, 'url contains unsupported scheme: ftp'],
    ['a short sha256', { url: 'oci://a/b', sha256: 'abc' }, 'sha256 field must be 64 characters long'],
    [
      'an uppercase sha256',
      { url: 'oci://a/b', sha256: 'A'.repeat(64) },
      'sha256 field must match [a-f0-9]{64} pattern',
    ],
    [
      'a long imagePullSecret',
      { url: 'oci://a/b', imagePullSecret: 's'.repeat(254) },
      'imagePullSecret field must be less than 253 characters long',
    ],
    [
      'a long pluginName',
      { url: 'oci://a/b', pluginName: 'p'.repeat(257) },
      'pluginName field must be less than 255 characters long',
    ],
    ['duplicate env names', { url: 'oci://a/b', vmConfig: { env: [{ name: 'A' }, { name: 'A' }] } }, 'duplicate env'],
    [
      'a HOST env with a value',
      { url: 'oci://a/b', vmConfig: { env: [{ name: 'A', valueFrom: 'HOST', value: 'x' }] } },
      'value may only be set when valueFrom is INLINE',
    ],
    [
      'a match port 0',
      { url: 'oci://a/b', match: [{ ports: [{ number: 0 }] }] },
      'spec.Match[0].Ports[0] is out of range: 0',
    ],
  ],
);

describeKind(
  'ProxyConfig',
  [
    ['concurrency 2', { concurrency: 2 }],
    ['concurrency 0 (one per core)', { concurrency: 0 }],
    [
      'a selector and environment variables',
      { selector: { matchLabels: { app: 'a' } }, environmentVariables: { A: 'b' } },
    ],
    ['image type', { image: { imageType: 'distroless' } }],
    ['an empty selector warns', { selector: {} }, 'workload selector specified without labels'],
  ],
  [
    ['negative concurrency', { concurrency: -1 }, 'spec.concurrency: concurrency must be greater than or equal to 0'],
    ['concurrency as text', { concurrency: 'two' }, 'spec.concurrency: must be an integer'],
    ['a wildcard selector', { selector: { matchLabels: { app: '*' } } }, 'wildcard is not supported in selector'],
    ['an empty selector key', { selector: { matchLabels: { '': 'a' } } }, 'empty key is not supported in selector'],
    [
      'the always-reject annotation',
      {},
      'annotation found, rejecting',
      { annotations: { 'internal.istio.io/webhook-always-reject': '' } },
    ],
  ],
);

describeKind(
  'TrafficExtension',
  [
    ['inline Lua', { lua: { inlineCode: 'function envoy_on_request(h) end' } }],
    ['a Wasm module', { wasm: { url: 'oci://ghcr.io/org/ext:1', sha256: sha } }],
    [
      'targetRefs to a Gateway',
      {
        targetRefs: [{ kind: 'Gateway', group: 'gateway.networking.k8s.io', name: 'waypoint' }],
        lua: { inlineCode: 'x' },
      },
    ],
    ['match ports', { lua: { inlineCode: 'x' }, match: [{ ports: [{ number: 8080 }] }] }],
    ['a selector', { selector: { matchLabels: { app: 'a' } }, lua: { inlineCode: 'x' } }],
  ],
  [
    ['neither wasm nor lua', {}, 'spec: exactly one of wasm or lua must be set'],
    [
      'both wasm and lua',
      { wasm: { url: 'oci://a/b' }, lua: { inlineCode: 'x' } },
      'exactly one of wasm or lua must be set',
    ],
    ['empty Lua code', { lua: { inlineCode: '' } }, 'spec.lua.inlineCode: lua.inlineCode cannot be empty'],
    ['Lua over 64 KiB', { lua: { inlineCode: 'x'.repeat(65537) } }, 'lua.inlineCode exceeds maximum size of 64KB'],
    ['a Wasm module without url', { wasm: {} }, 'spec.wasm.url: url field needs to be set'],
    [
      'a match port out of range',
      { lua: { inlineCode: 'x' }, match: [{ ports: [{ number: 70000 }] }] },
      'spec.Match[0].Ports[0] is out of range: 70000',
    ],
    [
      'selector with targetRefs',
      { selector: { matchLabels: { a: 'b' } }, targetRefs: [{ kind: 'Service', name: 's' }], lua: { inlineCode: 'x' } },
      'only one of targetRefs or workloadSelector can be set',
    ],
  ],
);
