// Pieces of VirtualService routes: string matches, header names and values, destinations,
// gateway references.

import { int, isObject, JsonObject, obj, str, strMap, UINT32 } from './common/fields';
import { fqdnError, isDNS1123Label, wildcardDomainError } from './common/hosts';
import { portError } from './common/ports';
import { re2Error } from './common/re2';
import { at, key, Report } from './common/report';

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~A-Za-z0-9]+$/;
const PSEUDO_HEADERS = new Set([':method', ':scheme', ':authority', ':path', ':status']);
const JWT_CLAIM_HEADER = '@request.auth.claims';
// No control characters but HTAB: every UTF-16 code unit is HTAB, visible ASCII or SP, or above DEL.
const HEADER_VALUE_CHARS = /^[\t\u0020-\u007E\u0080-\uFFFF]*$/;

export function isJwtClaimRoute(name: string): boolean {
  if (!name.toLowerCase().startsWith(JWT_CLAIM_HEADER)) return false;
  const rest = name.slice(JWT_CLAIM_HEADER.length);
  return (rest.startsWith('.') && rest.length > 1) || (rest.startsWith('[') && rest.endsWith(']') && rest.length > 2);
}

export function matchHeaderNameError(name: string): string | undefined {
  if (name === '') return 'header name cannot be empty';
  if (isJwtClaimRoute(name) || PSEUDO_HEADERS.has(name)) return undefined;
  return HEADER_NAME.test(name) ? undefined : `header name ${name} is not a valid header name`;
}

const isInternalHeader = (h: string) => h.startsWith(':') || h.toLowerCase() === 'host';
export const isAuthorityHeader = (h: string) => h.toLowerCase() === ':authority' || h.toLowerCase() === 'host';

/** Headers a route adds or sets on requests; :authority/host are allowed there. */
export function requestSetHeaderError(name: string): string | undefined {
  if (name === '') return 'header name cannot be empty';
  if (isInternalHeader(name) && !isAuthorityHeader(name))
    return `invalid header "${name}": header cannot have ":" prefix`;
  return undefined;
}

/** Headers a route removes, or sets on responses. */
export function headerOperationError(name: string): string | undefined {
  if (name === '') return 'header name cannot be empty';
  if (name.toLowerCase() === 'host') return `invalid header "${name}": cannot set Host header`;
  if (isInternalHeader(name)) return `invalid header "${name}": header cannot have ":" prefix`;
  return undefined;
}

type FormatState =
  'literal' | 'name' | 'argsOpen' | 'expectString' | 'string' | 'delimOrEnd' | 'argsClose' | 'varClose';

const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

/**
 * Envoy header value formatting: `%VAR%`, `%VAR(arg)%`, `%VAR(["a","b"])%`, and `%%` for a
 * literal percent. A small state machine over the characters, as Envoy parses it.
 */
export function headerValueError(value: string): string | undefined {
  if (!HEADER_VALUE_CHARS.test(value)) return `header value configuration ${value} is invalid`;
  const fail = (why: string) => `header value configuration: invalid header configuration. ${why}`;
  let state: FormatState = 'literal';
  for (let i = 0; i < value.length; i++) {
    const c = value.charAt(i);
    switch (state) {
      case 'literal':
        if (c !== '%') break;
        if (i + 1 >= value.length) return fail('Un-escaped %');
        if (value[i + 1] === '%') i++;
        else state = 'name';
        break;
      case 'name':
        if (c === '%') state = 'literal';
        else if (c === '(') state = 'argsOpen';
        break;
      case 'argsOpen':
        if (c === '[') state = 'expectString';
        else if (!isSpace(c)) state = 'string';
        break;
      case 'delimOrEnd':
        if (c === ',') state = 'expectString';
        else if (c === ']') state = 'argsClose';
        else if (!isSpace(c)) return fail("Expecting ',', ']', or whitespace");
        break;
      case 'expectString':
        if (c === '"') state = 'string';
        else if (!isSpace(c)) return fail("Expecting '\"'");
        break;
      case 'string':
        if (c === '\\') {
          if (i + 1 >= value.length) return fail('Un-terminated backslash in JSON string');
          i++;
        } else if (c === ')') state = 'varClose';
        else if (c === '"') state = 'delimOrEnd';
        break;
      case 'argsClose':
        if (c === ')') state = 'varClose';
        else if (!isSpace(c)) return fail("Expecting ')' or whitespace after ']'");
        break;
      case 'varClose':
        if (c === '%') state = 'literal';
        else if (!isSpace(c)) return fail("Expecting '%' or whitespace after ')'");
        break;
    }
  }
  return state === 'literal' ? undefined : fail('Un-terminated variable expression');
}

/** A StringMatch oneof: exact, prefix or regex. */
export function checkStringMatch(r: Report, v: unknown, path: string, opts: { regexOnly?: boolean } = {}): void {
  const sm = obj(r, v, path);
  if (!sm) return;
  if ('prefix' in sm && !opts.regexOnly && (str(r, sm['prefix'], at(path, 'prefix')) ?? '') === '') {
    r.error(at(path, 'prefix'), 'prefix string match should not be empty');
  }
  if ('regex' in sm) {
    const re = str(r, sm['regex'], at(path, 'regex')) ?? '';
    if (re === '') r.error(at(path, 'regex'), 'regex string match should not be empty');
    else {
      const err = re2Error(re, r);
      if (err) r.error(at(path, 'regex'), err);
    }
  }
}

export function checkDestination(r: Report, v: unknown, path: string): void {
  const d = obj(r, v, path);
  if (!d) return;
  // A string is read as it is; only another value needs the field's path, for its error.
  const hostValue = d['host'];
  const host = typeof hostValue === 'string' ? hostValue : (str(r, hostValue, at(path, 'host')) ?? '');
  if (host === '*') r.error(at(path, 'host'), `invalid destination host ${host}`);
  else {
    const err = wildcardDomainError(host);
    if (err) r.error(at(path, 'host'), err);
  }
  const subsetValue = d['subset'];
  const subset = typeof subsetValue === 'string' ? subsetValue : (str(r, subsetValue, at(path, 'subset')) ?? '');
  if (subset !== '' && !isDNS1123Label(subset)) r.error(at(path, 'subset'), `subset name is invalid: ${subset}`);
  const port = d['port'] == null ? undefined : obj(r, d['port'], at(path, 'port'));
  if (port) {
    const n = int(r, port['number'], at(path, 'port.number'), UINT32) ?? 0;
    const err = portError(n);
    if (err) r.error(at(path, 'port.number'), err);
  }
}

/** Gateway references: `ns/name`, or the legacy `name.ns`/`name` form (warned). */
export function checkGatewayNames(r: Report, names: string[], path: string): void {
  for (const [i, name] of names.entries()) {
    const p = `${path}[${i}]`;
    const slash = name.indexOf('/');
    if (slash < 0) {
      if (name.includes('.')) {
        const parts = name.split('.');
        r.warn(
          p,
          `using legacy gatewayName format "${name}"; prefer the <namespace>/<name> format: "${parts[1]}/${parts[0]}"`,
        );
      }
      const err = fqdnError(name);
      if (err) r.error(p, err);
      // istiod stops at the first name in the legacy form.
      return;
    }
    const ns = name.slice(0, slash);
    const gw = name.slice(slash + 1);
    if (ns === '' || gw === '') r.error(p, 'config namespace and gateway name cannot be empty');
    if (!isDNS1123Label(ns)) r.error(p, `invalid value for namespace: "${ns}"`);
    if (!isDNS1123Label(gw)) r.error(p, `invalid value for gateway name: "${gw}"`);
  }
}

/** headers: {request: {set, add, remove}, response: {set, add, remove}}. */
export function checkHeaderOperations(r: Report, v: unknown, path: string): JsonObject | undefined {
  const h = obj(r, v, path);
  if (!h) return undefined;
  for (const side of ['request', 'response'] as const) {
    const ops = obj(r, h[side], at(path, side));
    if (!ops) continue;
    const sp = at(path, side);
    for (const op of ['add', 'set'] as const) {
      for (const [name, value] of Object.entries(strMap(r, ops[op], at(sp, op)) ?? {})) {
        const nameErr = side === 'request' ? requestSetHeaderError(name) : headerOperationError(name);
        if (nameErr) r.error(key(at(sp, op), name), nameErr);
        const valueErr = headerValueError(value);
        if (valueErr) r.error(key(at(sp, op), name), valueErr);
      }
    }
    const remove = ops['remove'];
    if (Array.isArray(remove)) {
      remove.forEach((name, i) => {
        const err = typeof name === 'string' ? headerOperationError(name) : 'must be a string';
        if (err) r.error(`${at(sp, 'remove')}[${i}]`, err);
      });
    }
  }
  return h;
}

/** The string entries of headers.request.set/add; others are reported by checkHeaderOperations. */
export function requestHeaderMap(headers: JsonObject | undefined, op: 'set' | 'add'): Record<string, string> {
  const req = headers && isObject(headers['request']) ? headers['request'] : undefined;
  const m = req && isObject(req[op]) ? req[op] : {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m)) if (typeof v === 'string') out[k] = v;
  return out;
}
