// Telemetry (telemetry.istio.io): metrics, tracing and access logging providers.

import { TagOverride_Operation } from './common/enum-types';
import { eachMessage, enumOf, isObject, JsonObject, list, num, obj, str } from './common/fields';
import { at, idx, key, Report } from './common/report';
import { checkPolicyTargeting } from './common/selectors';
import { celSyntaxError } from './common/cel';
import type { SpecValidator } from './types';

function checkProviders(r: Report, v: unknown, path: string): number {
  const providers = list(r, v, path) ?? [];
  const bad = providers.findIndex((p) => !isObject(p) || !p['name']);
  if (bad >= 0) r.error(idx(path, bad), 'providers.name may not be empty');
  return providers.length;
}

function checkMetrics(r: Report, m: JsonObject, path: string): void {
  checkProviders(r, m['providers'], at(path, 'providers'));
  eachMessage(r, m['overrides'], at(path, 'overrides'), 'tagOverrides may not be null', (override, p) => {
    for (const [name, to] of Object.entries(obj(r, override['tagOverrides'], at(p, 'tagOverrides')) ?? {})) {
      const tp = key(at(p, 'tagOverrides'), name);
      if (name === '') r.warn(tp, 'tagOverrides.name may not be empty');
      if (!isObject(to)) {
        r.error(tp, 'tagOverrides may not be null');
        continue;
      }
      const op = enumOf(r, to['operation'], at(tp, 'operation'), TagOverride_Operation);
      const value = str(r, to['value'], at(tp, 'value')) ?? '';
      if (op === 'UPSERT' && value === '')
        r.error(at(tp, 'value'), 'tagOverrides.value must be set when operation is UPSERT');
      if (op === 'REMOVE' && value !== '')
        r.error(at(tp, 'value'), 'tagOverrides.value may only be set when operation is UPSERT');
    }
    const match = obj(r, override['match'], at(p, 'match'));
    if (match && 'customMetric' in match && !match['customMetric'])
      r.error(at(p, 'match.customMetric'), 'customMetric may not be empty');
  });
}

function checkTracing(r: Report, t: JsonObject, path: string): void {
  if (checkProviders(r, t['providers'], at(path, 'providers')) > 1)
    r.warn(at(path, 'providers'), 'multiple providers is not currently supported');
  // randomSamplingPercentage is a DoubleValue: the bare number in JSON.
  const pct = num(r, t['randomSamplingPercentage'], at(path, 'randomSamplingPercentage'));
  if (pct !== undefined && (pct < 0 || pct > 100))
    r.error(at(path, 'randomSamplingPercentage'), 'randomSamplingPercentage must be in range [0.0, 100.0]');
  for (const [name, tag] of Object.entries(obj(r, t['customTags'], at(path, 'customTags')) ?? {})) {
    const tp = key(at(path, 'customTags'), name);
    if (name === '') r.error(tp, 'tag name may not be empty');
    if (!isObject(tag)) {
      r.error(tp, `tag '${name}' may not have a nil value`);
      continue;
    }
    const field = (kind: string, f: string) => (isObject(tag[kind]) ? tag[kind][f] : undefined);
    if (tag['literal'] != null && !field('literal', 'value'))
      r.error(at(tp, 'literal.value'), 'literal tag value may not be empty');
    if (tag['header'] != null && !field('header', 'name'))
      r.error(at(tp, 'header.name'), 'header tag name may not be empty');
    if (tag['environment'] != null && !field('environment', 'name'))
      r.error(at(tp, 'environment.name'), 'environment tag name may not be empty');
  }
}

export const validateTelemetry: SpecValidator = (r, spec) => {
  checkPolicyTargeting(r, spec, 'spec');
  list(r, spec['metrics'], 'spec.metrics')?.forEach((m, i) => {
    if (isObject(m)) checkMetrics(r, m, idx('spec.metrics', i));
  });
  const tracing = list(r, spec['tracing'], 'spec.tracing');
  if ((tracing?.length ?? 0) > 1) r.warn('spec.tracing', 'multiple tracing is not currently supported');
  tracing?.forEach((t, i) => {
    if (isObject(t)) checkTracing(r, t, idx('spec.tracing', i));
  });
  list(r, spec['accessLogging'], 'spec.accessLogging')?.forEach((l, i) => {
    if (!isObject(l)) return;
    const p = idx('spec.accessLogging', i);
    const filter = obj(r, l['filter'], at(p, 'filter'));
    if (filter) {
      const err = celSyntaxError(str(r, filter['expression'], at(p, 'filter.expression')) ?? '');
      if (err) r.error(at(p, 'filter.expression'), err);
    }
    checkProviders(r, l['providers'], at(p, 'providers'));
  });
};
