// AuthorizationPolicy (security.istio.io): the rules ztunnel enforces for ambient workloads, so a
// policy istiod would reject must never reach it.

import { authzIPError } from './common/net';
import { at, idx, Report } from './common/report';
import { AuthorizationPolicy_Action } from './common/enum-types';
import { eachListedMessage, eachMessage, enumOf, JsonObject, list, obj, required, str, strList } from './common/fields';
import { checkPolicyTargeting } from './common/selectors';
import type { SpecValidator } from './types';

export const AUTHZ_ACTIONS = AuthorizationPolicy_Action.values;
export type AuthzAction = (typeof AUTHZ_ACTIONS)[number];

/** istiod bounds serviceAccounts lists to keep policies small. */
export const MAX_SERVICE_ACCOUNTS = 16;
export const MAX_SERVICE_ACCOUNT_LENGTH = 320;

// A source's fields, in groups that share a check.
const IDENTITY_FIELDS = [
  'principals',
  'notPrincipals',
  'requestPrincipals',
  'notRequestPrincipals',
  'namespaces',
  'notNamespaces',
] as const;
const IP_BLOCK_FIELDS = ['ipBlocks', 'notIpBlocks', 'remoteIpBlocks', 'notRemoteIpBlocks'] as const;
const SERVICE_ACCOUNT_FIELDS = ['serviceAccounts', 'notServiceAccounts'] as const;
const TRUST_DOMAIN_FIELDS = ['trustDomains', 'notTrustDomains'] as const;
const SOURCE_FIELDS = [...IDENTITY_FIELDS, ...IP_BLOCK_FIELDS, ...SERVICE_ACCOUNT_FIELDS, ...TRUST_DOMAIN_FIELDS];
const OPERATION_FIELDS = [
  'hosts',
  'notHosts',
  'ports',
  'notPorts',
  'methods',
  'notMethods',
  'paths',
  'notPaths',
] as const;
/** Source fields a CUSTOM (ext-authz) policy cannot match on. */
const CUSTOM_UNSUPPORTED_SOURCE = [
  'namespaces',
  'notNamespaces',
  'serviceAccounts',
  'notServiceAccounts',
  'trustDomains',
  'notTrustDomains',
  'principals',
  'notPrincipals',
  'requestPrincipals',
  'notRequestPrincipals',
] as const;
const CUSTOM_UNSUPPORTED_WHEN = ['source.namespace', 'source.serviceAccount', 'source.trustDomain', 'source.principal'];
/** Source fields that also apply to TCP traffic (the rest are HTTP-only). */
const TCP_SOURCE_FIELDS = [
  'principals',
  'notPrincipals',
  'ipBlocks',
  'notIpBlocks',
  'namespaces',
  'notNamespaces',
  'remoteIpBlocks',
  'notRemoteIpBlocks',
  'serviceAccounts',
  'notServiceAccounts',
];

function checkNotEmpty(r: Report, values: string[], path: string): void {
  values.forEach((v, i) => {
    if (v === '') r.error(idx(path, i), 'must not be empty');
  });
}

export function checkServiceAccounts(r: Report, values: string[], path: string): void {
  if (values.length > MAX_SERVICE_ACCOUNTS) r.error(path, `may not have more than ${MAX_SERVICE_ACCOUNTS} values`);
  values.forEach((v, i) => {
    const p = idx(path, i);
    if (v === '') {
      r.error(p, 'must not be empty');
      return;
    }
    if (v.includes('*')) {
      r.error(p, 'wildcard not allowed');
      return;
    }
    const slashes = v.split('/').length - 1;
    if (slashes > 1) {
      r.error(p, `expected format 'serviceAccount' or 'namespace/serviceAccount', found "${v}"`);
      return;
    }
    if (v.length > MAX_SERVICE_ACCOUNT_LENGTH) {
      r.error(p, `value cannot exceed ${MAX_SERVICE_ACCOUNT_LENGTH} characters`);
      return;
    }
    if (slashes === 1) {
      const [ns, sa] = v.split('/');
      if (!ns)
        r.error(p, `expected format 'serviceAccount' or 'namespace/serviceAccount', found empty namespace "${v}"`);
      else if (!sa)
        r.error(p, `expected format 'serviceAccount' or 'namespace/serviceAccount', found empty serviceAccount "${v}"`);
    }
  });
}

function checkWildcardValues(r: Report, values: string[], path: string): boolean {
  let ok = true;
  values.forEach((v, i) => {
    const p = idx(path, i);
    const stars = v.split('*').length - 1;
    if (v === '') r.error(p, 'must not be empty');
    else if (stars > 1) r.error(p, `at most one wildcard is allowed, found "${v}"`);
    else if (stars === 1 && v !== '*' && !v.startsWith('*') && !v.endsWith('*'))
      r.error(p, `wildcard is only allowed at the start or end, found "${v}"`);
    else return;
    ok = false;
  });
  return ok;
}

function checkTrustDomains(r: Report, values: string[], path: string): void {
  if (!checkWildcardValues(r, values, path)) return;
  values.forEach((v, i) => {
    if (v.includes('/')) r.error(idx(path, i), `trust domain must not contain '/', found "${v}"`);
  });
}

function checkIPs(r: Report, values: string[], path: string): void {
  values.forEach((v, i) => {
    if (v === '') {
      r.error(idx(path, i), 'must not be empty');
      return;
    }
    const err = authzIPError(v);
    if (err) r.error(idx(path, i), err);
  });
}

function checkPorts(r: Report, values: string[], path: string): void {
  values.forEach((v, i) => {
    if (v === '') {
      r.error(idx(path, i), 'must not be empty');
      return;
    }
    if (!/^\d+$/.test(v) || Number(v) > 65535) r.error(idx(path, i), `bad port (${v}): must be a number in 0..65535`);
  });
}

const MATCH_ONE = '{*}';

/** `path` without leading and trailing slashes, in one pass (the regex /\/+$/ is quadratic on long runs of slashes). */
function trimSlashes(path: string): string {
  let start = 0;
  let end = path.length;
  while (start < end && path[start] === '/') start++;
  while (end > start && path[end - 1] === '/') end--;
  return path.slice(start, end);
}
const MATCH_ANY = '{**}';
const VALID_LITERAL = /^[a-zA-Z0-9\-._~%!$&'()+,;:@=]+$/;

/** Path templates: `{*}` for one segment, `{**}` for the rest and only last, nothing else in braces. */
export function pathTemplateError(path: string): string | undefined {
  const hasTemplate = path.includes(MATCH_ONE) || path.includes(MATCH_ANY);
  let sawAny = false;
  const trimmed = trimSlashes(path);
  for (const glob of trimmed.split('/')) {
    if ((glob === MATCH_ONE || glob === MATCH_ANY) && sawAny)
      return `invalid or unsupported path ${trimmed}: {**} is not the last operator`;
    if (glob === MATCH_ONE) continue;
    if (glob === MATCH_ANY) {
      sawAny = true;
      continue;
    }
    if (/[{}]/.test(glob))
      return `invalid or unsupported path ${trimmed}: contains '{' or '}' beyond a supported path template`;
    if (hasTemplate && !VALID_LITERAL.test(glob))
      return `invalid or unsupported path ${trimmed}: contains segment ${glob} with invalid string literal`;
  }
  return undefined;
}

function checkMapKey(key: string): string | undefined {
  const open = key.indexOf('[');
  return key.endsWith(']') && open > 0 && open < key.length - 2
    ? undefined
    : `bad key (${key}): should have format a[b]`;
}

/** The `when` attribute names istiod knows, and the value format of each. */
export function checkWhenValues(r: Report, key: string, values: string[], path: string): void {
  const before = r.errorCount;
  checkNotEmpty(r, values, path);
  if (r.errorCount > before) return;
  const fail = (msg: string) => r.error(path, msg);
  if (
    key.startsWith('request.headers') ||
    key.startsWith('request.auth.claims') ||
    key.startsWith('experimental.envoy.filters.')
  ) {
    const err = checkMapKey(key);
    if (err) fail(err);
  } else if (key === 'source.ip' || key === 'remote.ip' || key === 'destination.ip') checkIPs(r, values, path);
  else if (key === 'source.serviceAccount') checkServiceAccounts(r, values, path);
  else if (key === 'source.trustDomain') checkWildcardValues(r, values, path);
  else if (key === 'destination.port') checkPorts(r, values, path);
  else if (
    [
      'source.namespace',
      'source.principal',
      'request.auth.principal',
      'request.auth.audiences',
      'request.auth.presenter',
      'connection.sni',
    ].includes(key)
  )
    return;
  else if (key === 'destination.namespace') fail(`attribute ${key} is replaced by the metadata.namespace`);
  else if (key.startsWith('destination.labels')) fail(`attribute ${key} is replaced by the workload selector`);
  else if (key === 'destination.name' || key === 'destination.user')
    fail(`deprecated attribute ${key}: only supported in v1alpha1`);
  else fail(`unknown attribute: ${key}`);
}

function checkSource(r: Report, src: JsonObject, path: string): boolean {
  const lists: Record<string, string[]> = {};
  for (const f of SOURCE_FIELDS) {
    const v = strList(r, src[f], at(path, f));
    if (v) lists[f] = v;
  }
  const has = (f: string) => lists[f] !== undefined;
  if (['principals', 'notPrincipals', 'namespaces', 'notNamespaces'].some(has) && SERVICE_ACCOUNT_FIELDS.some(has)) {
    r.error(path, 'cannot set serviceAccounts with namespaces or principals');
  }
  if (!SOURCE_FIELDS.some(has)) r.error(path, 'must not be empty');
  for (const f of IP_BLOCK_FIELDS) if (lists[f]) checkIPs(r, lists[f], at(path, f));
  for (const f of IDENTITY_FIELDS) if (lists[f]) checkNotEmpty(r, lists[f], at(path, f));
  for (const f of SERVICE_ACCOUNT_FIELDS) if (lists[f]) checkServiceAccounts(r, lists[f], at(path, f));
  for (const f of TRUST_DOMAIN_FIELDS) if (lists[f]) checkTrustDomains(r, lists[f], at(path, f));
  return TCP_SOURCE_FIELDS.some(has);
}

function checkOperation(r: Report, op: JsonObject, path: string): boolean {
  const lists: Record<string, string[]> = {};
  for (const f of OPERATION_FIELDS) {
    const v = strList(r, op[f], at(path, f));
    if (v) lists[f] = v;
  }
  if (!OPERATION_FIELDS.some((f) => lists[f])) r.error(path, 'must not be empty');
  for (const f of ['ports', 'notPorts']) if (lists[f]) checkPorts(r, lists[f], at(path, f));
  for (const f of ['hosts', 'notHosts', 'methods', 'notMethods']) if (lists[f]) checkNotEmpty(r, lists[f], at(path, f));
  for (const f of ['paths', 'notPaths']) {
    lists[f]?.forEach((p, i) => {
      const err = p === '' ? 'must not be empty' : pathTemplateError(p);
      if (err) r.error(idx(at(path, f), i), err);
    });
  }
  return lists['ports'] !== undefined || lists['notPorts'] !== undefined;
}

function checkRule(r: Report, rule: JsonObject, path: string, action: AuthzAction): void {
  // Set inside the callbacks below; an object, so the checks after them are not narrowed to the initial false.
  const seen = { tcpFrom: false, tcpTo: false, fromExists: false, toExists: false };
  eachMessage(r, rule['from'], at(path, 'from'), 'must not be null', (f, p) => {
    const src = required(r, f['source'], at(p, 'source'), 'must not be null');
    if (!src) return;
    seen.fromExists = true;
    if (checkSource(r, src, at(p, 'source'))) seen.tcpFrom = true;
    if (action === 'CUSTOM') {
      for (const field of CUSTOM_UNSUPPORTED_SOURCE) {
        if (Array.isArray(src[field]) && (src[field] as unknown[]).length > 0)
          r.error(at(at(p, 'source'), field), 'is currently not supported with CUSTOM action');
      }
    }
  });
  eachMessage(r, rule['to'], at(path, 'to'), 'must not be null', (t, p) => {
    const op = required(r, t['operation'], at(p, 'operation'), 'must not be null');
    if (!op) return;
    seen.toExists = true;
    if (checkOperation(r, op, at(p, 'operation'))) seen.tcpTo = true;
  });
  eachMessage(r, rule['when'], at(path, 'when'), 'when field cannot be nil', (w, p) => {
    const key = str(r, w['key'], at(p, 'key')) ?? '';
    if (action === 'CUSTOM' && (CUSTOM_UNSUPPORTED_WHEN.includes(key) || key.startsWith('request.auth.'))) {
      r.error(at(p, 'key'), `${key} is currently not supported with CUSTOM action`);
    }
    if (key === '') {
      r.error(at(p, 'key'), 'must not be empty');
      return;
    }
    const values = strList(r, w['values'], at(p, 'values'));
    const notValues = strList(r, w['notValues'], at(p, 'notValues'));
    if (!values && !notValues) {
      r.error(p, `at least one of values or notValues must be set for key ${key}`);
      return;
    }
    checkWhenValues(r, key, values ?? [], at(p, 'values'));
    checkWhenValues(r, key, notValues ?? [], at(p, 'notValues'));
  });
  const { tcpFrom, tcpTo, fromExists, toExists } = seen;
  if (action === 'DENY' && ((fromExists && !toExists && !tcpFrom) || (toExists && !tcpTo))) {
    r.warn(
      path,
      'configured AuthorizationPolicy will deny all traffic to TCP ports under its scope due to the use of only HTTP attributes in a DENY rule; it is recommended to explicitly specify the port',
    );
  }
}

export const validateAuthorizationPolicy: SpecValidator = (r, spec) => {
  checkPolicyTargeting(r, spec, 'spec');
  const action = enumOf(r, spec['action'], 'spec.action', AuthorizationPolicy_Action);
  const rules = list(r, spec['rules'], 'spec.rules');
  const provider = obj(r, spec['provider'], 'spec.provider');
  if (action === 'CUSTOM') {
    if (!rules)
      r.error(
        'spec.rules',
        'CUSTOM action without rules is meaningless as it will never be triggered, add an empty rule `{}` if you want it be triggered for every request',
      );
    else if (!(str(r, provider?.['name'], 'spec.provider.name') ?? ''))
      r.error('spec.provider.name', 'must not be empty');
  }
  if (provider && action !== 'CUSTOM')
    r.error('spec.provider', `must not be set with non CUSTOM action, found ${action}`);
  if (action === 'DENY' && !rules) {
    r.error(
      'spec.rules',
      'DENY action without rules is meaningless as it will never be triggered, add an empty rule `{}` if you want it be triggered for every request',
    );
  }
  eachListedMessage(r, rules, 'spec.rules', 'rule must not be null', (rule, p) => {
    checkRule(r, rule, p, action);
  });
};
