// One shape for Address and Authorization resources, whichever side produced them: the protobuf JSON
// mapping with protobufjs' camelCase names, enums as names, default values left out and IP bytes as
// text, which is what `istiod-ts xds-client --output json` prints (ambient/codec.ts). istiod's
// goldens are Go protojson with proto field names (snake_case) and bytes in base64; this maps them
// into that shape without touching a value's meaning.

import { ipToText } from '../../src/ambient/ip';

/** Fields whose values are maps: their keys are data (`ns/hostname`), not field names. */
const MAP_FIELDS = new Set(['services']);
/** Bytes fields, all of them IP addresses in workload.proto and authorization.proto. */
const IP_FIELDS = new Set(['address', 'addresses']);
/** Deepest nesting of these messages is under ten; anything deeper is not one of them. */
export const MAX_PROTO_JSON_DEPTH = 32;

const camel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function ipFromBase64(text: string): string {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== 4 && bytes.length !== 16) throw new Error(`bytes ${text} are not an IP address`);
  return ipToText(bytes);
}

function convert(value: unknown, field: string, depth: number): unknown {
  if (depth > MAX_PROTO_JSON_DEPTH) throw new Error(`protojson nested deeper than ${MAX_PROTO_JSON_DEPTH}`);
  if (Array.isArray(value)) return value.map((v) => convert(v, field, depth + 1));
  if (typeof value === 'string' && IP_FIELDS.has(field)) return ipFromBase64(value);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    const isMap = MAP_FIELDS.has(field);
    for (const [k, v] of Object.entries(value)) {
      const key = isMap ? k : camel(k);
      out[key] = convert(v, isMap ? '' : key, depth + 1);
    }
    return out;
  }
  return value;
}

/** Go protojson (UseProtoNames, no unpopulated fields) of an Address, in our shape. */
export function addressFromGoProtoJson(message: unknown): Record<string, unknown> {
  return convert(message, '', 0) as Record<string, unknown>;
}

/**
 * Go protojson of an Authorization, in our shape. istiod's copy of authorization.proto names the
 * levels `groups` (field 5) and `rules` (field 1 of Group); ztunnel's copy, and ours, name the same
 * fields `rules` and `clauses`. The numbers and types are the same, so the bytes are too; only the
 * names are mapped here.
 */
export function authorizationFromGoProtoJson(message: unknown): Record<string, unknown> {
  const out = convert(message, '', 0) as Record<string, unknown>;
  if (!('groups' in out)) return out;
  const { groups, ...rest } = out;
  const rules = (Array.isArray(groups) ? groups : []).map((g: Record<string, unknown>) => {
    const { rules: clauses, ...other } = g;
    return { ...other, ...(clauses !== undefined ? { clauses } : {}) };
  });
  return { ...rest, rules };
}
