// meshConfig.extensionProviders, as istiod's validateExtensionProvider checks them. istiod only
// warns ("can be ignored if the given extension provider is not used"), and this server uses none
// of them (they configure Envoy), so every finding here is a warning: a file istiod loads, this
// server loads too.

import {
  fqdnProblem,
  isDns1123Label,
  Issues,
  isMap,
  mapOf,
  portProblem,
  statusCodes,
  strOf,
  wildcardDomainProblem,
} from './validate-common';
import { isIP } from 'node:net';
import { EXTENSION_PROVIDER_KINDS } from './schema';

/** Providers whose service and port istiod checks. */
const WITH_SERVICE = [
  'envoyExtAuthzHttp',
  'envoyExtAuthzGrpc',
  'zipkin',
  'lightstep',
  'datadog',
  'opencensus',
  'skywalking',
  'opentelemetry',
  'envoyHttpAls',
  'envoyTcpAls',
  'envoyOtelAls',
];

/** envoy.type.v3.StatusCode: the HTTP codes Envoy accepts for ext_authz statusOnError. */
const ENVOY_STATUS_CODES = statusCodes(
  '100 200-208 226 300-305 307 308 400-417 421-424 426 428 429 431 500-508 510 511',
);

/** "host", an IP, or "namespace/host" where the namespace may be "*", "." or a DNS label. */
function serviceProblem(service: string): string | undefined {
  if (service === '') return 'service must not be empty';
  const slash = service.indexOf('/');
  if (slash < 0) {
    if (fqdnProblem(service) === undefined || isIP(service) !== 0) return undefined;
    return `invalid service fmt ${service}: ${service} is not a valid IP`;
  }
  const ns = service.slice(0, slash).replace(/^~/, '');
  const host = service.slice(slash + 1);
  if (ns === '' || host === '') return 'config namespace and dnsName in host entry cannot be empty';
  if (ns !== '*' && ns !== '.' && !isDns1123Label(ns)) return `invalid namespace value "${service.slice(0, slash)}"`;
  if (host !== '*' && !host.includes('.')) return 'short names (non FQDN) are not allowed';
  if (host.includes('*') && host !== '*' && !host.startsWith('*.')) return `partial wildcard "${host}" not allowed`;
  return wildcardDomainProblem(host);
}

function statusOnErrorProblem(status: string): string | undefined {
  if (status === '') return undefined;
  if (!/^-?\d+$/.test(status)) return `invalid statusOnError value ${status}`;
  return ENVOY_STATUS_CODES.has(Number(status)) ? undefined : `unsupported statusOnError value ${status}`;
}

function providerIssues(kind: string, p: Record<string, unknown>, at: string, out: Issues): void {
  if (WITH_SERVICE.includes(kind)) {
    out.add(`${at}.service`, serviceProblem(strOf(p['service'])));
    out.add(`${at}.port`, portProblem(p['port']));
  }
  if (kind === 'envoyExtAuthzHttp' || kind === 'envoyExtAuthzGrpc')
    out.add(`${at}.statusOnError`, statusOnErrorProblem(strOf(p['statusOnError'])));
  const prefix = strOf(p['pathPrefix']);
  if (kind === 'envoyExtAuthzHttp' && prefix !== '' && !prefix.startsWith('/'))
    out.add(`${at}.pathPrefix`, `pathPrefix should begin with \`/\` but found "${prefix}"`);
  if (kind === 'lightstep' && strOf(p['accessToken']) === '') out.add(`${at}.accessToken`, 'access token is required');
  if (kind === 'opentelemetry' && isMap(p['grpc']) && isMap(p['http']))
    out.add(at, 'OpenTelemetryTracingProvider cannot specify both grpc and http');
}

/** Warnings for the merged list (names must be unique and set; each provider well-formed). */
export function extensionProviderWarnings(providers: unknown, out: Issues): void {
  if (!Array.isArray(providers)) return;
  const names = new Set<string>();
  providers.forEach((raw, i) => {
    const p = mapOf(raw);
    const at = `extensionProviders[${i}]`;
    const name = strOf(p['name']);
    if (name === '') out.add(`${at}.name`, 'empty extension provider name');
    else if (names.has(name)) out.add(`${at}.name`, `duplicate extension provider name ${name}`);
    names.add(name);
    const kinds = EXTENSION_PROVIDER_KINDS.filter((k) => p[k] !== undefined && p[k] !== null);
    if (kinds.length === 0) out.add(at, `invalid extension provider ${name}: unsupported provider: none is set`);
    if (kinds.length > 1)
      out.add(at, `invalid extension provider ${name}: more than one provider is set (${kinds.join(', ')})`);
    for (const kind of kinds) providerIssues(kind, mapOf(p[kind]), `${at}.${kind}`, out);
  });
}

/**
 * Providers named twice in one layer: the merge keeps one entry per name (the later replaces the
 * earlier, as in istiod), so the merged list cannot show this; the layer can.
 */
export function duplicateProviderWarnings(layer: Record<string, unknown>, out: Issues): void {
  const seen = new Set<string>();
  const list = layer['extensionProviders'];
  if (!Array.isArray(list)) return;
  list.forEach((p, i) => {
    const name = strOf(mapOf(p)['name']);
    if (name !== '' && seen.has(name))
      out.add(
        `extensionProviders[${i}].name`,
        `duplicate extension provider name ${name}; this entry replaces the earlier one`,
      );
    seen.add(name);
  });
}
