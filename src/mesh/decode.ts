// One meshConfig layer's plain value, checked against the schema the way istiod's decoder
// (protomarshal.ApplyYAML: jsonpb, retried with unknown fields allowed) reads it:
// - a known field with the wrong type is an error naming its path;
// - an enum takes a value name, and an unknown name is an error ("unknown value ... for enum ...");
//   a number is taken when it is one of the enum's values and becomes its name, so every reader
//   here sees names (jsonpb would take any number; one that names no value is refused here);
// - integers may be quoted ("15020"), as jsonpb allows, and become numbers;
// - proto field names (trust_domain) are read as their JSON names (trustDomain), the JSON name
//   winning when a layer has both, as in jsonpb;
// - unknown fields are kept verbatim (so /debug/mesh shows them) and listed, so the caller can
//   warn about each once: istiod accepts them without a word, which hides typos.
// The walk follows the schema, so its depth is bounded by the schema's, not by the input's.

import { parseDuration } from '../config/duration';
import type { EnumSpec, Field, MessageSpec } from './schema';
import type { MeshConfigIssue } from './types';

type Json = Record<string, unknown>;

export const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `${typeof v} ${JSON.stringify(v)}`;
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const UINT32_MAX = 2 ** 32 - 1;

export interface Decoded {
  value: Json;
  issues: MeshConfigIssue[];
  /** Paths of fields the schema does not know, in document order. */
  unknown: string[];
}

const has = (obj: object, key: string): boolean => Object.prototype.hasOwnProperty.call(obj, key);

/** Sets an own property even for "__proto__", which plain assignment would treat as the prototype. */
function put(obj: Json, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

const snakeToCamel = (key: string): string => key.replace(/_([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());

/** An integer as jsonpb reads one: a JSON number or a quoted one, within the field's range. */
function integer(v: unknown, min: number, max: number): number | undefined {
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max ? n : undefined;
}

function enumValue(spec: EnumSpec, v: unknown, field: string, issues: MeshConfigIssue[]): string | undefined {
  if (typeof v === 'string') {
    if (has(spec.values, v)) return v;
  } else if (typeof v === 'number') {
    const name = Object.keys(spec.values).find((k) => spec.values[k] === v);
    if (name !== undefined) return name;
  } else {
    issues.push({ field, message: `expected one of ${Object.keys(spec.values).join(', ')}, got ${typeName(v)}` });
    return undefined;
  }
  issues.push({
    field,
    message: `unknown value ${JSON.stringify(v)} for enum ${spec.name} (one of ${Object.keys(spec.values).join(', ')})`,
  });
  return undefined;
}

/** Checks one field's value; returns the value to keep (normalised), or the input when it is wrong. */
function decodeField(type: Field, v: unknown, field: string, out: Decoded): unknown {
  const fail = (want: string): unknown => {
    out.issues.push({ field, message: `expected ${want}, got ${typeName(v)}` });
    return v;
  };
  switch (type) {
    case 'string':
      return typeof v === 'string' ? v : fail('a string');
    case 'bool':
      return typeof v === 'boolean' ? v : fail('true or false');
    case 'int':
      return integer(v, INT32_MIN, INT32_MAX) ?? fail('an integer');
    case 'uint':
      return integer(v, 0, UINT32_MAX) ?? fail('a non-negative integer');
    case 'double': {
      const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
      return typeof n === 'number' && !Number.isNaN(n) ? n : fail('a number');
    }
    case 'duration':
      if (typeof v !== 'string') return fail('a duration such as "10s"');
      try {
        parseDuration(v);
      } catch (e) {
        out.issues.push({ field, message: (e as Error).message });
      }
      return v;
    case 'strings':
      return Array.isArray(v) && v.every((s) => typeof s === 'string') ? v : fail('a list of strings');
    case 'stringMap':
      if (!isMap(v)) return fail('a mapping of strings');
      for (const [k, s] of Object.entries(v))
        if (typeof s !== 'string')
          out.issues.push({
            field: `${field}.${k}`,
            message: `expected a string (quote values like "true"), got ${typeName(s)}`,
          });
      return v;
    case 'any':
      return isMap(v) ? v : fail('a mapping');
  }
  if ('enum' in type) return enumValue(type.enum, v, field, out.issues) ?? v;
  if ('enumList' in type) {
    if (!Array.isArray(v)) return fail('a list');
    const items: unknown[] = v;
    return items.map((item, i) => enumValue(type.enumList, item, `${field}[${i}]`, out.issues) ?? item);
  }
  if ('message' in type) return isMap(v) ? decodeMessage(type.message, v, `${field}.`, out) : fail('a mapping');
  if (!Array.isArray(v)) return fail('a list');
  const items: unknown[] = v;
  return items.map((item, i) => {
    if (isMap(item)) return decodeMessage(type.list, item, `${field}[${i}].`, out);
    out.issues.push({ field: `${field}[${i}]`, message: `expected a mapping, got ${typeName(item)}` });
    return item;
  });
}

function decodeMessage(spec: MessageSpec, obj: Json, prefix: string, out: Decoded): Json {
  const result: Json = {};
  for (const [key, value] of Object.entries(obj)) {
    let name = key;
    if (!has(spec.fields, key)) {
      const camel = snakeToCamel(key);
      if (camel !== key && has(spec.fields, camel)) {
        // A proto name spelled beside its JSON name loses to it, as in jsonpb.
        if (has(obj, camel)) continue;
        name = camel;
      }
    }
    const type = has(spec.fields, name) ? spec.fields[name] : undefined;
    if (type === undefined) {
      out.unknown.push(`${prefix}${key}`);
      put(result, key, value);
    } else {
      // null means "not set", as in istiod's JSON decoding; the merge skips it.
      put(result, name, value === null ? null : decodeField(type, value, `${prefix}${name}`, out));
    }
  }
  return result;
}

/** Decodes one layer's mapping against `spec` (MESH_CONFIG for a whole meshConfig). */
export function decodeLayer(spec: MessageSpec, value: Json): Decoded {
  const out: Decoded = { value: {}, issues: [], unknown: [] };
  out.value = decodeMessage(spec, value, '', out);
  return out;
}
