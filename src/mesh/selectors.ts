// Label selectors in meshConfig (discoverySelectors, serviceScopeConfigs), checked as Kubernetes'
// LabelSelectorAsSelector checks them: known operators, values only with In/NotIn, and keys and
// values that are valid label keys and values.
//
// istiod logs a discovery selector it cannot convert and drops it, which silently widens or
// narrows what it watches; this server refuses the meshConfig instead, naming the selector,
// because the set of watched namespaces should never change by accident.

import { typeName } from './decode';
import { isDns1123Label, isMap, listOf } from './validate-common';
import type { MeshConfigIssue } from './types';

export const LABEL_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_NAME_MAX = 63;
const LABEL_PREFIX_MAX = 253;

/** A Kubernetes qualified name: optional "dns.subdomain/" then a name of at most 63 characters. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  if (
    prefix !== undefined &&
    (prefix === '' || prefix.length > LABEL_PREFIX_MAX || !prefix.split('.').every(isDns1123Label))
  )
    return `invalid label key "${key}": the prefix must be a DNS subdomain`;
  if (name.length > LABEL_NAME_MAX || !LABEL_NAME.test(name))
    return `invalid label key "${key}": name part must be 63 characters or less, alphanumeric, '-', '_' or '.', starting and ending with an alphanumeric character`;
  return undefined;
}

export function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  return value.length <= LABEL_NAME_MAX && LABEL_NAME.test(value)
    ? undefined
    : `invalid label value "${value}": must be 63 characters or less, alphanumeric, '-', '_' or '.', starting and ending with an alphanumeric character`;
}

/** Problems of one selector at `field`; its types were checked by the decoder. */
export function labelSelectorIssues(sel: unknown, field: string, issues: MeshConfigIssue[]): void {
  if (!isMap(sel)) return;
  const add = (f: string, message: string | undefined) => message && issues.push({ field: f, message });
  const labels = sel['matchLabels'];
  if (isMap(labels))
    for (const [k, v] of Object.entries(labels)) {
      add(`${field}.matchLabels`, labelKeyProblem(k));
      if (typeof v === 'string') add(`${field}.matchLabels.${k}`, labelValueProblem(v));
    }
  listOf(sel['matchExpressions']).forEach((e, j) => {
    if (!isMap(e)) return;
    const f = `${field}.matchExpressions[${j}]`;
    if (typeof e['key'] === 'string') add(`${f}.key`, labelKeyProblem(e['key']));
    const op = e['operator'];
    const values = listOf(e['values']);
    if (typeof op !== 'string' || !LABEL_OPERATORS.includes(op)) {
      add(
        `${f}.operator`,
        `must be one of ${LABEL_OPERATORS.join(', ')}, got ${op === undefined ? 'nothing' : typeName(op)}`,
      );
    } else if ((op === 'In' || op === 'NotIn') && values.length === 0) {
      add(`${f}.values`, `for 'In', 'NotIn' operators, values set can't be empty`);
    } else if ((op === 'Exists' || op === 'DoesNotExist') && values.length > 0) {
      add(`${f}.values`, `values set must be empty for 'Exists' and 'DoesNotExist'`);
    }
    values.forEach((v, k) => typeof v === 'string' && add(`${f}.values[${k}]`, labelValueProblem(v)));
  });
}

/** Every selector of a layer: discoverySelectors and both selectors of each serviceScopeConfigs entry. */
export function meshSelectorIssues(layer: Record<string, unknown>, issues: MeshConfigIssue[]): void {
  listOf(layer['discoverySelectors']).forEach((s, i) => labelSelectorIssues(s, `discoverySelectors[${i}]`, issues));
  listOf(layer['serviceScopeConfigs']).forEach((c, i) => {
    if (!isMap(c)) return;
    for (const which of ['namespaceSelector', 'servicesSelector'])
      labelSelectorIssues(c[which], `serviceScopeConfigs[${i}].${which}`, issues);
  });
}
