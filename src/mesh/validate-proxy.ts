// meshConfig.defaultConfig (ProxyConfig), as istiod's ValidateMeshConfigProxyConfig checks it.
// This server hands defaultConfig.discoveryAddress to the CA (istiod's serving certificate names
// its host) and shows the rest on /debug/mesh; every rule istiod applies is applied, so a config
// istiod refuses is refused here too.

import {
  durationMs,
  durationProblem,
  Issues,
  isMap,
  mapOf,
  portProblem,
  proxyAddressProblem,
  strOf,
} from './validate-common';
import type { ProxyConfig } from './types';

const P = 'defaultConfig';

function tracingIssues(tracing: Record<string, unknown>, out: Issues): void {
  const at = `${P}.tracing`;
  const lightstep = tracing['lightstep'];
  if (isMap(lightstep)) {
    const address = strOf(lightstep['address']);
    if (address === '') out.add(`${at}.lightstep.address`, 'address is required');
    else out.add(`${at}.lightstep.address`, proxyAddressProblem(address));
    if (strOf(lightstep['accessToken']) === '') out.add(`${at}.lightstep.accessToken`, 'access token is required');
  }
  // $(HOST_IP) is filled in by the proxy at start; istiod validates with a loopback address in its place.
  for (const tracer of ['zipkin', 'datadog']) {
    const t = tracing[tracer];
    if (isMap(t))
      out.add(`${at}.${tracer}.address`, proxyAddressProblem(strOf(t['address']).replace('$(HOST_IP)', '127.0.0.1')));
  }
  const tls = tracing['tlsSettings'];
  if (isMap(tls)) clientTlsIssues(tls, `${at}.tlsSettings`, out);
}

/** The parts of istiod's ValidateTLS that apply without a config namespace (tracing TLS). */
export function clientTlsIssues(tls: Record<string, unknown>, at: string, out: Issues): void {
  const mode = strOf(tls['mode']);
  const ca = strOf(tls['caCertificates']);
  const credential = strOf(tls['credentialName']);
  const sans = tls['subjectAltNames'] !== undefined && tls['subjectAltNames'] !== null;
  if (tls['insecureSkipVerify'] === true) {
    if (mode === 'SIMPLE' && (ca !== '' || credential !== '' || sans))
      out.add(
        at,
        'cannot specify CaCertificates or CredentialName or SubjectAltNames when InsecureSkipVerify is set true',
      );
    if (mode === 'MUTUAL' && (ca !== '' || sans))
      out.add(at, 'cannot specify CaCertificates or SubjectAltNames when InsecureSkipVerify is set true');
  }
  if ((mode === 'SIMPLE' || mode === 'MUTUAL') && credential !== '') {
    if (strOf(tls['clientCertificate']) || ca || strOf(tls['privateKey']) || strOf(tls['caCrl']))
      out.add(at, 'cannot specify client certificates or CA certificate or CA CRL If credentialName is set');
    return;
  }
  if (mode === 'MUTUAL') {
    if (strOf(tls['clientCertificate']) === '')
      out.add(`${at}.clientCertificate`, 'client certificate required for mutual tls');
    if (strOf(tls['privateKey']) === '') out.add(`${at}.privateKey`, 'private key required for mutual tls');
  }
}

function privateKeyProviderIssues(pkp: Record<string, unknown>, out: Issues): void {
  const at = `${P}.privateKeyProvider`;
  const kinds = ['cryptomb', 'qat'].filter((k) => isMap(pkp[k]));
  const kind = kinds[0];
  if (kind === undefined) {
    out.add(at, 'unknown private key provider');
    return;
  }
  const delay = mapOf(pkp[kind])['pollDelay'];
  if (delay === undefined || delay === null) out.add(`${at}.${kind}.pollDelay`, 'pollDelay is required');
  else if (durationMs(delay) === 0) out.add(`${at}.${kind}.pollDelay`, 'pollDelay must be non zero');
}

const NON_NEGATIVE_INTS = ['listenerPerConnectionBufferLimitBytes', 'clusterPerConnectionBufferLimitBytes'];
const NON_NEGATIVE_DURATIONS = [
  'httpIdleTimeout',
  'httpMaxConnectionDuration',
  'httpDrainTimeout',
  'httpRequestTimeout',
  'httpRequestHeadersTimeout',
  'httpStreamIdleTimeout',
  'httpMaxStreamDuration',
];
const POSITIVE_INTS = ['httpMaxConcurrentStreams', 'listenerConnectionLimit', 'globalDownstreamConnectionLimit'];
/** HTTP/2's initial flow-control window; Envoy refuses smaller ones. */
const HTTP2_MIN_WINDOW = 65535;

function connectionSettingsIssues(cs: Record<string, unknown>, out: Issues): void {
  const at = `${P}.connectionSettings`;
  const num = (k: string): number | undefined => (typeof cs[k] === 'number' ? cs[k] : undefined);
  for (const k of NON_NEGATIVE_INTS) if ((num(k) ?? 0) < 0) out.add(`${at}.${k}`, 'must be non-negative');
  for (const k of NON_NEGATIVE_DURATIONS)
    if ((durationMs(cs[k]) ?? 0) < 0) out.add(`${at}.${k}`, 'must be non-negative');
  for (const k of POSITIVE_INTS) {
    const n = num(k);
    if (n !== undefined && n <= 0) out.add(`${at}.${k}`, 'must be positive');
  }
  for (const k of ['http2InitialStreamWindowSize', 'http2InitialConnectionWindowSize']) {
    const n = num(k);
    if (n !== undefined && n < HTTP2_MIN_WINDOW) out.add(`${at}.${k}`, `must be at least ${HTTP2_MIN_WINDOW}`);
  }
}

/** Errors and warnings of defaultConfig, each naming its field under "defaultConfig.". */
export function proxyConfigIssues(pc: ProxyConfig, errors: Issues, warnings: Issues): void {
  if (!pc['configPath']) errors.add(`${P}.configPath`, 'config path must be set');
  if (!pc['binaryPath']) errors.add(`${P}.binaryPath`, 'binary path must be set');
  if (pc['serviceCluster'] === undefined && pc['tracingServiceName'] === undefined)
    errors.add(`${P}.serviceCluster`, 'oneof service cluster or tracing service name must be specified');
  else if (pc['serviceCluster'] === '') errors.add(`${P}.serviceCluster`, 'service cluster must be specified');

  const drain = durationProblem(pc['drainDuration']);
  if (drain) errors.add(`${P}.drainDuration`, `invalid drain duration: ${drain}`);
  else if ((durationMs(pc['drainDuration']) ?? 0) % 1000 !== 0)
    errors.add(`${P}.drainDuration`, 'drain time only supports durations to seconds precision');

  if (!pc.discoveryAddress)
    errors.add(`${P}.discoveryAddress`, 'must be set to the address of the discovery service (host:port)');
  else errors.add(`${P}.discoveryAddress`, proxyAddressProblem(pc.discoveryAddress));

  if (isMap(pc['tracing'])) tracingIssues(pc['tracing'], errors);
  for (const field of ['statsdUdpAddress', 'envoyMetricsServiceAddress'])
    if (strOf(pc[field]) !== '') errors.add(`${P}.${field}`, proxyAddressProblem(strOf(pc[field])));
  if (strOf(pc['envoyMetricsServiceAddress']) !== '')
    warnings.add(`${P}.envoyMetricsServiceAddress`, 'deprecated; use envoyMetricsService instead');
  for (const field of ['envoyMetricsService', 'envoyAccessLogService']) {
    const address = strOf(mapOf(pc[field])['address']);
    if (address !== '') errors.add(`${P}.${field}.address`, proxyAddressProblem(address));
  }
  if (pc.proxyMetadata && Object.prototype.hasOwnProperty.call(pc.proxyMetadata, 'ISTIO_META_DNS_AUTO_ALLOCATE'))
    warnings.add(`${P}.proxyMetadata.ISTIO_META_DNS_AUTO_ALLOCATE`, 'deprecated; see DNS auto-allocation v2');

  errors.add(`${P}.proxyAdminPort`, portProblem(pc['proxyAdminPort']));
  errors.add(`${P}.statusPort`, portProblem(pc['statusPort']));
  const auth = pc['controlPlaneAuthPolicy'] ?? 'NONE';
  if (auth !== 'NONE' && auth !== 'MUTUAL_TLS')
    errors.add(
      `${P}.controlPlaneAuthPolicy`,
      `unrecognized control plane auth policy ${JSON.stringify(auth)}; must be NONE or MUTUAL_TLS`,
    );
  if (isMap(pc['privateKeyProvider'])) privateKeyProviderIssues(pc['privateKeyProvider'], errors);
  if (isMap(pc['connectionSettings'])) connectionSettingsIssues(pc['connectionSettings'], errors);
}
