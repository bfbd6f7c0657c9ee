// /debug/mesh as istiod writes it: the effective MeshConfig in protobuf's canonical JSON (jsonpb),
// which leaves out proto3 fields holding their zero value ("" / false / 0 / the enum's first value /
// empty lists and maps) but keeps every set message, even an empty one, and the wrapper-typed fields
// (google.protobuf.BoolValue and the like), whose false or 0 is a set value. Fields the schema does not
// know, and messages it does not model ('any'), are shown as they were read.

import { isMap } from '../mesh/decode';
import { MESH_CONFIG, type Field, type MessageSpec } from '../mesh/schema';
import type { MeshConfig } from '../mesh/types';

type Json = Record<string, unknown>;

const MESH = 'istio.mesh.v1alpha1';

/**
 * Wrapper-typed fields of the messages the schema walks ("<message>.<jsonName>"), from istio/api
 * mesh/v1alpha1/config.proto and proxy.proto: their zero value is a set value and stays.
 */
export const WRAPPER_FIELDS: ReadonlySet<string> = new Set([
  `${MESH}.MeshConfig.enableAutoMtls`,
  `${MESH}.MeshConfig.enablePrometheusMerge`,
  `${MESH}.MeshConfig.verifyCertificateAtClient`,
  ...['maxNumberOfAttributes', 'maxNumberOfAnnotations', 'maxNumberOfMessageEvents'].flatMap((f) => [
    `${MESH}.MeshConfig.ExtensionProvider.StackdriverProvider.${f}`,
    `${MESH}.Tracing.Stackdriver.${f}`,
  ]),
  `${MESH}.Tracing.enableIstioTags`,
  `${MESH}.ProxyConfig.concurrency`,
  `${MESH}.ProxyConfig.holdApplicationUntilProxyStarts`,
  `${MESH}.ProxyConfig.statsCompression`,
  `${MESH}.ProxyConfig.ProxyHeaders.preserveHttp1HeaderCase`,
  ...[
    'listenerPerConnectionBufferLimitBytes',
    'clusterPerConnectionBufferLimitBytes',
    'httpMaxConcurrentStreams',
    'http2InitialStreamWindowSize',
    'http2InitialConnectionWindowSize',
    'httpMergeSlashes',
    'listenerConnectionLimit',
    'globalDownstreamConnectionLimit',
  ].map((f) => `${MESH}.ProxyConfig.ConnectionSettings.${f}`),
]);

function zeroName(values: Readonly<Record<string, number>>): string | undefined {
  return Object.keys(values).find((k) => values[k] === 0);
}

/** The value jsonpb would write for a field, or undefined when it leaves the field out. */
function canonical(field: Field, v: unknown): unknown {
  if (v === undefined || v === null) return undefined;
  switch (field) {
    case 'string':
      return v === '' ? undefined : v;
    case 'bool':
      return v === false ? undefined : v;
    case 'int':
    case 'uint':
    case 'double':
      return v === 0 ? undefined : v;
    case 'strings':
      return Array.isArray(v) && v.length === 0 ? undefined : v;
    case 'stringMap':
      return isMap(v) && Object.keys(v).length === 0 ? undefined : v;
    case 'duration':
    case 'any':
      return v;
  }
  if ('enum' in field) return v === 0 || v === zeroName(field.enum.values) ? undefined : v;
  if ('enumList' in field) return Array.isArray(v) && v.length === 0 ? undefined : v;
  if ('message' in field) return isMap(v) ? withoutDefaults(v, field.message) : v;
  if (!Array.isArray(v)) return v;
  if (v.length === 0) return undefined;
  return v.map((e: unknown) => (isMap(e) ? withoutDefaults(e, field.list) : e));
}

// Recursion follows the schema's messages, so its depth is the schema's, not the input's.
function withoutDefaults(value: Json, spec: MessageSpec): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    const field = spec.fields[k];
    if (field === undefined || WRAPPER_FIELDS.has(`${spec.name}.${k}`)) {
      out[k] = v;
      continue;
    }
    const kept = canonical(field, v);
    if (kept !== undefined) out[k] = kept;
  }
  return out;
}

/** The meshConfig as istiod's /debug/mesh shows it. */
export function meshConfigJson(mesh: MeshConfig): Json {
  return withoutDefaults(mesh, MESH_CONFIG);
}
