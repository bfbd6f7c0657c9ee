// One HTTP route of a VirtualService.

import { ENVOY_RETRY_ON } from '../../mesh/validate-traffic';
import { statusCodes } from '../../mesh/validate-common';
import { durationRuleError } from './common/durations';
import { durationField } from './common/duration-field';
import { eachMessage, int, isObject, JsonObject, list, num, obj, str, strList, strMap, UINT32 } from './common/fields';
import { isDNS1123Label, labelErrors } from './common/hosts';
import { portError } from './common/ports';
import { re2Error } from './common/re2';
import { at, idx, key, Report } from './common/report';
import {
  checkDestination,
  checkGatewayNames,
  checkHeaderOperations,
  checkStringMatch,
  isAuthorityHeader,
  matchHeaderNameError,
  requestHeaderMap,
} from './route-fields';

/** Large direct responses are pushed to every proxy: warn above 100 KiB, reject above 1 MiB. */
export const DIRECT_RESPONSE_WARN_BYTES = 100 * 1024;
export const DIRECT_RESPONSE_MAX_BYTES = 1024 * 1024;

const CORS_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', '*']);
const CORS_HEADER = /^[!#$%&'*+\-.^_`|~A-Za-z0-9]+$/;
const GRPC_STATUSES = new Set([
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
]);
/** Status codes Go's net/http has a name for; istiod accepts these as retryOn entries. */
const KNOWN_HTTP_STATUS = statusCodes(
  '100-103 200-208 226 300-305 307 308 400-418 421-426 428 429 431 451 500-508 510 511',
);

function checkDuration(r: Report, v: unknown, path: string): bigint | undefined {
  const nanos = durationField(r, v, path);
  if (nanos === undefined) return undefined;
  const err = durationRuleError(nanos);
  if (err) r.error(path, err);
  return nanos;
}

function checkPercentage(r: Report, v: unknown, path: string): void {
  const p = obj(r, v, path);
  if (!p) return;
  const value = num(r, p['value'], at(path, 'value')) ?? 0;
  if (value < 0 || value > 100) r.error(at(path, 'value'), `percentage ${value} is not in range 0..100`);
}

function checkHttpStatus(r: Report, status: number, path: string): void {
  if (status < 200 || status > 600) r.error(path, `HTTP status ${status} is not in range 200-599`);
}

/** Header match fields of an HTTP match, made once rather than per match. */
export const HEADER_MATCH_FIELDS = ['headers', 'withoutHeaders'] as const;
const STRING_MATCH_FIELDS = ['scheme', 'method', 'authority'] as const;
const REGEX_ONLY = { regexOnly: true } as const;

// Paths are built only for fields that are set: an unset field is neither an error nor visited,
// and on a typical route the paths of unset fields were most of what a review allocated.
function checkMatches(r: Report, matches: unknown[] | undefined, path: string): void {
  matches?.forEach((m, i) => {
    const p = idx(path, i);
    const match = obj(r, m, p);
    if (!match) return;
    for (const field of HEADER_MATCH_FIELDS) {
      if (match[field] == null) continue;
      const headers = obj(r, match[field], at(p, field));
      for (const [name, sm] of Object.entries(headers ?? {})) {
        const hp = key(at(p, field), name);
        if (sm === null && field === 'headers') r.error(hp, `header match ${name} cannot be null`);
        const err = matchHeaderNameError(name);
        if (err) r.error(hp, err);
        // `regex: "*"` in withoutHeaders means "header absent" and is not a regex.
        if (field === 'withoutHeaders' && isObject(sm) && sm['regex'] === '*') continue;
        checkStringMatch(r, sm, hp);
      }
    }
    if (match['uri'] != null) checkStringMatch(r, match['uri'], at(p, 'uri'), REGEX_ONLY);
    for (const f of STRING_MATCH_FIELDS) if (match[f] != null) checkStringMatch(r, match[f], at(p, f));
    if (match['queryParams'] != null)
      for (const [name, sm] of Object.entries(obj(r, match['queryParams'], at(p, 'queryParams')) ?? {}))
        checkStringMatch(r, sm, key(at(p, 'queryParams'), name));
    checkMatchOrigin(r, match, p);
    if (match['sourceNamespace'] != null) {
      const ns = str(r, match['sourceNamespace'], at(p, 'sourceNamespace')) ?? '';
      if (ns !== '' && !isDNS1123Label(ns)) r.error(at(p, 'sourceNamespace'), `sourceNamespace match ${ns} is invalid`);
    }
  });
}

/** Where a request may come from, as HTTP, TCP and TLS matches all say it: port, source labels, gateways. */
export function checkMatchOrigin(r: Report, match: JsonObject, path: string): void {
  if (match['port'] != null) {
    const port = int(r, match['port'], at(path, 'port'), UINT32) ?? 0;
    const portProblem = port !== 0 && portError(port);
    if (portProblem) r.error(at(path, 'port'), portProblem);
  }
  if (match['sourceLabels'] != null)
    for (const err of labelErrors(strMap(r, match['sourceLabels'], at(path, 'sourceLabels')) ?? {}))
      r.error(at(path, 'sourceLabels'), err);
  if (match['gateways'] != null)
    checkGatewayNames(r, strList(r, match['gateways'], at(path, 'gateways')) ?? [], at(path, 'gateways'));
}

function checkConflicts(
  r: Report,
  http: JsonObject,
  path: string,
  delegate: boolean,
  routes: unknown[] | undefined,
): void {
  const has = (f: string) => http[f] != null;
  if (!delegate && has('delegate')) {
    if (has('redirect')) r.error(at(path, 'redirect'), 'root HTTP route must not specify redirect');
    if (has('route')) r.error(at(path, 'route'), 'root HTTP route must not specify route');
    return;
  }
  if (delegate && has('delegate')) r.error(at(path, 'delegate'), 'delegate HTTP route cannot contain delegate');
  if (has('redirect')) {
    if (routes) r.error(path, 'HTTP route cannot contain both route and redirect');
    if (has('fault')) r.error(path, 'HTTP route cannot contain both fault and redirect');
    if (has('rewrite')) r.error(path, 'HTTP route rule cannot contain both rewrite and redirect');
    if (has('directResponse')) r.error(path, 'HTTP route rule cannot contain both direct_response and redirect');
  } else if (has('directResponse')) {
    if (routes) r.error(path, 'HTTP route cannot contain both route and direct_response');
    if (has('fault')) r.error(path, 'HTTP route cannot contain both fault and direct_response');
    if (has('rewrite')) r.error(path, 'HTTP route rule cannot contain both rewrite and direct_response');
  } else if (!routes) {
    r.error(path, 'HTTP route, redirect or direct_response is required');
  }
  if (has('mirror') && list(new Report(), http['mirrors'], ''))
    r.error(path, 'HTTP route cannot contain both mirror and mirrors');
}

function checkCors(r: Report, v: unknown, path: string): void {
  const cors = obj(r, v, path);
  if (!cors) return;
  list(r, cors['allowOrigins'], at(path, 'allowOrigins'))?.forEach((o, i) => {
    const p = idx(at(path, 'allowOrigins'), i);
    const sm = isObject(o) ? o : {};
    const value = sm['exact'] ?? sm['prefix'] ?? sm['regex'] ?? '';
    if (value === '') r.error(p, `'' is not a valid match type for CORS allow origins`);
    else checkStringMatch(r, o, p, { regexOnly: true });
  });
  strList(r, cors['allowMethods'], at(path, 'allowMethods'))?.forEach((m, i) => {
    if (!CORS_METHODS.has(m)) r.error(idx(at(path, 'allowMethods'), i), `"${m}" is not a supported HTTP method`);
  });
  for (const f of ['allowHeaders', 'exposeHeaders']) {
    strList(r, cors[f], at(path, f))?.forEach((h, i) => {
      if (h === '') r.error(idx(at(path, f), i), 'header name cannot be empty');
      else if (h !== '*' && !CORS_HEADER.test(h))
        r.error(idx(at(path, f), i), `header name ${h} is not a valid header name`);
    });
  }
  if (cors['maxAge'] != null) {
    const nanos = checkDuration(r, cors['maxAge'], at(path, 'maxAge'));
    if (nanos !== undefined && nanos % 1_000_000_000n !== 0n)
      r.error(at(path, 'maxAge'), 'max_age duration is accurate only to seconds precision');
  }
}

function checkFault(r: Report, v: unknown, path: string): void {
  const fault = obj(r, v, path);
  if (!fault) return;
  const abort = obj(r, fault['abort'], at(path, 'abort'));
  const delay = obj(r, fault['delay'], at(path, 'delay'));
  if (!abort && !delay) r.error(path, 'HTTP fault injection must have an abort and/or a delay');
  if (abort) {
    const p = at(path, 'abort');
    checkPercentage(r, abort['percentage'], at(p, 'percentage'));
    if (abort['grpcStatus'] != null) {
      const s = str(r, abort['grpcStatus'], at(p, 'grpcStatus')) ?? '';
      if (!GRPC_STATUSES.has(s))
        r.error(
          at(p, 'grpcStatus'),
          `gRPC status "${s}" is not supported. See https://github.com/grpc/grpc/blob/master/doc/statuscodes.md for a list of supported codes, for example 'NOT_FOUND'`,
        );
    } else if (abort['http2Error'] != null)
      r.error(at(p, 'http2Error'), 'HTTP/2 abort fault injection not supported yet');
    else if (abort['httpStatus'] != null)
      checkHttpStatus(r, int(r, abort['httpStatus'], at(p, 'httpStatus')) ?? 0, at(p, 'httpStatus'));
    else r.warn(p, 'abort configured, but error type not set');
  }
  if (delay) {
    const p = at(path, 'delay');
    checkPercentage(r, delay['percentage'], at(p, 'percentage'));
    if (delay['fixedDelay'] != null) checkDuration(r, delay['fixedDelay'], at(p, 'fixedDelay'));
    else if (delay['exponentialDelay'] != null) {
      checkDuration(r, delay['exponentialDelay'], at(p, 'exponentialDelay'));
      r.error(at(p, 'exponentialDelay'), 'exponentialDelay not supported yet');
    }
  }
}

function checkRedirect(r: Report, redirect: JsonObject, matches: unknown[] | undefined, path: string): void {
  const s = (f: string) => str(r, redirect[f], at(path, f)) ?? '';
  const uri = s('uri');
  const prefixRewrite = s('prefixRewrite');
  if (uri !== '' && prefixRewrite !== '') {
    r.error(path, 'redirect may only specify one of uri or prefix_rewrite');
    return;
  }
  if (prefixRewrite !== '' && matches?.some((m) => isObject(m) && isObject(m['uri']) && !('prefix' in m['uri']))) {
    r.error(path, 'redirect prefix_rewrite requires all URI matches to use prefix match type');
    return;
  }
  if (
    uri === '' &&
    prefixRewrite === '' &&
    s('authority') === '' &&
    redirect['port'] == null &&
    redirect['derivePort'] == null &&
    s('scheme') === ''
  ) {
    r.error(path, 'redirect must specify URI, authority, scheme, or port');
    return;
  }
  const code = int(r, redirect['redirectCode'], at(path, 'redirectCode'), UINT32) ?? 0;
  if (code !== 0 && (code < 300 || code > 399)) {
    r.error(at(path, 'redirectCode'), `${code} is not a valid redirect code, must be 3xx`);
    return;
  }
  const scheme = s('scheme');
  if (scheme !== '' && scheme !== 'http' && scheme !== 'https') {
    r.error(at(path, 'scheme'), 'invalid redirect scheme, must be "http" or "https"');
    return;
  }
  const port = int(r, redirect['port'], at(path, 'port'), UINT32) ?? 0;
  const portProblem = port > 0 && portError(port);
  if (portProblem) r.error(at(path, 'port'), portProblem);
}

function checkRetries(r: Report, v: unknown, path: string): void {
  const retries = obj(r, v, path);
  if (!retries) return;
  const attempts = int(r, retries['attempts'], at(path, 'attempts')) ?? 0;
  if (attempts < 0) r.error(at(path, 'attempts'), 'attempts cannot be negative');
  const retryOn = str(r, retries['retryOn'], at(path, 'retryOn')) ?? '';
  if (
    attempts === 0 &&
    (retries['perTryTimeout'] != null || retryOn !== '' || retries['retryRemoteLocalities'] != null)
  ) {
    r.error(path, 'http retry policy configured when attempts are set to 0 (disabled)');
  }
  if (retries['perTryTimeout'] != null) checkDuration(r, retries['perTryTimeout'], at(path, 'perTryTimeout'));
  if (retryOn !== '') {
    for (const policy of retryOn.split(',')) {
      const code = /^[+-]?\d+$/.test(policy) ? Number(policy) : 0;
      if (!KNOWN_HTTP_STATUS.has(code) && !ENVOY_RETRY_ON.has(policy))
        r.error(at(path, 'retryOn'), `"${policy}" is not a valid retryOn policy`);
    }
  }
  if (retries['backoff'] != null) checkDuration(r, retries['backoff'], at(path, 'backoff'));
}

function checkRewrite(r: Report, v: unknown, path: string): void {
  const rw = obj(r, v, path);
  if (!rw) return;
  const uri = str(r, rw['uri'], at(path, 'uri')) ?? '';
  const regex = obj(r, rw['uriRegexRewrite'], at(path, 'uriRegexRewrite'));
  if (uri !== '' && regex) {
    r.error(path, 'rewrite may only contain one of URI or UriRegexRewrite');
    return;
  }
  if (uri === '' && !regex && (str(r, rw['authority'], at(path, 'authority')) ?? '') === '') {
    r.error(
      path,
      'rewrite must specify at least one of URI, UriRegexRewrite, or authority. Only one of URI or UriRegexRewrite may be specified',
    );
    return;
  }
  if (regex) {
    const match = str(r, regex['match'], at(path, 'uriRegexRewrite.match')) ?? '';
    const rewrite = str(r, regex['rewrite'], at(path, 'uriRegexRewrite.rewrite')) ?? '';
    if (match === '' || rewrite === '') {
      r.error(at(path, 'uriRegexRewrite'), 'UriRegexRewrite requires both Rewrite and Match fields to be specified');
      return;
    }
    const err = re2Error(match, r);
    if (err) r.error(at(path, 'uriRegexRewrite.match'), err);
  }
}

/** The authority may be rewritten once: by rewrite.authority or by one request header. */
function checkAuthorityRewrite(r: Report, http: JsonObject, headers: JsonObject | undefined, path: string): void {
  let current =
    isObject(http['rewrite']) && typeof http['rewrite']['authority'] === 'string' ? http['rewrite']['authority'] : '';
  for (const op of ['set', 'add'] as const) {
    for (const [k, v] of Object.entries(requestHeaderMap(headers, op))) {
      if (!isAuthorityHeader(k)) continue;
      if (current !== '') {
        r.error(
          at(path, 'headers'),
          `authority header cannot be set multiple times: have "${current}", attempting to set "${v}"`,
        );
        return;
      }
      current = v;
    }
  }
}

function checkMirrorPercent(r: Report, http: JsonObject, path: string): void {
  if (http['mirrorPercent'] == null && http['mirrorPercentage'] == null && http['mirrors'] == null) return;
  if (http['mirrorPercent'] != null) {
    const value = int(r, http['mirrorPercent'], at(path, 'mirrorPercent'), UINT32) ?? 0;
    if (value > 100)
      r.error(at(path, 'mirrorPercent'), `mirror_percent must have a max value of 100 (it has ${value})`);
    r.warn(at(path, 'mirrorPercent'), 'using deprecated setting "mirrorPercent", use "mirrorPercentage" instead');
  }
  const checkPct = (v: unknown, p: string, name: string) => {
    const pct = obj(r, v, p);
    if (!pct) return;
    const value = num(r, pct['value'], at(p, 'value')) ?? 0;
    if (value > 100) r.error(p, `${name} must have a max value of 100 (it has ${value})`);
    if (value < 0) r.error(p, `${name} must have a min value of 0 (it has ${value})`);
  };
  checkPct(http['mirrorPercentage'], at(path, 'mirrorPercentage'), 'mirror_percentage');
  eachMessage(r, http['mirrors'], at(path, 'mirrors'), 'mirror cannot be null', (mirror, p) => {
    if (mirror['destination'] == null) {
      r.error(at(p, 'destination'), 'destination is required for mirrors');
      return;
    }
    checkDestination(r, mirror['destination'], at(p, 'destination'));
    checkPct(mirror['percentage'], at(p, 'percentage'), 'mirror percentage');
  });
}

/** Destinations with weights; weights need not sum to 100, but several may not all be 0. */
export function checkWeightedDestinations(
  r: Report,
  routes: unknown[] | undefined,
  path: string,
  withHeaders: boolean,
): void {
  let total = 0;
  routes?.forEach((d, i) => {
    const p = idx(path, i);
    const dest = obj(r, d, p);
    if (!dest) {
      r.error(p, 'weight may not be nil');
      return;
    }
    if (dest['destination'] == null) r.error(at(p, 'destination'), 'destination is required');
    if (withHeaders && dest['headers'] != null) checkHeaderOperations(r, dest['headers'], at(p, 'headers'));
    if (dest['destination'] != null) checkDestination(r, dest['destination'], at(p, 'destination'));
    const weight = dest['weight'] == null ? 0 : (int(r, dest['weight'], at(p, 'weight')) ?? 0);
    if (weight < 0) r.error(at(p, 'weight'), `weight ${weight} < 0`);
    total += weight;
  });
  if ((routes?.length ?? 0) > 1 && total === 0) r.error(path, 'total destination weight = 0');
}

export function checkHTTPRoute(r: Report, http: JsonObject, path: string, delegate: boolean): void {
  const routes = list(r, http['route'], at(path, 'route'));
  const matches = http['match'] == null ? undefined : list(r, http['match'], at(path, 'match'));
  checkConflicts(r, http, path, delegate, routes);
  if (matches) checkMatches(r, matches, at(path, 'match'));
  const headers = http['headers'] == null ? undefined : checkHeaderOperations(r, http['headers'], at(path, 'headers'));
  if (http['corsPolicy'] != null) checkCors(r, http['corsPolicy'], at(path, 'corsPolicy'));
  if (http['fault'] != null) checkFault(r, http['fault'], at(path, 'fault'));
  checkMirrorPercent(r, http, path);
  if (http['mirror'] != null) checkDestination(r, http['mirror'], at(path, 'mirror'));
  const redirect = http['redirect'] == null ? undefined : obj(r, http['redirect'], at(path, 'redirect'));
  if (redirect) checkRedirect(r, redirect, matches, at(path, 'redirect'));
  const direct =
    http['directResponse'] == null ? undefined : obj(r, http['directResponse'], at(path, 'directResponse'));
  if (direct) {
    const body = isObject(direct['body']) ? direct['body'] : undefined;
    const text = body
      ? typeof body['string'] === 'string'
        ? body['string']
        : typeof body['bytes'] === 'string'
          ? Buffer.from(body['bytes'], 'base64').toString('latin1')
          : ''
      : '';
    const size = Buffer.byteLength(text, body && typeof body['bytes'] === 'string' ? 'latin1' : 'utf8');
    if (size > DIRECT_RESPONSE_MAX_BYTES)
      r.error(
        at(path, 'directResponse.body'),
        'large direct_responses may impact control plane performance, must be less than 1MB',
      );
    else if (size > DIRECT_RESPONSE_WARN_BYTES)
      r.warn(at(path, 'directResponse.body'), 'large direct_responses may impact control plane performance');
    checkHttpStatus(
      r,
      int(r, direct['status'], at(path, 'directResponse.status'), UINT32) ?? 0,
      at(path, 'directResponse.status'),
    );
  }
  if (http['retries'] != null) checkRetries(r, http['retries'], at(path, 'retries'));
  if (http['rewrite'] != null) checkRewrite(r, http['rewrite'], at(path, 'rewrite'));
  // Without header operations only rewrite.authority sets the authority: nothing to conflict.
  if (headers) checkAuthorityRewrite(r, http, headers, path);
  checkWeightedDestinations(r, routes, at(path, 'route'), true);
  if (http['timeout'] != null) checkDuration(r, http['timeout'], at(path, 'timeout'));
}
