// meshConfig.defaultConfig (istio.mesh.v1alpha1.ProxyConfig in istio/api mesh/v1alpha1/proxy.proto).

import { CLIENT_TLS, e, enumOf, m, MESH, msg, TRACE_CONTEXT } from './schema-types';

/** Both the gateway topology and the proxy headers name how a proxy treats x-forwarded-client-cert. */
const FORWARD_CLIENT_CERT_DETAILS = enumOf(
  `${MESH}.ForwardClientCertDetails`,
  'UNDEFINED',
  'SANITIZE',
  'FORWARD_ONLY',
  'APPEND_FORWARD',
  'SANITIZE_SET',
  'ALWAYS_FORWARD_ONLY',
);

const REMOTE_SERVICE = msg(`${MESH}.RemoteService`, {
  address: 'string',
  tlsSettings: m(CLIENT_TLS),
  tcpKeepalive: 'any',
});

const TRACING = msg(`${MESH}.Tracing`, {
  zipkin: m(msg(`${MESH}.Tracing.Zipkin`, { address: 'string' })),
  lightstep: m(msg(`${MESH}.Tracing.Lightstep`, { address: 'string', accessToken: 'string' })),
  datadog: m(msg(`${MESH}.Tracing.Datadog`, { address: 'string' })),
  stackdriver: 'any',
  openCensusAgent: m(
    msg(`${MESH}.Tracing.OpenCensusAgent`, {
      address: 'string',
      context: { enumList: { ...TRACE_CONTEXT, name: `${MESH}.Tracing.OpenCensusAgent.TraceContext` } },
    }),
  ),
  customTags: 'any',
  maxPathTagLength: 'uint',
  sampling: 'double',
  tlsSettings: m(CLIENT_TLS),
  enableIstioTags: 'bool',
});

export const AUTHENTICATION_POLICY = enumOf(`${MESH}.AuthenticationPolicy`, 'NONE', 'MUTUAL_TLS', ['INHERIT', 1000]);

const CONNECTION_SETTINGS = msg(`${MESH}.ProxyConfig.ConnectionSettings`, {
  profile: e(enumOf(`${MESH}.ProxyConfig.ConnectionSettings.Profile`, 'SIDECAR', 'EDGE')),
  listenerPerConnectionBufferLimitBytes: 'int',
  clusterPerConnectionBufferLimitBytes: 'int',
  httpIdleTimeout: 'duration',
  httpMaxConnectionDuration: 'duration',
  httpDrainTimeout: 'duration',
  httpRequestTimeout: 'duration',
  httpRequestHeadersTimeout: 'duration',
  httpStreamIdleTimeout: 'duration',
  httpMaxStreamDuration: 'duration',
  httpMaxConcurrentStreams: 'int',
  http2InitialStreamWindowSize: 'int',
  http2InitialConnectionWindowSize: 'int',
  httpHeadersWithUnderscoresAction: e(
    enumOf(
      `${MESH}.ProxyConfig.ConnectionSettings.HeadersWithUnderscoresAction`,
      'HEADERS_WITH_UNDERSCORES_UNSPECIFIED',
      'HEADERS_WITH_UNDERSCORES_ALLOW',
      'HEADERS_WITH_UNDERSCORES_REJECT_REQUEST',
      'HEADERS_WITH_UNDERSCORES_DROP_HEADER',
    ),
  ),
  httpMergeSlashes: 'bool',
  httpPathWithEscapedSlashesAction: e(
    enumOf(
      `${MESH}.ProxyConfig.ConnectionSettings.PathWithEscapedSlashesAction`,
      'PATH_WITH_ESCAPED_SLASHES_UNSPECIFIED',
      'KEEP_UNCHANGED',
      'REJECT_REQUEST',
      'UNESCAPE_AND_REDIRECT',
      'UNESCAPE_AND_FORWARD',
    ),
  ),
  listenerConnectionLimit: 'int',
  globalDownstreamConnectionLimit: 'int',
});

export const PROXY_CONFIG = msg(`${MESH}.ProxyConfig`, {
  configPath: 'string',
  binaryPath: 'string',
  serviceCluster: 'string',
  tracingServiceName: e(
    enumOf(
      `${MESH}.ProxyConfig.TracingServiceName`,
      'APP_LABEL_AND_NAMESPACE',
      'CANONICAL_NAME_ONLY',
      'CANONICAL_NAME_AND_NAMESPACE',
    ),
  ),
  drainDuration: 'duration',
  discoveryAddress: 'string',
  discoveryRefreshDelay: 'duration',
  zipkinAddress: 'string',
  statsdUdpAddress: 'string',
  envoyMetricsServiceAddress: 'string',
  proxyAdminPort: 'int',
  availabilityZone: 'string',
  controlPlaneAuthPolicy: e(AUTHENTICATION_POLICY),
  customConfigFile: 'string',
  statNameLength: 'int',
  concurrency: 'int',
  proxyBootstrapTemplatePath: 'string',
  interceptionMode: e(enumOf(`${MESH}.ProxyConfig.InboundInterceptionMode`, 'REDIRECT', 'TPROXY', 'NONE')),
  tracing: m(TRACING),
  sds: 'any',
  envoyAccessLogService: m(REMOTE_SERVICE),
  envoyMetricsService: m(REMOTE_SERVICE),
  proxyMetadata: 'stringMap',
  runtimeValues: 'stringMap',
  statusPort: 'int',
  extraStatTags: 'strings',
  gatewayTopology: m(
    msg(`${MESH}.Topology`, {
      numTrustedProxies: 'uint',
      forwardClientCertDetails: e(FORWARD_CLIENT_CERT_DETAILS),
      proxyProtocol: 'any',
    }),
  ),
  terminationDrainDuration: 'duration',
  meshId: 'string',
  readinessProbe: 'any',
  proxyStatsMatcher: m(
    msg(`${MESH}.ProxyConfig.ProxyStatsMatcher`, {
      inclusionPrefixes: 'strings',
      inclusionSuffixes: 'strings',
      inclusionRegexps: 'strings',
    }),
  ),
  holdApplicationUntilProxyStarts: 'bool',
  caCertificatesPem: 'strings',
  image: 'any',
  privateKeyProvider: 'any',
  proxyHeaders: m(
    msg(`${MESH}.ProxyConfig.ProxyHeaders`, {
      forwardedClientCert: e(FORWARD_CLIENT_CERT_DETAILS),
      setCurrentClientCertDetails: 'any',
      requestId: 'any',
      server: 'any',
      attemptCount: 'any',
      envoyDebugHeaders: 'any',
      metadataExchangeHeaders: m(
        msg(`${MESH}.ProxyConfig.ProxyHeaders.MetadataExchangeHeaders`, {
          mode: e(enumOf(`${MESH}.ProxyConfig.ProxyHeaders.MetadataExchangeMode`, 'UNDEFINED', 'IN_MESH')),
        }),
      ),
      preserveHttp1HeaderCase: 'bool',
      xForwardedHost: 'any',
      xForwardedPort: 'any',
    }),
  ),
  fileFlushInterval: 'duration',
  fileFlushMinSizeKb: 'uint',
  statsCompression: 'bool',
  connectionSettings: m(CONNECTION_SETTINGS),
});
