// AuthorizationPolicy -> istio.security.Authorization, as istiod's convertAuthorizationPolicy:
// L4 attributes only; ALLOW rules with HTTP attributes are dropped, DENY rules lose them.

import { parseGoBool } from '../config/bool';
import type { KubeObject } from '../store/types';
import { ANNOTATION } from './constants';
import { parseCidr } from './ip';
import {
  Authorization,
  AuthzAction,
  AuthzAddress,
  AuthzScope,
  Clause,
  Match,
  ServiceAccountMatch,
  StringMatch,
  Rule,
  setIf,
} from './messages';
import { authorizationPolicySpec, namespaceOf } from './specs';

/** Why a policy is not sent to ztunnel, or 'sent'. */
export type PolicyDisposition = 'sent' | 'targetRef' | 'dryRun' | 'unsupportedAction';

interface Source {
  principals?: string[];
  notPrincipals?: string[];
  namespaces?: string[];
  notNamespaces?: string[];
  serviceAccounts?: string[];
  notServiceAccounts?: string[];
  ipBlocks?: string[];
  notIpBlocks?: string[];
  requestPrincipals?: string[];
  notRequestPrincipals?: string[];
  remoteIpBlocks?: string[];
  notRemoteIpBlocks?: string[];
}
interface Operation {
  ports?: string[];
  notPorts?: string[];
  hosts?: string[];
  notHosts?: string[];
  methods?: string[];
  notMethods?: string[];
  paths?: string[];
  notPaths?: string[];
}
interface Condition {
  key: string;
  values?: string[];
  notValues?: string[];
}
interface ApRule {
  from?: { source?: Source }[];
  to?: { operation?: Operation }[];
  when?: Condition[];
}

/** Operation and source fields only an L7 proxy can evaluate: ztunnel drops rules that use them. */
export const HTTP_OPERATION_FIELDS = ['hosts', 'notHosts', 'methods', 'notMethods', 'paths', 'notPaths'] as const;
export const HTTP_SOURCE_FIELDS = [
  'remoteIpBlocks',
  'notRemoteIpBlocks',
  'requestPrincipals',
  'notRequestPrincipals',
] as const;
/** The only `when` keys ztunnel can evaluate. */
export const L4_WHEN_KEYS = [
  'source.ip',
  'source.namespace',
  'source.principal',
  'destination.ip',
  'destination.port',
] as const;

export function policyDisposition(ap: KubeObject, enableDryRun = false): PolicyDisposition {
  const spec = authorizationPolicySpec(ap);
  if (spec.targetRef || (Array.isArray(spec.targetRefs) && spec.targetRefs.length > 0)) return 'targetRef';
  const action = spec.action ?? 'ALLOW';
  if (action !== 'ALLOW' && action !== 'DENY') return 'unsupportedAction';
  if (isDryRun(ap) && !enableDryRun) return 'dryRun';
  return 'sent';
}

/** Go's strconv.ParseBool on the dry-run annotation; an unparsable value is false. */
const isDryRun = (ap: KubeObject) => parseGoBool(ap.metadata.annotations?.[ANNOTATION.dryRun] ?? '') === true;

/** `*` is presence, a leading `*` a suffix, a trailing `*` a prefix, anything else exact. */
export function stringMatches(values: readonly string[] | undefined): StringMatch[] {
  return (values ?? []).map((v) => {
    if (v === '*') return { presence: {} };
    if (v.startsWith('*')) return { suffix: v.slice(1) };
    if (v.endsWith('*')) return { prefix: v.slice(0, -1) };
    return { exact: v };
  });
}

/** Ports that are not integers in 0..65535 are skipped. */
export function portMatches(values: readonly string[] | undefined): number[] {
  const out: number[] = [];
  for (const v of values ?? []) if (/^\d+$/.test(v) && Number(v) <= 65535) out.push(Number(v));
  return out;
}

/** A bare IP becomes /32 or /128; invalid entries are skipped. */
export function ipMatches(values: readonly string[] | undefined): AuthzAddress[] {
  const out: AuthzAddress[] = [];
  for (const v of values ?? []) {
    const c = v ? parseCidr(v) : undefined;
    if (c) out.push({ address: c.address, length: c.length });
  }
  return out;
}

/** "ns/sa" names a service account of another namespace; a bare "sa" is in the policy's namespace. */
export function serviceAccountMatches(
  values: readonly string[] | undefined,
  policyNamespace: string,
): ServiceAccountMatch[] {
  return (values ?? []).map((v) => {
    const slash = v.indexOf('/');
    return slash >= 0
      ? { namespace: v.slice(0, slash), serviceAccount: v.slice(slash + 1) }
      : { namespace: policyNamespace, serviceAccount: v };
  });
}

function whenMatch(c: Condition): Match {
  const m: Match = {};
  const pick = (key: string, values: string[] | undefined) => (c.key === key ? values : undefined);
  setIf(m, 'namespaces', stringMatches(pick('source.namespace', c.values)));
  setIf(m, 'notNamespaces', stringMatches(pick('source.namespace', c.notValues)));
  setIf(m, 'principals', stringMatches(pick('source.principal', c.values)));
  setIf(m, 'notPrincipals', stringMatches(pick('source.principal', c.notValues)));
  setIf(m, 'sourceIps', ipMatches(pick('source.ip', c.values)));
  setIf(m, 'notSourceIps', ipMatches(pick('source.ip', c.notValues)));
  setIf(m, 'destinationIps', ipMatches(pick('destination.ip', c.values)));
  setIf(m, 'notDestinationIps', ipMatches(pick('destination.ip', c.notValues)));
  setIf(m, 'destinationPorts', portMatches(pick('destination.port', c.values)));
  setIf(m, 'notDestinationPorts', portMatches(pick('destination.port', c.notValues)));
  return m;
}

function sourceMatch(s: Source, policyNamespace: string): Match {
  const m: Match = {};
  setIf(m, 'sourceIps', ipMatches(s.ipBlocks));
  setIf(m, 'notSourceIps', ipMatches(s.notIpBlocks));
  setIf(m, 'namespaces', stringMatches(s.namespaces));
  setIf(m, 'notNamespaces', stringMatches(s.notNamespaces));
  setIf(m, 'serviceAccounts', serviceAccountMatches(s.serviceAccounts, policyNamespace));
  setIf(m, 'notServiceAccounts', serviceAccountMatches(s.notServiceAccounts, policyNamespace));
  setIf(m, 'principals', stringMatches(s.principals));
  setIf(m, 'notPrincipals', stringMatches(s.notPrincipals));
  return m;
}

const nonEmpty = (v: unknown) => Array.isArray(v) && v.length > 0;

/** One AP rule -> the clauses of one Rule, or undefined when an ALLOW rule has HTTP attributes. */
export function convertRule(
  action: AuthzAction,
  rule: ApRule,
  policyNamespace: string,
): { clauses: Clause[] } | undefined {
  let l7 = false;
  const toMatches: Match[] = [];
  for (const to of rule.to ?? []) {
    const op = to.operation ?? {};
    if (HTTP_OPERATION_FIELDS.some((f) => nonEmpty(op[f]))) l7 = true;
    const m: Match = {};
    setIf(m, 'destinationPorts', portMatches(op.ports));
    setIf(m, 'notDestinationPorts', portMatches(op.notPorts));
    toMatches.push(m);
  }
  const fromMatches: Match[] = [];
  for (const from of rule.from ?? []) {
    const src = from.source ?? {};
    if (HTTP_SOURCE_FIELDS.some((f) => nonEmpty(src[f]))) l7 = true;
    fromMatches.push(sourceMatch(src, policyNamespace));
  }
  const clauses: Clause[] = [];
  if (toMatches.length) clauses.push({ matches: toMatches });
  if (fromMatches.length) clauses.push({ matches: fromMatches });
  for (const when of rule.when ?? []) {
    if (!(L4_WHEN_KEYS as readonly string[]).includes(when.key)) l7 = true;
    clauses.push({ matches: [whenMatch(when)] });
  }
  if (action === AuthzAction.ALLOW && l7) return undefined;
  return { clauses };
}

/** The Authorization ztunnel receives for an AP, or undefined when the AP is not sent. */
export function convertAuthorizationPolicy(
  ap: KubeObject,
  rootNamespace: string,
  enableDryRun = false,
): Authorization | undefined {
  if (policyDisposition(ap, enableDryRun) !== 'sent') return undefined;
  const spec = authorizationPolicySpec(ap);
  const namespace = namespaceOf(ap);
  const action = spec.action === 'DENY' ? AuthzAction.DENY : AuthzAction.ALLOW;
  const scope = spec.selector
    ? AuthzScope.WORKLOAD_SELECTOR
    : namespace === rootNamespace
      ? AuthzScope.GLOBAL
      : AuthzScope.NAMESPACE;
  const rules: Rule[] = [];
  // A rule written as a bare `-` in YAML arrives as null, and converts as an empty rule.
  for (const rule of (spec.rules ?? []) as (ApRule | null)[]) {
    const converted = convertRule(action, rule ?? {}, namespace);
    if (!converted) continue;
    const r: Rule = {};
    setIf(r, 'clauses', converted.clauses);
    rules.push(r);
  }
  const out: Authorization = { name: ap.metadata.name, namespace };
  setIf(out, 'scope', scope);
  setIf(out, 'action', action);
  setIf(out, 'rules', rules);
  setIf(out, 'dryRun', isDryRun(ap));
  return out;
}

/** The name a selecting AP contributes to Workload.authorization_policies; only sent policies are listed. */
export function workloadPolicyName(ap: KubeObject, enableDryRun = false): string | undefined {
  return policyDisposition(ap, enableDryRun) === 'sent' ? `${ap.metadata.namespace}/${ap.metadata.name}` : undefined;
}
