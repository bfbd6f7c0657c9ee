// meshConfig rules after istiod's decoder and ValidateMeshConfig: each rule refuses a layer with a
// message naming the field path, and istiod's warnings (extension providers, ECDH curves,
// deprecated settings) let the layer apply.

import { applyMeshLayer, buildMeshConfig, type LayerNotes } from '../../../src/mesh/build';
import { defaultMeshConfig } from '../../../src/mesh/defaults';
import { MeshConfigError, decodeMeshConfig, parseMeshConfig } from '../../../src/mesh/parse';
import type { MeshConfigIssue } from '../../../src/mesh/types';

function issuesOf(text: string): MeshConfigIssue[] {
  try {
    applyMeshLayer(defaultMeshConfig(), { source: 'mesh', text });
  } catch (err) {
    if (err instanceof MeshConfigError) return [...err.issues];
    throw err;
  }
  return [];
}

function notesOf(text: string): LayerNotes {
  const notes: LayerNotes = { warnings: [], unknown: [] };
  applyMeshLayer(defaultMeshConfig(), { source: 'mesh', text }, notes);
  return notes;
}

const warningsOf = (text: string) => notesOf(text).warnings.map(({ field, message }) => ({ field, message }));

describe('enum fields take the value names of istio/api, as istiod decodes them', () => {
  test.each([
    ['ingressControllerMode: FASTEST', 'ingressControllerMode', 'istio.mesh.v1alpha1.MeshConfig.IngressControllerMode'],
    ['accessLogEncoding: XML', 'accessLogEncoding', 'istio.mesh.v1alpha1.MeshConfig.AccessLogEncoding'],
    [
      'outboundTrafficPolicy: {mode: ALLOW_SOME}',
      'outboundTrafficPolicy.mode',
      'istio.mesh.v1alpha1.MeshConfig.OutboundTrafficPolicy.Mode',
    ],
    [
      'inboundTrafficPolicy: {mode: REMOTE}',
      'inboundTrafficPolicy.mode',
      'istio.mesh.v1alpha1.MeshConfig.InboundTrafficPolicy.Mode',
    ],
    ['h2UpgradePolicy: ALWAYS', 'h2UpgradePolicy', 'istio.mesh.v1alpha1.MeshConfig.H2UpgradePolicy'],
    [
      'serviceScopeConfigs: [{scope: WORLD}]',
      'serviceScopeConfigs[0].scope',
      'istio.mesh.v1alpha1.MeshConfig.ServiceScopeConfigs.Scope',
    ],
    [
      'pathNormalization: {normalization: SOME}',
      'pathNormalization.normalization',
      'istio.mesh.v1alpha1.MeshConfig.ProxyPathNormalization.NormalizationType',
    ],
    [
      'meshMTLS: {minProtocolVersion: TLSV1_1}',
      'meshMTLS.minProtocolVersion',
      'istio.mesh.v1alpha1.MeshConfig.TLSConfig.TLSProtocol',
    ],
    [
      'serviceEntryVisibility: {defaultVisibility: ALL}',
      'serviceEntryVisibility.defaultVisibility',
      'istio.mesh.v1alpha1.ServiceEntryVisibility.Visibility',
    ],
    [
      'defaultConfig: {controlPlaneAuthPolicy: SOMETIMES}',
      'defaultConfig.controlPlaneAuthPolicy',
      'istio.mesh.v1alpha1.AuthenticationPolicy',
    ],
    [
      'defaultConfig: {interceptionMode: BOTH}',
      'defaultConfig.interceptionMode',
      'istio.mesh.v1alpha1.ProxyConfig.InboundInterceptionMode',
    ],
    [
      'defaultConfig: {tracingServiceName: FULL}',
      'defaultConfig.tracingServiceName',
      'istio.mesh.v1alpha1.ProxyConfig.TracingServiceName',
    ],
    [
      'defaultConfig: {gatewayTopology: {forwardClientCertDetails: KEEP}}',
      'defaultConfig.gatewayTopology.forwardClientCertDetails',
      'istio.mesh.v1alpha1.ForwardClientCertDetails',
    ],
    [
      'extensionProviders: [{name: z, zipkin: {service: z.ns, port: 9411, traceContextOption: W3C}}]',
      'extensionProviders[0].zipkin.traceContextOption',
      'istio.mesh.v1alpha1.MeshConfig.ExtensionProvider.ZipkinTracingProvider.TraceContextOption',
    ],
    [
      'outboundTrafficPolicy: {tls: {mode: STRICT}}',
      'outboundTrafficPolicy.tls.mode',
      'istio.networking.v1alpha3.ClientTLSSettings.TLSmode',
    ],
  ])('%s is refused naming the field and the enum', (text, field, enumName) => {
    const [issue, ...rest] = issuesOf(text);
    expect(rest).toEqual([]);
    expect(issue?.field).toBe(field);
    expect(issue?.message).toMatch(
      new RegExp(`^unknown value "\\w+" for enum ${enumName.replace(/\./g, '\\.')} \\(one of `),
    );
  });

  test('a known enum number becomes its name; an unknown number is refused', () => {
    expect(parseMeshConfig('ingressControllerMode: 3\n', 'f')).toEqual({ ingressControllerMode: 'STRICT' });
    expect(issuesOf('accessLogEncoding: 7')).toEqual([
      {
        field: 'accessLogEncoding',
        message: 'unknown value 7 for enum istio.mesh.v1alpha1.MeshConfig.AccessLogEncoding (one of TEXT, JSON)',
      },
    ]);
  });

  test('every valid enum name is accepted', () => {
    expect(issuesOf('ingressControllerMode: OFF\noutboundTrafficPolicy: {mode: ALLOW_ANY_DYNAMIC_DNS}\n')).toEqual([]);
    expect(issuesOf('defaultConfig: {controlPlaneAuthPolicy: NONE, interceptionMode: TPROXY}')).toEqual([]);
  });
});

describe('decoding as jsonpb does', () => {
  test('a quoted integer is an integer; a word or a fraction is not', () => {
    expect(parseMeshConfig('proxyListenPort: "15001"\n', 'f')).toEqual({ proxyListenPort: 15001 });
    expect(issuesOf('proxyListenPort: 1.5')).toEqual([
      { field: 'proxyListenPort', message: 'expected an integer, got number 1.5' },
    ]);
  });

  test('proto field names are read as their JSON names, and the JSON name wins when both are given', () => {
    expect(parseMeshConfig('trust_domain: a.example\nroot_namespace: r\n', 'f')).toEqual({
      trustDomain: 'a.example',
      rootNamespace: 'r',
    });
    expect(parseMeshConfig('trust_domain: a.example\ntrustDomain: b.example\n', 'f')).toEqual({
      trustDomain: 'b.example',
    });
    expect(parseMeshConfig('defaultConfig: {discovery_address: "x.example:1"}', 'f')).toEqual({
      defaultConfig: { discoveryAddress: 'x.example:1' },
    });
  });

  test('unknown fields are kept and listed with their path, at any modelled depth', () => {
    const decoded = decodeMeshConfig('trustDomian: x\ndefaultConfig: {proxyMetdata: {}}\nmeshMTLS: {foo: 1}\n', 'f');
    expect(decoded.unknown).toEqual(['trustDomian', 'defaultConfig.proxyMetdata', 'meshMTLS.foo']);
    expect(decoded.overlay['trustDomian']).toBe('x');
  });

  test('a "__proto__" key is an unknown field, not a prototype', () => {
    const decoded = decodeMeshConfig('{"__proto__": {"trustDomain": "evil"}}', 'f');
    expect(decoded.unknown).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(decoded.overlay)).toBe(Object.prototype);
  });
});

describe('ValidateMeshConfig rules', () => {
  test('protocolDetectionTimeout must be whole milliseconds', () => {
    expect(issuesOf('protocolDetectionTimeout: 1500us')).toEqual([
      { field: 'protocolDetectionTimeout', message: 'only durations to ms precision are supported' },
    ]);
    expect(issuesOf('protocolDetectionTimeout: 100ms')).toEqual([]);
  });

  test('serviceSettings hosts are DNS names with an optional wildcard first label', () => {
    expect(issuesOf('serviceSettings: [{hosts: ["*.svc.example", "a.example"]}]')).toEqual([]);
    expect(issuesOf('serviceSettings: [{hosts: ["ok.example", "bad_host.example"]}]')).toEqual([
      {
        field: 'serviceSettings[0].hosts[1]',
        message: 'host `bad_host.example`: domain name "bad_host.example" invalid (label "bad_host" invalid)',
      },
    ]);
  });

  test('defaultConfig tracing addresses are host:port; lightstep needs an access token', () => {
    expect(issuesOf('defaultConfig: {tracing: {zipkin: {address: "$(HOST_IP):9411"}}}')).toEqual([]);
    expect(issuesOf('defaultConfig: {tracing: {zipkin: {address: "zipkin"}}}')).toEqual([
      { field: 'defaultConfig.tracing.zipkin.address', message: '"zipkin" is not host:port' },
    ]);
    expect(issuesOf('defaultConfig: {tracing: {lightstep: {address: "ls.example:8080"}}}')).toEqual([
      { field: 'defaultConfig.tracing.lightstep.accessToken', message: 'access token is required' },
    ]);
  });

  test('defaultConfig statsd and remote service addresses are host:port', () => {
    expect(issuesOf('defaultConfig: {statsdUdpAddress: "statsd"}').map((i) => i.field)).toEqual([
      'defaultConfig.statsdUdpAddress',
    ]);
    expect(issuesOf('defaultConfig: {envoyAccessLogService: {address: "als:port"}}').map((i) => i.field)).toEqual([
      'defaultConfig.envoyAccessLogService.address',
    ]);
  });

  test('INHERIT is an AuthenticationPolicy name but not a valid control plane auth policy', () => {
    expect(issuesOf('defaultConfig: {controlPlaneAuthPolicy: INHERIT}')).toEqual([
      {
        field: 'defaultConfig.controlPlaneAuthPolicy',
        message: 'unrecognized control plane auth policy "INHERIT"; must be NONE or MUTUAL_TLS',
      },
    ]);
  });

  test('connection settings limits', () => {
    expect(
      issuesOf(
        'defaultConfig: {connectionSettings: {httpMaxConcurrentStreams: 0, http2InitialStreamWindowSize: 1024, httpIdleTimeout: -1s}}',
      ),
    ).toEqual([
      { field: 'defaultConfig.connectionSettings.httpIdleTimeout', message: 'must be non-negative' },
      { field: 'defaultConfig.connectionSettings.httpMaxConcurrentStreams', message: 'must be positive' },
      { field: 'defaultConfig.connectionSettings.http2InitialStreamWindowSize', message: 'must be at least 65535' },
    ]);
  });

  test('private key providers need a non-zero poll delay', () => {
    expect(issuesOf('defaultConfig: {privateKeyProvider: {cryptomb: {pollDelay: 0s}}}')).toEqual([
      { field: 'defaultConfig.privateKeyProvider.cryptomb.pollDelay', message: 'pollDelay must be non zero' },
    ]);
    expect(issuesOf('defaultConfig: {privateKeyProvider: {}}')).toEqual([
      { field: 'defaultConfig.privateKeyProvider', message: 'unknown private key provider' },
    ]);
  });

  test('localityLbSetting: distribute and failover exclude each other; weights total 100; failover names regions', () => {
    expect(
      issuesOf(
        'localityLbSetting: {distribute: [{from: a/*, to: {"a/*": 50, "b/*": 50}}], failover: [{from: a, to: b}]}',
      ),
    ).toEqual([{ field: 'localityLbSetting', message: "can not simultaneously specify 'distribute' and 'failover'" }]);
    expect(issuesOf('localityLbSetting: {distribute: [{from: a/*, to: {"a/*": 60, "b/*": 30}}]}')).toEqual([
      { field: 'localityLbSetting.distribute[0].to', message: 'total locality weight 90 != 100' },
    ]);
    expect(issuesOf('localityLbSetting: {failover: [{from: a, to: a}, {from: a/z, to: b}]}')).toEqual([
      {
        field: 'localityLbSetting.failover[0]',
        message: 'locality lb failover settings must specify different regions',
      },
      { field: 'localityLbSetting.failover[1]', message: 'locality lb failover only specify region' },
    ]);
    expect(
      issuesOf('localityLbSetting: {distribute: [{from: "a/*", to: {"a/*": 100}}, {from: "a/b", to: {"b": 100}}]}'),
    ).toEqual([
      { field: 'localityLbSetting.distribute', message: 'locality a/b overlap with previous specified ones' },
    ]);
  });

  test('zoneAwareLbSetting may not order by topology labels', () => {
    expect(
      issuesOf('zoneAwareLbSetting: {failoverPriority: [topology.kubernetes.io/zone]}').map((i) => i.field),
    ).toEqual(['zoneAwareLbSetting.failoverPriority']);
  });

  test('defaultTrafficPolicy: non-negative pool sizes, valid durations, percentages in 0..100', () => {
    expect(issuesOf('defaultTrafficPolicy: {connectionPool: {}}')).toEqual([
      { field: 'defaultTrafficPolicy.connectionPool', message: 'connection pool must have at least one field' },
    ]);
    expect(
      issuesOf(
        'defaultTrafficPolicy: {connectionPool: {tcp: {maxConnections: -1, connectTimeout: 0s}}, outlierDetection: {maxEjectionPercent: 101}}',
      ),
    ).toEqual([
      { field: 'defaultTrafficPolicy.connectionPool.tcp.maxConnections', message: 'must be non-negative' },
      { field: 'defaultTrafficPolicy.connectionPool.tcp.connectTimeout', message: 'duration must be greater than 1ms' },
      {
        field: 'defaultTrafficPolicy.outlierDetection.maxEjectionPercent',
        message: 'percentage 101 is not in range 0..100',
      },
    ]);
  });

  test('defaultInboundHttpRetryPolicy: retryOn policies, and nothing configured when attempts is 0', () => {
    expect(issuesOf('defaultInboundHttpRetryPolicy: {attempts: 2, retryOn: "5xx,503,sometimes"}')).toEqual([
      { field: 'defaultInboundHttpRetryPolicy.retryOn', message: '"sometimes" is not a valid retryOn policy' },
    ]);
    expect(issuesOf('defaultInboundHttpRetryPolicy: {attempts: 0, backoff: 1s}')).toEqual([
      { field: 'defaultInboundHttpRetryPolicy', message: 'backoff configured when attempts are set to 0 (disabled)' },
    ]);
  });
});

describe('label selectors (discoverySelectors, serviceScopeConfigs) as Kubernetes converts them', () => {
  test.each([
    [
      'discoverySelectors: [{matchExpressions: [{key: a, operator: In}]}]',
      'discoverySelectors[0].matchExpressions[0].values',
      "for 'In', 'NotIn' operators, values set can't be empty",
    ],
    [
      'discoverySelectors: [{matchExpressions: [{key: a, operator: Exists, values: [x]}]}]',
      'discoverySelectors[0].matchExpressions[0].values',
      "values set must be empty for 'Exists' and 'DoesNotExist'",
    ],
    [
      'discoverySelectors: [{matchLabels: {"bad key!": x}}]',
      'discoverySelectors[0].matchLabels',
      'invalid label key "bad key!"',
    ],
    [
      'discoverySelectors: [{matchLabels: {env: "no spaces"}}]',
      'discoverySelectors[0].matchLabels.env',
      'invalid label value "no spaces"',
    ],
    [
      'serviceScopeConfigs: [{servicesSelector: {matchExpressions: [{key: "/x", operator: Exists}]}}]',
      'serviceScopeConfigs[0].servicesSelector.matchExpressions[0].key',
      'invalid label key "/x"',
    ],
  ])('%s', (text, field, message) => {
    const issues = issuesOf(text);
    expect(issues.map((i) => i.field)).toEqual([field]);
    expect(issues[0]?.message).toContain(message);
  });

  test('valid selectors pass', () => {
    expect(
      issuesOf(
        'discoverySelectors: [{matchLabels: {istio.io/rev: default}}, {matchExpressions: [{key: env, operator: NotIn, values: [prod]}]}]',
      ),
    ).toEqual([]);
  });
});

describe("istiod's warnings let the layer apply", () => {
  test('extension providers: an empty or repeated name, no provider, a bad service or port', () => {
    expect(warningsOf('extensionProviders: [{prometheus: {}}]')).toEqual([
      { field: 'extensionProviders[3].name', message: 'empty extension provider name' },
    ]);
    expect(
      warningsOf(
        'extensionProviders: [{name: a, zipkin: {service: zipkin.example, port: 9411}}, {name: a, datadog: {service: d.example, port: 1}}]',
      ),
    ).toEqual([
      {
        field: 'extensionProviders[1].name',
        message: 'duplicate extension provider name a; this entry replaces the earlier one',
      },
    ]);
    expect(warningsOf('extensionProviders: [{name: none}]')).toEqual([
      { field: 'extensionProviders[3]', message: 'invalid extension provider none: unsupported provider: none is set' },
    ]);
    expect(warningsOf('extensionProviders: [{name: z, zipkin: {service: "", port: 0}}]')).toEqual([
      { field: 'extensionProviders[3].zipkin.service', message: 'service must not be empty' },
      { field: 'extensionProviders[3].zipkin.port', message: 'port 0 must be in the range 1..65535' },
    ]);
    expect(
      warningsOf(
        'extensionProviders: [{name: ext, envoyExtAuthzHttp: {service: ns/authz.example, port: 80, statusOnError: "999", pathPrefix: check}}]',
      ),
    ).toEqual([
      {
        field: 'extensionProviders[3].envoyExtAuthzHttp.statusOnError',
        message: 'unsupported statusOnError value 999',
      },
      {
        field: 'extensionProviders[3].envoyExtAuthzHttp.pathPrefix',
        message: 'pathPrefix should begin with `/` but found "check"',
      },
    ]);
  });

  test('tlsDefaults.ecdhCurves: unknown and repeated curves', () => {
    expect(warningsOf('tlsDefaults: {ecdhCurves: [P-256, P-256, P-999]}')).toEqual([
      { field: 'tlsDefaults.ecdhCurves', message: 'detected unrecognized ECDH curves: [P-999]' },
      { field: 'tlsDefaults.ecdhCurves', message: 'detected duplicate ECDH curves: [P-256]' },
    ]);
  });

  test('ISTIO_META_DNS_AUTO_ALLOCATE is deprecated', () => {
    expect(
      warningsOf('defaultConfig: {proxyMetadata: {ISTIO_META_DNS_AUTO_ALLOCATE: "true"}}').map((w) => w.field),
    ).toEqual(['defaultConfig.proxyMetadata.ISTIO_META_DNS_AUTO_ALLOCATE']);
  });

  test('a build reports whether any source had text, so "no valid config yet" can be told apart', () => {
    expect(buildMeshConfig([{ source: 'cm', text: undefined }]).fromSource).toBe(false);
    expect(buildMeshConfig([{ source: 'cm', text: 'rootNamespace: r\n' }]).fromSource).toBe(true);
  });

  test('an error message is one line even when the YAML error is not', () => {
    const err = (() => {
      try {
        parseMeshConfig('a: [\n  b\n', 'f');
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(err?.message).not.toContain('\n');
  });
});
