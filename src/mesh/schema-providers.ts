// meshConfig.extensionProviders (MeshConfig.ExtensionProvider): one name and exactly one provider.

import { EP, e, enumOf, m, msg, serviceAndPort, TRACE_CONTEXT } from './schema-types';

export const EXTENSION_PROVIDER = msg(EP, {
  name: 'string',
  envoyExtAuthzHttp: m(
    msg(`${EP}.EnvoyExternalAuthorizationHttpProvider`, {
      ...serviceAndPort,
      timeout: 'duration',
      pathPrefix: 'string',
      failOpen: 'bool',
      clearRouteCache: 'bool',
      statusOnError: 'string',
      includeHeadersInCheck: 'strings',
      includeRequestHeadersInCheck: 'strings',
      includeAdditionalHeadersInCheck: 'stringMap',
      includeRequestBodyInCheck: 'any',
      headersToUpstreamOnAllow: 'strings',
      headersToDownstreamOnDeny: 'strings',
      headersToDownstreamOnAllow: 'strings',
    }),
  ),
  envoyExtAuthzGrpc: m(
    msg(`${EP}.EnvoyExternalAuthorizationGrpcProvider`, {
      ...serviceAndPort,
      timeout: 'duration',
      failOpen: 'bool',
      clearRouteCache: 'bool',
      statusOnError: 'string',
      includeRequestBodyInCheck: 'any',
    }),
  ),
  zipkin: m(
    msg(`${EP}.ZipkinTracingProvider`, {
      ...serviceAndPort,
      maxTagLength: 'uint',
      enable64bitTraceId: 'bool',
      path: 'string',
      traceContextOption: e(
        enumOf(`${EP}.ZipkinTracingProvider.TraceContextOption`, 'USE_B3', 'USE_B3_WITH_W3C_PROPAGATION'),
      ),
      timeout: 'duration',
      headers: 'any',
    }),
  ),
  lightstep: m(
    msg(`${EP}.LightstepTracingProvider`, { ...serviceAndPort, accessToken: 'string', maxTagLength: 'uint' }),
  ),
  datadog: m(msg(`${EP}.DatadogTracingProvider`, { ...serviceAndPort, maxTagLength: 'uint' })),
  stackdriver: 'any',
  opencensus: m(
    msg(`${EP}.OpenCensusAgentTracingProvider`, {
      ...serviceAndPort,
      context: { enumList: { ...TRACE_CONTEXT, name: `${EP}.OpenCensusAgentTracingProvider.TraceContext` } },
      maxTagLength: 'uint',
    }),
  ),
  skywalking: m(msg(`${EP}.SkyWalkingTracingProvider`, { ...serviceAndPort, accessToken: 'string' })),
  opentelemetry: m(
    msg(`${EP}.OpenTelemetryTracingProvider`, {
      ...serviceAndPort,
      maxTagLength: 'uint',
      http: 'any',
      grpc: 'any',
      resourceDetectors: 'any',
      serviceAttributeEnrichment: e(
        enumOf(`${EP}.ServiceAttributeEnrichment`, 'ISTIO_CANONICAL', 'OTEL_SEMANTIC_CONVENTIONS'),
      ),
      dynatraceSampler: 'any',
    }),
  ),
  prometheus: 'any',
  envoyFileAccessLog: m(
    msg(`${EP}.EnvoyFileAccessLogProvider`, { path: 'string', logFormat: 'any', omitEmptyValues: 'bool' }),
  ),
  envoyHttpAls: m(
    msg(`${EP}.EnvoyHttpGrpcV3LogProvider`, {
      ...serviceAndPort,
      logName: 'string',
      filterStateObjectsToLog: 'strings',
      additionalRequestHeadersToLog: 'strings',
      additionalResponseHeadersToLog: 'strings',
      additionalResponseTrailersToLog: 'strings',
    }),
  ),
  envoyTcpAls: m(
    msg(`${EP}.EnvoyTcpGrpcV3LogProvider`, {
      ...serviceAndPort,
      logName: 'string',
      filterStateObjectsToLog: 'strings',
    }),
  ),
  envoyOtelAls: m(
    msg(`${EP}.EnvoyOpenTelemetryLogProvider`, { ...serviceAndPort, logName: 'string', logFormat: 'any' }),
  ),
  sds: m(msg(`${EP}.SDSProvider`, { name: 'string', ...serviceAndPort })),
});

/** The provider kinds an extension provider may hold (a proto oneof: exactly one is set). */
export const EXTENSION_PROVIDER_KINDS = Object.keys(EXTENSION_PROVIDER.fields).filter((f) => f !== 'name');
