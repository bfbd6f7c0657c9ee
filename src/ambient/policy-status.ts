// What ztunnel made of an AuthorizationPolicy, as plain facts for its status condition: whether it
// was sent, and what was dropped or refused on the way (istiod's convertAuthorizationPolicy
// status). The words of the condition are the status controller's; this file only says what happened.

import type { KubeObject } from '../store/types';
import { ANNOTATION } from './constants';
import { parseGoBool } from '../config/bool';
import { convertAuthorizationPolicy, HTTP_OPERATION_FIELDS, HTTP_SOURCE_FIELDS, L4_WHEN_KEYS } from './authorization';
import type { Authorization } from './messages';

/** How a DENY or ALLOW policy that names HTTP attributes is enforced without them. */
export type HttpAttributeEffect = 'allowRulesOmitted' | 'denyWithoutHttpRules' | 'denyHasNoEffect';

export type PolicyOutcome =
  /** Sent to ztunnel as written. */
  | { kind: 'accepted' }
  /** Sent, without the HTTP attributes listed (sorted, de-duplicated). */
  | { kind: 'httpAttributesIgnored'; attributes: string[]; effect: HttpAttributeEffect }
  /** Not sent: the istio.io/dry-run annotation while ztunnel dry-run support is off. */
  | { kind: 'dryRunUnsupported' }
  /** Not sent: an action other than ALLOW or DENY (AUDIT, CUSTOM). */
  | { kind: 'unsupportedAction'; action: string };

export interface PolicyStatusFacts {
  namespace: string;
  name: string;
  /** metadata.generation of the policy these facts were computed from. */
  generation: number;
  outcome: PolicyOutcome;
}

type Fields = Record<string, unknown>;
const nonEmpty = (v: unknown) => Array.isArray(v) && v.length > 0;
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? (v as unknown[]) : []);
const asFields = (v: unknown): Fields => (v !== null && typeof v === 'object' ? (v as Fields) : {});

/** The HTTP attribute names a policy's rules use: operation and source fields, and non-L4 `when` keys. */
export function httpAttributesOf(spec: Fields): string[] {
  const found = new Set<string>();
  for (const rule of asList(spec['rules'])) {
    const r = asFields(rule);
    for (const to of asList(r['to'])) {
      const op = asFields(asFields(to)['operation']);
      for (const f of HTTP_OPERATION_FIELDS) if (nonEmpty(op[f])) found.add(f);
    }
    for (const from of asList(r['from'])) {
      const src = asFields(asFields(from)['source']);
      for (const f of HTTP_SOURCE_FIELDS) if (nonEmpty(src[f])) found.add(f);
    }
    for (const when of asList(r['when'])) {
      const key = asFields(when)['key'];
      const k = typeof key === 'string' ? key : '';
      if (!(L4_WHEN_KEYS as readonly string[]).includes(k)) found.add(k);
    }
  }
  // Go sorts strings by bytes; UTF-16 order differs from it only outside the BMP.
  return [...found].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

/**
 * Whether some rule of the converted policy can fire at ztunnel: a rule with no clauses matches
 * everything; otherwise every clause needs a match with at least one field (ztunnel skips empty ones).
 */
export function hasEnforceableRule(auth: Authorization): boolean {
  return (auth.rules ?? []).some((rule) =>
    (rule.clauses ?? []).every((clause) => (clause.matches ?? []).some((m) => Object.keys(m).length > 0)),
  );
}

/**
 * The facts for one AuthorizationPolicy, or undefined when it is not ztunnel's at all (it has
 * targetRef(s): a waypoint enforces it). As istiod, the dry-run check comes before the targetRef one.
 */
export function policyStatusFacts(
  ap: KubeObject,
  rootNamespace: string,
  enableDryRun = false,
): PolicyStatusFacts | undefined {
  const base = {
    namespace: ap.metadata.namespace ?? '',
    name: ap.metadata.name,
    generation: ap.metadata.generation ?? 0,
  };
  const spec = asFields(ap.spec);
  const dryRun = parseGoBool(ap.metadata.annotations?.[ANNOTATION.dryRun] ?? '') === true;
  if (dryRun && !enableDryRun) return { ...base, outcome: { kind: 'dryRunUnsupported' } };
  if (spec['targetRef'] || nonEmpty(spec['targetRefs'])) return undefined;
  const action = typeof spec['action'] === 'string' && spec['action'] !== '' ? spec['action'] : 'ALLOW';
  if (action !== 'ALLOW' && action !== 'DENY') return { ...base, outcome: { kind: 'unsupportedAction', action } };
  const attributes = httpAttributesOf(spec);
  if (attributes.length === 0) return { ...base, outcome: { kind: 'accepted' } };
  const converted = convertAuthorizationPolicy(ap, rootNamespace, enableDryRun);
  const effect: HttpAttributeEffect =
    action === 'ALLOW'
      ? 'allowRulesOmitted'
      : converted && hasEnforceableRule(converted)
        ? 'denyWithoutHttpRules'
        : 'denyHasNoEffect';
  return { ...base, outcome: { kind: 'httpAttributesIgnored', attributes, effect } };
}
