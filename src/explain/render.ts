// The text view of a decision record: the verdict first, then each topic's steps in the order the
// deciding code took them, every fact it read indented under the rule it fed.

import type { DecisionStep, FactValue } from '../contract/decision';
import type { ExplainRecord, IdentityRecord, WorkloadRecord } from './explainer';

function valueText(v: FactValue): string {
  if (v === null) return '(absent)';
  if (Array.isArray(v)) return v.length === 0 ? '(none)' : v.join(', ');
  if (typeof v === 'string') return v === '' ? '""' : v;
  return String(v);
}

function header(r: IdentityRecord | WorkloadRecord): string[] {
  if (r.kind === 'identity') {
    const verdict = r.allowed ? 'ALLOWED' : `DENIED (${r.reason ?? ''})`;
    const lines = [`identity ${r.identity} for a ztunnel on node ${r.node}: ${verdict}`];
    if (r.detail) lines.push(`  ${r.detail}`);
    if (r.askedAs) lines.push(`  asked as node agent pod ${r.askedAs}`);
    return lines;
  }
  if (!r.found) return [`workload ${r.namespace}/${r.name}: NOT FOUND (ztunnel is sent no workload for it)`];
  return [
    `workload ${r.namespace}/${r.name}`,
    `  protocol:  ${r.protocol ?? ''}`,
    `  services:  ${valueText(r.services ?? [])}`,
    `  waypoint:  ${r.waypoint ?? '(none)'}`,
    `  policies:  ${valueText(r.authorizationPolicies ?? [])}`,
    `  by scope:  ${valueText(r.scopedPolicies ?? [])}`,
  ];
}

function stepLines(s: DecisionStep): string[] {
  const lines = [`  [${s.rule}] ${s.text}`];
  for (const f of s.facts) lines.push(`      ${f.name}: ${valueText(f.value)}`);
  lines.push(`    -> ${s.outcome}`);
  return lines;
}

/** The whole record as text, one topic after another. */
export function renderText(r: ExplainRecord): string {
  const lines = header(r);
  const topics: string[] = [];
  for (const s of r.steps) if (!topics.includes(s.topic)) topics.push(s.topic);
  for (const topic of topics) {
    lines.push('', `${topic}:`);
    for (const s of r.steps) if (s.topic === topic) lines.push(...stepLines(s));
  }
  if (r.omittedSteps || r.omittedFacts)
    lines.push('', `(${r.omittedSteps} steps and ${r.omittedFacts} facts past the record's limits are not shown)`);
  return lines.join('\n') + '\n';
}

/** Exit status in istioctl's spirit: 0 allowed or found, 1 denied or not found (2 is a bad question). */
export function exitCodeOf(r: ExplainRecord): number {
  return (r.kind === 'identity' ? r.allowed : r.found) ? 0 : 1;
}
