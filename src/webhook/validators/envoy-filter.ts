// EnvoyFilter (networking.istio.io): raw Envoy patches. istiod also builds each patch value into
// its Envoy type; we have no Envoy protos, so we check the patch's shape and its type URLs.

import { EnvoyFilter_ApplyTo, EnvoyFilter_PatchContext, Patch_Operation } from './common/enum-types';
import { eachMessage, enumOf, isObject, JsonObject, obj, quote, str } from './common/fields';
import { re2Error } from './common/re2';
import { at, idx, Report } from './common/report';
import { checkAlphaWorkloadSelector } from './common/selectors';
import type { SpecValidator } from './types';

export const MAX_PROXY_VERSION_LENGTH = 1024;
const HCM = 'envoy.filters.network.http_connection_manager';
const LISTENER_CLASS = ['LISTENER', 'FILTER_CHAIN', 'NETWORK_FILTER', 'HTTP_FILTER'];
const ROUTE_CLASS = ['ROUTE_CONFIGURATION', 'VIRTUAL_HOST', 'HTTP_ROUTE'];
/** Old filter names Envoy still accepts; istiod warns and names the replacement. */
const DEPRECATED_FILTER_NAMES: Record<string, string> = {
  'envoy.http_connection_manager': HCM,
  'envoy.router': 'envoy.filters.http.router',
  'envoy.cors': 'envoy.filters.http.cors',
  'envoy.fault': 'envoy.filters.http.fault',
  'envoy.lua': 'envoy.filters.http.lua',
  'envoy.tcp_proxy': 'envoy.filters.network.tcp_proxy',
  'envoy.ext_authz': 'envoy.filters.http.ext_authz',
  'envoy.health_check': 'envoy.filters.http.health_check',
  'envoy.filters.http.jwt_authn': 'envoy.filters.http.jwt_authn',
};

function checkTypeUrl(r: Report, url: unknown, path: string): void {
  if (typeof url !== 'string' || !/^[^/]*\/[A-Za-z_][\w.]*$/.test(url)) r.error(path, `invalid type URL ${quote(url)}`);
  else if (url.includes('.v2.') || url.includes('.v2alpha.'))
    r.error(path, `referenced type unknown (hint: try using the v3 XDS API): ${url}`);
}

/**
 * Every `@type` inside a patch value must be a v3 type URL istiod can resolve. Patch values are
 * free-form and may nest as deep as the review's JSON (MAX_JSON_DEPTH levels), far past the
 * call stack, so the walk keeps its own stack. Items are pushed in reverse so that errors come
 * out in document order.
 */
function checkTypeUrls(r: Report, value: unknown, path: string): void {
  const todo: { v: unknown; path: string; typeUrl: boolean }[] = [{ v: value, path, typeUrl: false }];
  for (let item = todo.pop(); item !== undefined; item = todo.pop()) {
    const { v } = item;
    if (item.typeUrl) checkTypeUrl(r, v, item.path);
    else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) todo.push({ v: v[i], path: idx(item.path, i), typeUrl: false });
    } else if (isObject(v)) {
      // Last key first, so the first pops first.
      for (const key of Object.keys(v).reverse())
        todo.push({ v: v[key], path: at(item.path, key), typeUrl: key === '@type' });
    }
  }
}

function checkMatch(r: Report, applyTo: string, match: JsonObject, path: string): boolean {
  const listener = obj(r, match['listener'], at(path, 'listener'));
  const objectTypes = ['listener', 'routeConfiguration', 'cluster'].some((f) => match[f] != null);
  if (LISTENER_CLASS.includes(applyTo) && objectTypes) {
    if (!listener) {
      r.error(path, 'Envoy filter: applyTo for listener class objects cannot have non listener match');
      return false;
    }
    const filter =
      isObject(listener['filterChain']) && isObject(listener['filterChain']['filter'])
        ? listener['filterChain']['filter']
        : undefined;
    if (filter) {
      const fp = at(path, 'listener.filterChain.filter');
      if (applyTo === 'LISTENER' || applyTo === 'FILTER_CHAIN')
        r.warn(fp, `Envoy filter: filter match has no effect when used with ${applyTo}`);
      const name = str(r, filter['name'], at(fp, 'name')) ?? '';
      if (name === '') {
        r.error(at(fp, 'name'), 'Envoy filter: filter match has no name to match on');
        return false;
      }
      const sub = isObject(filter['subFilter']) ? filter['subFilter'] : undefined;
      if (sub) {
        if (applyTo !== 'HTTP_FILTER')
          return (
            r.error(at(fp, 'subFilter'), 'Envoy filter: subfilter match can be used with applyTo HTTP_FILTER only'),
            false
          );
        if (name !== HCM && name !== 'envoy.http_connection_manager')
          return (
            r.error(at(fp, 'subFilter'), `Envoy filter: subfilter match requires filter match with ${HCM}`),
            false
          );
        if (!(str(r, sub['name'], at(fp, 'subFilter.name')) ?? ''))
          return (r.error(at(fp, 'subFilter.name'), 'Envoy filter: subfilter match has no name to match on'), false);
      }
      for (const n of [name, sub && typeof sub['name'] === 'string' ? sub['name'] : '']) {
        const replacement = DEPRECATED_FILTER_NAMES[n];
        if (replacement && replacement !== n)
          r.warn(fp, `using deprecated filter name "${n}"; use "${replacement}" instead`);
      }
    }
  } else if (ROUTE_CLASS.includes(applyTo) && objectTypes && match['routeConfiguration'] == null) {
    r.error(path, 'Envoy filter: applyTo for http route class objects cannot have non route configuration match');
  } else if (applyTo === 'CLUSTER' && objectTypes && match['cluster'] == null) {
    r.error(path, 'Envoy filter: applyTo for cluster class objects cannot have non cluster match');
  }
  return true;
}

export const validateEnvoyFilter: SpecValidator = (r, spec) => {
  r.warn(
    '',
    'EnvoyFilter exposes internal implementation details that may change at any time. Prefer other APIs if possible, and exercise extreme caution, especially around upgrades.',
  );
  if (!checkAlphaWorkloadSelector(r, spec, 'Envoy filter')) return;
  eachMessage(r, spec['configPatches'], 'spec.configPatches', 'Envoy filter: null config patch', (patch, p) => {
    const match = obj(r, patch['match'], at(p, 'match'));
    // Waypoint patches are not validated by istiod either.
    if (match && enumOf(r, match['context'], at(p, 'match.context'), EnvoyFilter_PatchContext) === 'WAYPOINT') return;
    const applyTo = enumOf(r, patch['applyTo'], at(p, 'applyTo'), EnvoyFilter_ApplyTo);
    if (applyTo === 'INVALID') {
      r.error(at(p, 'applyTo'), 'Envoy filter: missing applyTo');
      return;
    }
    const body = obj(r, patch['patch'], at(p, 'patch'));
    if (!body) {
      r.error(at(p, 'patch'), 'Envoy filter: missing patch');
      return;
    }
    const op = enumOf(r, body['operation'], at(p, 'patch.operation'), Patch_Operation);
    if (op === 'INVALID') {
      r.error(at(p, 'patch.operation'), 'Envoy filter: missing patch operation');
      return;
    }
    if (op !== 'REMOVE' && body['value'] == null) {
      r.error(at(p, 'patch.value'), 'Envoy filter: missing patch value for non-remove operation');
      return;
    }
    const proxy = match && isObject(match['proxy']) ? match['proxy'] : undefined;
    const version = proxy ? (str(r, proxy['proxyVersion'], at(p, 'match.proxy.proxyVersion')) ?? '') : '';
    if (version.length > MAX_PROXY_VERSION_LENGTH) {
      r.warn(
        at(p, 'match.proxy.proxyVersion'),
        `Envoy filter: proxyVersion match exceeds ${MAX_PROXY_VERSION_LENGTH} characters and will be ignored`,
      );
    } else if (version !== '') {
      const err = re2Error(version, r);
      if (err) {
        r.error(at(p, 'match.proxy.proxyVersion'), `Envoy filter: invalid regex for proxy version, [${err}]`);
        return;
      }
    }
    if (match && !checkMatch(r, applyTo, match, at(p, 'match'))) return;
    const value = body['value'];
    if (value != null) {
      if (!isObject(value)) r.error(at(p, 'patch.value'), 'must be an object');
      else checkTypeUrls(r, value, at(p, 'patch.value'));
    }
  });
};
