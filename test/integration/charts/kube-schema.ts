// Checks rendered objects against the Kubernetes API types, as the API server's strict field
// validation would: every field must exist in the type, every value must have the field's type,
// and required fields must be present. The types come from @kubernetes/client-node's models,
// which are generated from the OpenAPI document of a current Kubernetes release (1.34 for
// client-node 1.4); each model lists its fields (attributeTypeMap) and its .d.ts marks the
// optional ones.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';

interface Attribute {
  name: string;
  baseName: string;
  type: string;
}

type ModelClass = { attributeTypeMap?: Attribute[] };

const MODELS_DIR = path.join(path.dirname(require.resolve('@kubernetes/client-node')), 'gen', 'models');
const models = k8s as unknown as Record<string, ModelClass | undefined>;
const requiredCache = new Map<string, Set<string>>();

/** Fields the model's .d.ts declares without `?`. */
function requiredFields(model: string): Set<string> {
  let required = requiredCache.get(model);
  if (!required) {
    required = new Set();
    const dts = fs.readFileSync(path.join(MODELS_DIR, `${model}.d.ts`), 'utf8');
    for (const m of dts.matchAll(/^\s+'([^']+)'(\?)?:/gm)) if (!m[2]) required.add(m[1]!);
    requiredCache.set(model, required);
  }
  return required;
}

/** The model type name of apiVersion + kind, e.g. apps/v1 Deployment -> V1Deployment. */
export function modelOf(apiVersion: string, kind: string): string {
  const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
  const name = `${version[0]!.toUpperCase()}${version.slice(1)}${kind}`;
  if (!models[name]?.attributeTypeMap) throw new Error(`no Kubernetes API type for ${apiVersion} ${kind} (looked for ${name})`);
  return name;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkValue(value: unknown, type: string, at: string, problems: string[]): void {
  if (value === null || value === undefined) return;
  const array = /^Array<(.+)>$/.exec(type);
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (array) {
    if (!Array.isArray(value)) problems.push(`${at}: expected a list, got ${typeof value}`);
    else value.forEach((item, i) => checkValue(item, array[1]!, `${at}[${i}]`, problems));
  } else if (map) {
    if (!isObject(value)) problems.push(`${at}: expected a map, got ${typeof value}`);
    else for (const [k, v] of Object.entries(value)) checkValue(v, map[1]!, `${at}.${k}`, problems);
  } else if (type === 'string' || type === 'Date') {
    if (typeof value !== 'string') problems.push(`${at}: expected a string, got ${JSON.stringify(value)}`);
  } else if (type === 'number') {
    if (typeof value !== 'number') problems.push(`${at}: expected a number, got ${JSON.stringify(value)}`);
  } else if (type === 'boolean') {
    if (typeof value !== 'boolean') problems.push(`${at}: expected a boolean, got ${JSON.stringify(value)}`);
  } else if (type === 'IntOrString') {
    if (typeof value !== 'string' && !Number.isInteger(value)) problems.push(`${at}: expected an integer or a string, got ${JSON.stringify(value)}`);
  } else if (type === 'any') {
    return;
  } else {
    checkModel(value, type, at, problems);
  }
}

function checkModel(value: unknown, model: string, at: string, problems: string[]): void {
  const attributes = models[model]?.attributeTypeMap;
  if (!attributes) {
    problems.push(`${at}: unknown Kubernetes type ${model}`);
    return;
  }
  if (!isObject(value)) {
    problems.push(`${at}: expected an object (${model}), got ${JSON.stringify(value)}`);
    return;
  }
  const byName = new Map(attributes.map((a) => [a.baseName, a]));
  for (const [key, v] of Object.entries(value)) {
    const attr = byName.get(key);
    if (!attr) problems.push(`${at}.${key}: unknown field in ${model}`);
    else checkValue(v, attr.type, `${at}.${key}`, problems);
  }
  for (const key of requiredFields(model)) {
    if (value[key] === undefined) problems.push(`${at}.${key}: required by ${model}`);
  }
}

/** Problems of one object against its Kubernetes type; empty when it would be accepted. */
export function kubeSchemaProblems(object: { apiVersion: string; kind: string; metadata: { name: string } }): string[] {
  const problems: string[] = [];
  checkModel(object, modelOf(object.apiVersion, object.kind), `${object.kind}/${object.metadata.name}`, problems);
  return problems;
}

/**
 * Problems that make a CRD schema non-structural (apiextensions' rules): every node has a type,
 * or preserves unknown fields, or is int-or-string; `properties` only on objects; `items` only
 * on arrays, with one schema.
 */
export function structuralProblems(schema: unknown, at = 'openAPIV3Schema'): string[] {
  if (!isObject(schema)) return [`${at}: not a schema object`];
  const problems: string[] = [];
  const type = schema['type'];
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  if (type === undefined && !preserve && !intOrString) problems.push(`${at}: no type`);
  if (schema['properties'] !== undefined) {
    if (type !== 'object') problems.push(`${at}: properties on a non-object`);
    for (const [k, v] of Object.entries(schema['properties'] as Record<string, unknown>)) problems.push(...structuralProblems(v, `${at}.properties.${k}`));
  }
  if (schema['items'] !== undefined) {
    if (type !== 'array') problems.push(`${at}: items on a non-array`);
    problems.push(...structuralProblems(schema['items'], `${at}.items`));
  } else if (type === 'array') {
    problems.push(`${at}: array without items`);
  }
  for (const banned of ['$ref', 'definitions', 'dependencies', 'uniqueItems']) {
    if (schema[banned] !== undefined) problems.push(`${at}: ${banned} is not allowed in a structural schema`);
  }
  return problems;
}
