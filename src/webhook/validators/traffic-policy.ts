// DestinationRule traffic policies (also used for Sidecar connection pools).

import { durationRuleError } from './common/durations';
import { durationField } from './common/duration-field';
import { ClientTLSSettings_TLSmode, HTTPSettings_H2UpgradePolicy, ProxyProtocol_VERSION } from './common/enum-types';
import { bool, enumOf, int, isObject, JsonObject, list, obj, str, strList, UINT32 } from './common/fields';
import { fqdnError } from './common/hosts';
import { isIPAddress } from './common/net';
import { portError } from './common/ports';
import { RepeatFinder } from './common/repeats';
import { at, idx, Report } from './common/report';
import { checkLocalityLb, checkZoneAwareLb } from './locality';

/** Envoy's maglev table size must be a prime below this. */
export const MAGLEV_TABLE_SIZE_LIMIT = 5000011;

function checkDuration(r: Report, v: unknown, path: string): void {
  const nanos = durationField(r, v, path);
  if (nanos === undefined) return;
  const err = durationRuleError(nanos);
  if (err) r.error(path, err);
}

function nonNegative(r: Report, o: JsonObject, field: string, path: string, message: string): void {
  const n = int(r, o[field], at(path, field));
  if (n !== undefined && n < 0) r.error(at(path, field), message);
}

export function checkConnectionPool(r: Report, v: unknown, path: string): void {
  const pool = obj(r, v, path);
  if (!pool) return;
  const http = obj(r, pool['http'], at(path, 'http'));
  const tcp = obj(r, pool['tcp'], at(path, 'tcp'));
  if (!http && !tcp) {
    r.error(path, 'connection pool must have at least one field');
    return;
  }
  if (http) {
    const p = at(path, 'http');
    nonNegative(r, http, 'http1MaxPendingRequests', p, 'http1 max pending requests must be non-negative');
    nonNegative(r, http, 'http2MaxRequests', p, 'http2 max requests must be non-negative');
    nonNegative(r, http, 'maxRequestsPerConnection', p, 'max requests per connection must be non-negative');
    nonNegative(r, http, 'maxRetries', p, 'max retries must be non-negative');
    nonNegative(r, http, 'maxConcurrentStreams', p, 'max concurrent streams must be non-negative');
    if (http['idleTimeout'] != null) checkDuration(r, http['idleTimeout'], at(p, 'idleTimeout'));
    const policy = enumOf(r, http['h2UpgradePolicy'], at(p, 'h2UpgradePolicy'), HTTPSettings_H2UpgradePolicy);
    if (policy === 'UPGRADE' && bool(r, http['useClientProtocol'], at(p, 'useClientProtocol'))) {
      r.error(at(p, 'useClientProtocol'), 'use client protocol must not be true when H2UpgradePolicy is UPGRADE');
    }
    const ka = obj(r, http['http2KeepAlive'], at(p, 'http2KeepAlive'));
    if (ka) {
      for (const f of ['interval', 'timeout']) {
        if (ka[f] == null) r.error(at(at(p, 'http2KeepAlive'), f), `http2 keepalive ${f} is required`);
        else checkDuration(r, ka[f], at(at(p, 'http2KeepAlive'), f));
      }
    }
  }
  if (tcp) {
    const p = at(path, 'tcp');
    nonNegative(r, tcp, 'maxConnections', p, 'max connections must be non-negative');
    for (const f of ['connectTimeout', 'maxConnectionDuration']) if (tcp[f] != null) checkDuration(r, tcp[f], at(p, f));
    if (tcp['idleTimeout'] != null) {
      const nanos = durationField(r, tcp['idleTimeout'], at(p, 'idleTimeout'));
      // A zero idle timeout disables it, so it is allowed here.
      if (nanos !== undefined && nanos / 1_000_000n !== 0n) checkDuration(r, tcp['idleTimeout'], at(p, 'idleTimeout'));
    }
    const ka = obj(r, tcp['tcpKeepalive'], at(p, 'tcpKeepalive'));
    if (ka)
      for (const f of ['time', 'interval']) if (ka[f] != null) checkDuration(r, ka[f], at(at(p, 'tcpKeepalive'), f));
  }
}

function checkPercent(r: Report, v: unknown, path: string): void {
  const n = int(r, v, path);
  if (n !== undefined && (n < 0 || n > 100)) r.error(path, `percentage ${n} is not in range 0..100`);
}

function checkOutlier(r: Report, v: unknown, path: string): void {
  const o = obj(r, v, path);
  if (!o) return;
  if (o['baseEjectionTime'] != null) checkDuration(r, o['baseEjectionTime'], at(path, 'baseEjectionTime'));
  if (o['interval'] != null) checkDuration(r, o['interval'], at(path, 'interval'));
  if ((int(r, o['consecutiveErrors'], at(path, 'consecutiveErrors')) ?? 0) !== 0) {
    r.warn(
      at(path, 'consecutiveErrors'),
      'outlier detection consecutive errors is deprecated, use consecutiveGatewayErrors or consecutive5xxErrors instead',
    );
  }
  const split = bool(r, o['splitExternalLocalOriginErrors'], at(path, 'splitExternalLocalOriginErrors')) ?? false;
  const localOrigin =
    int(r, o['consecutiveLocalOriginFailures'], at(path, 'consecutiveLocalOriginFailures'), UINT32) ?? 0;
  if (!split && localOrigin > 0) {
    r.error(
      at(path, 'consecutiveLocalOriginFailures'),
      'outlier detection consecutive local origin failures is specified, but split external local origin errors is set to false',
    );
  }
  checkPercent(r, o['maxEjectionPercent'], at(path, 'maxEjectionPercent'));
  checkPercent(r, o['minHealthPercent'], at(path, 'minHealthPercent'));
}

/** Bit i says whether 2i+1 is composite, for every odd number below the maglev limit (312 KB). */
let oddComposites: Uint8Array | undefined;

function compositeBits(): Uint8Array {
  if (oddComposites) return oddComposites;
  const bits = new Uint8Array(Math.ceil(MAGLEV_TABLE_SIZE_LIMIT / 16));
  // Every index is below the array's length; `?? 0` is what | and & already do with undefined.
  const set = (odd: number) => (bits[odd >> 4] = (bits[odd >> 4] ?? 0) | (1 << ((odd >> 1) & 7)));
  const isSet = (odd: number) => ((bits[odd >> 4] ?? 0) & (1 << ((odd >> 1) & 7))) !== 0;
  for (let f = 3; f * f < MAGLEV_TABLE_SIZE_LIMIT; f += 2)
    if (!isSet(f)) for (let m = f * f; m < MAGLEV_TABLE_SIZE_LIMIT; m += 2 * f) set(m);
  return (oddComposites = bits);
}

/**
 * Primality of a table size below MAGLEV_TABLE_SIZE_LIMIT (1 counts as prime, as in istiod's
 * check; sizes at or over the limit answer false). A sieve built once (about 20 ms) answers each size in one lookup: trial division of a
 * prime near the limit is ~1,100 steps, and a review may carry tens of thousands of sizes.
 */
export function isPrime(x: number): boolean {
  // Larger sizes are an error of their own and never asked about.
  if (!Number.isInteger(x) || x < 0 || x >= MAGLEV_TABLE_SIZE_LIMIT) return false;
  if (x !== 0 && x < 4) return true;
  if (x % 2 === 0) return false;
  return ((compositeBits()[x >> 4] ?? 0) & (1 << ((x >> 1) & 7))) === 0;
}

function checkLoadBalancer(r: Report, v: unknown, path: string, hasOutlier: boolean): void {
  const lb = obj(r, v, path);
  if (!lb) return;
  const ch = obj(r, lb['consistentHash'], at(path, 'consistentHash'));
  if (ch) {
    const cp = at(path, 'consistentHash');
    const cookie = obj(r, ch['httpCookie'], at(cp, 'httpCookie'));
    if (cookie) {
      if (!(str(r, cookie['name'], at(cp, 'httpCookie.name')) ?? ''))
        r.error(at(cp, 'httpCookie.name'), 'name required for HttpCookie');
      const names = new RepeatFinder<string>();
      list(r, cookie['attributes'], at(cp, 'httpCookie.attributes'))?.forEach((a, i) => {
        const name = isObject(a) && typeof a['name'] === 'string' ? a['name'] : '';
        const ap = idx(at(cp, 'httpCookie.attributes'), i);
        if (name === '') r.error(ap, 'cookie attribute name cannot be empty');
        else if (names.isNewRepeat(name)) r.error(ap, `duplicate cookie attribute name: ${name}`);
      });
    }
    const ringSize =
      int(r, ch['minimumRingSize'], at(cp, 'minimumRingSize'), { min: 0, max: Number.MAX_SAFE_INTEGER }) ?? 0;
    if (ringSize !== 0) {
      r.warn(
        at(cp, 'minimumRingSize'),
        "consistent hash MinimumRingSize is deprecated, use ConsistentHashLB's RingHash configuration instead",
      );
      if (ch['maglev'] != null || ch['ringHash'] != null)
        r.error(cp, 'only one of MinimumRingSize or Maglev/Ringhash can be specified');
    }
    const maglev = obj(r, ch['maglev'], at(cp, 'maglev'));
    if (maglev) {
      const size =
        int(r, maglev['tableSize'], at(cp, 'maglev.tableSize'), { min: 0, max: Number.MAX_SAFE_INTEGER }) ?? 0;
      if (size === 0) r.error(at(cp, 'maglev.tableSize'), 'tableSize must be set for maglev');
      // istiod also tests sizes over the limit for primality. Trial division of a prime near 2^53
      // takes 1.4 s and a review may carry thousands of sizes, so here a size over the limit
      // gets that error alone.
      if (size >= MAGLEV_TABLE_SIZE_LIMIT)
        r.error(at(cp, 'maglev.tableSize'), `tableSize must be less than ${MAGLEV_TABLE_SIZE_LIMIT} for maglev`);
      else if (!isPrime(size)) r.error(at(cp, 'maglev.tableSize'), 'tableSize must be a prime number for maglev');
    }
  }
  if (lb['localityLbSetting'] != null && lb['zoneAwareLbSetting'] != null)
    r.error(path, 'only one of localityLbSetting and zoneAwareLbSetting can be set');
  checkLocalityLb(r, lb['localityLbSetting'], at(path, 'localityLbSetting'), hasOutlier);
  checkZoneAwareLb(r, lb['zoneAwareLbSetting'], at(path, 'zoneAwareLbSetting'), hasOutlier);
  const warm = obj(r, lb['warmup'], at(path, 'warmup'));
  if (warm) {
    if (warm['duration'] == null) r.error(at(path, 'warmup.duration'), 'duration is required');
    else checkDuration(r, warm['duration'], at(path, 'warmup.duration'));
    const min = warm['minimumPercent'];
    if (typeof min === 'number' && min > 100)
      r.error(at(path, 'warmup.minimumPercent'), 'minimumPercent value should be less than or equal to 100');
    const aggression = warm['aggression'];
    if (typeof aggression === 'number' && aggression <= 0)
      r.error(at(path, 'warmup.aggression'), 'aggression should be greater than 0');
  }
}

export function checkClientTLS(r: Report, v: unknown, path: string): void {
  const tls = obj(r, v, path);
  if (!tls) return;
  const mode = enumOf(r, tls['mode'], at(path, 'mode'), ClientTLSSettings_TLSmode);
  const s = (f: string) => str(r, tls[f], at(path, f)) ?? '';
  const credentialName = s('credentialName');
  const caCertificates = s('caCertificates');
  const clientCertificate = s('clientCertificate');
  const privateKey = s('privateKey');
  const caCrl = s('caCrl');
  const sans = strList(r, tls['subjectAltNames'], at(path, 'subjectAltNames'));
  if (tls['insecureSkipVerify'] === true) {
    if (mode === 'SIMPLE' && (caCertificates || credentialName || sans)) {
      r.error(
        path,
        'cannot specify CaCertificates or CredentialName or SubjectAltNames when InsecureSkipVerify is set true',
      );
    }
    if (mode === 'MUTUAL' && (caCertificates || sans))
      r.error(path, 'cannot specify CaCertificates or SubjectAltNames when InsecureSkipVerify is set true');
  }
  if ((mode === 'SIMPLE' || mode === 'MUTUAL') && credentialName) {
    if (clientCertificate || caCertificates || privateKey || caCrl) {
      r.error(path, 'cannot specify client certificates or CA certificate or CA CRL If credentialName is set');
    }
    return;
  }
  if (mode === 'MUTUAL') {
    if (!clientCertificate) r.error(at(path, 'clientCertificate'), 'client certificate required for mutual tls');
    if (!privateKey) r.error(at(path, 'privateKey'), 'private key required for mutual tls');
  }
}

function checkTunnel(r: Report, t: JsonObject, path: string): void {
  const protocol = str(r, t['protocol'], at(path, 'protocol')) ?? '';
  if (protocol !== '' && protocol !== 'CONNECT' && protocol !== 'POST')
    r.error(at(path, 'protocol'), 'tunnel protocol must be "CONNECT" or "POST"');
  const host = str(r, t['targetHost'], at(path, 'targetHost')) ?? '';
  const fqdnErr = fqdnError(host);
  if (fqdnErr && !isIPAddress(host))
    r.error(at(path, 'targetHost'), `tunnel target host must be valid FQDN or IP address: ${fqdnErr}`);
  const port = int(r, t['targetPort'], at(path, 'targetPort'), UINT32) ?? 0;
  const err = portError(port);
  if (err) r.error(at(path, 'targetPort'), `tunnel target port is invalid: ${err}`);
}

const POLICY_FIELDS = [
  'outlierDetection',
  'connectionPool',
  'loadBalancer',
  'tls',
  'portLevelSettings',
  'tunnel',
  'proxyProtocol',
  'retryBudget',
];

/** What a traffic policy and each of its port-level settings share. */
function checkPolicyParts(r: Report, policy: JsonObject, path: string): void {
  checkOutlier(r, policy['outlierDetection'], at(path, 'outlierDetection'));
  checkConnectionPool(r, policy['connectionPool'], at(path, 'connectionPool'));
  checkLoadBalancer(r, policy['loadBalancer'], at(path, 'loadBalancer'), policy['outlierDetection'] != null);
  checkClientTLS(r, policy['tls'], at(path, 'tls'));
}

export function checkTrafficPolicy(r: Report, v: unknown, path: string): void {
  const tp = obj(r, v, path);
  if (!tp) return;
  const portLevel = list(r, tp['portLevelSettings'], at(path, 'portLevelSettings'));
  if (!POLICY_FIELDS.some((f) => (f === 'portLevelSettings' ? portLevel !== undefined : tp[f] != null))) {
    r.error(path, 'traffic policy must have at least one field');
    return;
  }
  if (tp['tunnel'] != null && tp['proxyProtocol'] != null) {
    r.error(path, 'tunnel and proxyProtocol must not be set together');
    return;
  }
  checkPolicyParts(r, tp, path);
  portLevel?.forEach((pl, i) => {
    const p = idx(at(path, 'portLevelSettings'), i);
    const o = obj(r, pl, p);
    if (!o) {
      r.error(p, 'traffic policy may not be null');
      return;
    }
    if (o['port'] == null) r.error(at(p, 'port'), 'portTrafficPolicy must have valid port');
    if (o['outlierDetection'] == null && o['connectionPool'] == null && o['loadBalancer'] == null && o['tls'] == null) {
      r.error(p, 'port traffic policy must have at least one field');
      return;
    }
    checkPolicyParts(r, o, p);
  });
  const tunnel = obj(r, tp['tunnel'], at(path, 'tunnel'));
  if (tunnel) checkTunnel(r, tunnel, at(path, 'tunnel'));
  const pp = obj(r, tp['proxyProtocol'], at(path, 'proxyProtocol'));
  if (pp) enumOf(r, pp['version'], at(path, 'proxyProtocol.version'), ProxyProtocol_VERSION);
}
