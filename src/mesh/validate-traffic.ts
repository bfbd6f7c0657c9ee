// meshConfig's mesh-wide traffic defaults, as istiod's ValidateMeshConfig checks them:
// localityLbSetting, zoneAwareLbSetting, defaultTrafficPolicy and the default inbound HTTP retry
// policy (istiod does not check defaultHttpRetryPolicy here, so neither does this file). ztunnel does not read these, but istiod refuses a meshConfig that gets them wrong, and
// so does this server, so that one file behaves the same under both.

import { durationMs, durationProblem, Issues, isMap, listOf, mapOf, strOf } from './validate-common';

const TOPOLOGY_LABELS = ['topology.kubernetes.io/region', 'topology.kubernetes.io/zone', 'topology.istio.io/subzone'];
/** Locality weights are percentages of the traffic from one locality. */
const LOCALITY_WEIGHT_TOTAL = 100;

/** Localities "region[/zone[/subzone]]" with at most one trailing "*", none overlapping another. */
function localitiesProblem(localities: string[]): string | undefined {
  const seen: string[][] = [];
  for (const locality of localities) {
    const stars = locality.split('*').length - 1;
    if (stars > 1 || (stars === 1 && !locality.endsWith('*')))
      return `locality ${locality} wildcard '*' number can not exceed 1 and must be in the end`;
    const parts = locality.split('/').slice(0, 3);
    if (parts.some((p) => p === '')) return `locality ${locality} must not contain empty region/zone/subzone info`;
    // Two localities overlap when one is a prefix of the other, or when either is "*" at a level the other names.
    const overlaps = seen.some((prev) => {
      for (let i = 0; i < Math.min(prev.length, parts.length); i++) {
        if (prev[i] === '*' || parts[i] === '*') return true;
        if (prev[i] !== parts[i]) return false;
      }
      return true;
    });
    if (overlaps) return `locality ${locality} overlap with previous specified ones`;
    seen.push(parts);
  }
  return undefined;
}

function failoverIssues(failover: unknown[], at: string, what: string, out: Issues): void {
  failover.forEach((f, i) => {
    const from = strOf(mapOf(f)['from']);
    const to = strOf(mapOf(f)['to']);
    const here = `${at}.failover[${i}]`;
    if (from === to) out.add(here, `${what} failover settings must specify different regions`);
    if (from.includes('/') || to.includes('/')) out.add(here, `${what} failover only specify region`);
    if (from.includes('*') || to.includes('*'))
      out.add(here, `${what} failover region should not contain '*' wildcard`);
  });
}

function localityLbIssues(lb: Record<string, unknown>, out: Issues): void {
  const at = 'localityLbSetting';
  const distribute = listOf(lb['distribute']);
  const failover = listOf(lb['failover']);
  const priority = listOf(lb['failoverPriority']).map(strOf);
  if (distribute.length > 0 && failover.length > 0) {
    out.add(at, "can not simultaneously specify 'distribute' and 'failover'");
    return;
  }
  if (failover.length > 0) {
    const label = priority.find((p) => TOPOLOGY_LABELS.includes(p));
    if (label) {
      out.add(at, `can not simultaneously set 'failover' and topology label '${label}' in 'failover_priority'`);
      return;
    }
  }
  const sources: string[] = [];
  for (const [i, d] of distribute.entries()) {
    sources.push(strOf(mapOf(d)['from']));
    const to = mapOf(mapOf(d)['to']);
    let total = 0;
    for (const weight of Object.values(to)) {
      if (typeof weight !== 'number' || weight <= 0 || weight > LOCALITY_WEIGHT_TOTAL) {
        out.add(`${at}.distribute[${i}].to`, 'locality weight must be in range [1, 100]');
        return;
      }
      total += weight;
    }
    if (total !== LOCALITY_WEIGHT_TOTAL) {
      out.add(`${at}.distribute[${i}].to`, `total locality weight ${total} != ${LOCALITY_WEIGHT_TOTAL}`);
      return;
    }
    out.add(`${at}.distribute[${i}].to`, localitiesProblem(Object.keys(to)));
  }
  out.add(`${at}.distribute`, localitiesProblem(sources));
  failoverIssues(failover, at, 'locality lb', out);
}

function zoneAwareLbIssues(lb: Record<string, unknown>, out: Issues): void {
  const at = 'zoneAwareLbSetting';
  for (const label of listOf(lb['failoverPriority']).map(strOf))
    if (TOPOLOGY_LABELS.includes(label))
      out.add(
        `${at}.failoverPriority`,
        `'failover_priority' for zone aware lb must not use topology label '${label}'; region- and zone-level routing are handled automatically`,
      );
  failoverIssues(listOf(lb['failover']), at, 'zone aware lb', out);
}

function nonNegative(obj: Record<string, unknown>, fields: string[], at: string, out: Issues): void {
  for (const f of fields) if (typeof obj[f] === 'number' && obj[f] < 0) out.add(`${at}.${f}`, 'must be non-negative');
}

function durations(obj: Record<string, unknown>, fields: string[], at: string, out: Issues): void {
  for (const f of fields) if (obj[f] !== undefined && obj[f] !== null) out.add(`${at}.${f}`, durationProblem(obj[f]));
}

function defaultTrafficPolicyIssues(dtp: Record<string, unknown>, out: Issues): void {
  const at = 'defaultTrafficPolicy';
  if (isMap(dtp['connectionPool'])) {
    const cp = dtp['connectionPool'];
    const cpAt = `${at}.connectionPool`;
    if (!isMap(cp['http']) && !isMap(cp['tcp'])) out.add(cpAt, 'connection pool must have at least one field');
    if (isMap(cp['http'])) {
      const http = cp['http'];
      const f = [
        'http1MaxPendingRequests',
        'http2MaxRequests',
        'maxRequestsPerConnection',
        'maxRetries',
        'maxConcurrentStreams',
      ];
      nonNegative(http, f, `${cpAt}.http`, out);
      durations(http, ['idleTimeout'], `${cpAt}.http`, out);
      if (http['h2UpgradePolicy'] === 'UPGRADE' && http['useClientProtocol'] === true)
        out.add(`${cpAt}.http`, 'use client protocol must not be true when H2UpgradePolicy is UPGRADE');
    }
    if (isMap(cp['tcp'])) {
      const tcp = cp['tcp'];
      nonNegative(tcp, ['maxConnections'], `${cpAt}.tcp`, out);
      durations(tcp, ['connectTimeout', 'maxConnectionDuration'], `${cpAt}.tcp`, out);
      // An idle timeout of 0s turns it off; any other value must be a valid duration.
      if (tcp['idleTimeout'] !== undefined && durationMs(tcp['idleTimeout']) !== 0)
        durations(tcp, ['idleTimeout'], `${cpAt}.tcp`, out);
      if (isMap(tcp['tcpKeepalive']))
        durations(tcp['tcpKeepalive'], ['time', 'interval'], `${cpAt}.tcp.tcpKeepalive`, out);
    }
  }
  if (isMap(dtp['outlierDetection'])) {
    const od = dtp['outlierDetection'];
    const odAt = `${at}.outlierDetection`;
    durations(od, ['baseEjectionTime', 'interval'], odAt, out);
    if (
      od['splitExternalLocalOriginErrors'] !== true &&
      typeof od['consecutiveLocalOriginFailures'] === 'number' &&
      od['consecutiveLocalOriginFailures'] > 0
    )
      out.add(
        odAt,
        'outlier detection consecutive local origin failures is specified, but split external local origin errors is set to false',
      );
    for (const f of ['maxEjectionPercent', 'minHealthPercent']) {
      const v = od[f];
      if (typeof v === 'number' && (v < 0 || v > 100))
        out.add(`${odAt}.${f}`, `percentage ${v} is not in range 0..100`);
    }
  }
}

/**
 * Envoy's retry-on policies (x-envoy-retry-on and x-envoy-retry-grpc-on), as meshConfig's default
 * retry policies and VirtualService retries accept them (HTTP status codes aside).
 */
export const ENVOY_RETRY_ON: ReadonlySet<string> = new Set([
  '5xx',
  'gateway-error',
  'reset',
  'reset-before-request',
  'connect-failure',
  'retriable-4xx',
  'refused-stream',
  'retriable-status-codes',
  'retriable-headers',
  'envoy-ratelimited',
  'http3-post-connect-failure',
  'cancelled',
  'deadline-exceeded',
  'internal',
  'resource-exhausted',
  'unavailable',
]);
const isHttpStatus = (s: string): boolean => /^[1-5]\d\d$/.test(s);

function httpRetryIssues(retry: Record<string, unknown>, at: string, out: Issues): void {
  const attempts = typeof retry['attempts'] === 'number' ? retry['attempts'] : 0;
  if (attempts < 0) out.add(`${at}.attempts`, 'attempts cannot be negative');
  const retryOn = strOf(retry['retryOn']);
  if (attempts === 0 && (retry['perTryTimeout'] != null || retryOn !== '' || retry['retryRemoteLocalities'] != null))
    out.add(at, 'http retry policy configured when attempts are set to 0 (disabled)');
  durations(retry, ['perTryTimeout', 'backoff'], at, out);
  if (retryOn !== '')
    for (const policy of retryOn.split(','))
      if (!ENVOY_RETRY_ON.has(policy) && !isHttpStatus(policy))
        out.add(`${at}.retryOn`, `"${policy}" is not a valid retryOn policy`);
}

/** Errors and warnings of the mesh-wide traffic defaults, each naming its field. */
export function trafficIssues(mesh: Record<string, unknown>, errors: Issues, warnings: Issues): void {
  if (isMap(mesh['localityLbSetting'])) localityLbIssues(mesh['localityLbSetting'], errors);
  if (isMap(mesh['zoneAwareLbSetting'])) zoneAwareLbIssues(mesh['zoneAwareLbSetting'], errors);
  if (isMap(mesh['defaultTrafficPolicy'])) defaultTrafficPolicyIssues(mesh['defaultTrafficPolicy'], errors);
  const inbound = mesh['defaultInboundHttpRetryPolicy'];
  if (isMap(inbound)) {
    const at = 'defaultInboundHttpRetryPolicy';
    httpRetryIssues(inbound, at, errors);
    if ((inbound['attempts'] ?? 0) === 0 && inbound['backoff'] != null)
      errors.add(at, 'backoff configured when attempts are set to 0 (disabled)');
    for (const ignored of ['perTryTimeout', 'retryRemoteLocalities', 'retryIgnorePreviousHosts'])
      if (inbound[ignored] != null)
        warnings.add(`${at}.${ignored}`, 'is ignored by the default inbound http retry policy');
  }
}
