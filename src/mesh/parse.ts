// meshConfig text (YAML or JSON) -> a plain overlay object, with the types of known fields checked.
//
// Unknown fields: istiod decodes with protomarshal.ApplyYAML, which retries with unknown fields
// allowed, so a mesh config with a field this version does not know (or a typo) still loads.
// We match that: unknown fields are accepted and kept verbatim (so /debug/mesh shows them), and
// only the types of fields we know are checked. A known field with the wrong type is an error,
// as it is for istiod's JSON decoder.

import { LineCounter, parseDocument } from 'yaml';
import { parseDuration } from '../config/duration';
import type { MeshConfigIssue } from './types';

/** A meshConfig larger than this is refused (a ConfigMap value is at most 1 MiB anyway). */
export const MAX_MESH_CONFIG_BYTES = 1024 * 1024;

export class MeshConfigError extends Error {
  constructor(
    readonly source: string,
    readonly issues: readonly MeshConfigIssue[],
  ) {
    super(`${source}: ${issues.map((i) => (i.field ? `${i.field}: ${i.message}` : i.message)).join('; ')}`);
    this.name = 'MeshConfigError';
  }
}

export type MeshOverlay = Record<string, unknown>;

type FieldType = 'string' | 'bool' | 'port' | 'int' | 'duration' | 'strings' | 'object' | 'objects' | 'stringMap';

const TOP_LEVEL: Record<string, FieldType> = {
  trustDomain: 'string',
  trustDomainAliases: 'strings',
  rootNamespace: 'string',
  defaultConfig: 'object',
  caCertificates: 'objects',
  discoverySelectors: 'objects',
  extensionProviders: 'objects',
  defaultProviders: 'object',
  meshMTLS: 'object',
  tlsDefaults: 'object',
  ca: 'object',
  outboundTrafficPolicy: 'object',
  inboundTrafficPolicy: 'object',
  localityLbSetting: 'object',
  serviceSettings: 'objects',
  serviceScopeConfigs: 'objects',
  certificates: 'objects',
  enableTracing: 'bool',
  enableAutoMtls: 'bool',
  enablePrometheusMerge: 'bool',
  enableEnvoyAccessLogService: 'bool',
  accessLogFile: 'string',
  accessLogFormat: 'string',
  accessLogEncoding: 'string',
  ingressService: 'string',
  ingressClass: 'string',
  ingressControllerMode: 'string',
  proxyListenPort: 'port',
  proxyInboundListenPort: 'port',
  proxyHttpPort: 'port',
  connectTimeout: 'duration',
  protocolDetectionTimeout: 'duration',
  dnsRefreshRate: 'duration',
  defaultServiceExportTo: 'strings',
  defaultVirtualServiceExportTo: 'strings',
  defaultDestinationRuleExportTo: 'strings',
};

const PROXY_CONFIG: Record<string, FieldType> = {
  discoveryAddress: 'string',
  configPath: 'string',
  binaryPath: 'string',
  serviceCluster: 'string',
  controlPlaneAuthPolicy: 'string',
  proxyMetadata: 'stringMap',
  proxyAdminPort: 'port',
  statusPort: 'port',
  concurrency: 'int',
  statNameLength: 'int',
  drainDuration: 'duration',
  parentShutdownDuration: 'duration',
  terminationDrainDuration: 'duration',
  tracing: 'object',
};

const LABEL_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `${typeof v} ${JSON.stringify(v)}`;
}

function checkType(field: string, type: FieldType, v: unknown, issues: MeshConfigIssue[]): void {
  const fail = (want: string): void => {
    issues.push({ field, message: `expected ${want}, got ${typeName(v)}` });
  };
  switch (type) {
    case 'string':
      if (typeof v !== 'string') fail('a string');
      return;
    case 'bool':
      if (typeof v !== 'boolean') fail('true or false');
      return;
    case 'int':
      if (!Number.isInteger(v)) fail('an integer');
      return;
    case 'port':
      if (!Number.isInteger(v)) fail('a port number');
      return;
    case 'duration':
      if (typeof v !== 'string') {
        fail('a duration such as "10s"');
        return;
      }
      try {
        parseDuration(v);
      } catch (e) {
        issues.push({ field, message: (e as Error).message });
      }
      return;
    case 'strings':
      if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) fail('a list of strings');
      return;
    case 'object':
      if (!isMap(v)) fail('a mapping');
      return;
    case 'objects':
      if (!Array.isArray(v)) {
        fail('a list');
        return;
      }
      v.forEach((item, i) => {
        if (!isMap(item))
          issues.push({ field: `${field}[${i}]`, message: `expected a mapping, got ${typeName(item)}` });
      });
      return;
    case 'stringMap':
      if (!isMap(v)) {
        fail('a mapping of strings');
        return;
      }
      for (const [k, s] of Object.entries(v)) {
        if (typeof s !== 'string')
          issues.push({
            field: `${field}.${k}`,
            message: `expected a string (quote values like "true"), got ${typeName(s)}`,
          });
      }
      return;
  }
}

function checkFields(
  prefix: string,
  table: Record<string, FieldType>,
  obj: Record<string, unknown>,
  issues: MeshConfigIssue[],
): void {
  for (const [key, value] of Object.entries(obj)) {
    const type = table[key];
    // null means "not set", as in istiod's JSON decoding.
    if (type && value !== null) checkType(`${prefix}${key}`, type, value, issues);
  }
}

function checkLabelSelectors(selectors: unknown[], issues: MeshConfigIssue[]): void {
  selectors.forEach((sel, i) => {
    if (!isMap(sel)) return;
    const field = `discoverySelectors[${i}]`;
    if (sel['matchLabels'] !== undefined) checkType(`${field}.matchLabels`, 'stringMap', sel['matchLabels'], issues);
    const exprs = sel['matchExpressions'];
    if (exprs === undefined) return;
    if (!Array.isArray(exprs))
      return void issues.push({ field: `${field}.matchExpressions`, message: 'expected a list' });
    exprs.forEach((e, j) => {
      const f = `${field}.matchExpressions[${j}]`;
      if (!isMap(e) || typeof e['key'] !== 'string')
        return void issues.push({ field: f, message: 'expected a mapping with a string key' });
      if (!LABEL_OPERATORS.includes(e['operator'] as string)) {
        issues.push({
          field: `${f}.operator`,
          message: `must be one of ${LABEL_OPERATORS.join(', ')}, got ${typeName(e['operator'])}`,
        });
      }
      if (e['values'] !== undefined) checkType(`${f}.values`, 'strings', e['values'], issues);
    });
  });
}

/** Parses one meshConfig layer. Empty text is an empty overlay (all defaults). */
export function parseMeshConfig(text: string, source: string): MeshOverlay {
  if (Buffer.byteLength(text) > MAX_MESH_CONFIG_BYTES) {
    throw new MeshConfigError(source, [{ field: '', message: `larger than ${MAX_MESH_CONFIG_BYTES} bytes` }]);
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const err = doc.errors[0];
  if (err)
    throw new MeshConfigError(source, [
      { field: '', message: `line ${lines.linePos(err.pos[0]).line}: ${err.message}` },
    ]);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    throw new MeshConfigError(source, [{ field: '', message: (e as Error).message }]);
  }
  if (value === null || value === undefined) return {};
  if (!isMap(value))
    throw new MeshConfigError(source, [
      { field: '', message: `expected a mapping of meshConfig fields, got ${typeName(value)}` },
    ]);

  const issues: MeshConfigIssue[] = [];
  checkFields('', TOP_LEVEL, value, issues);
  if (isMap(value['defaultConfig'])) checkFields('defaultConfig.', PROXY_CONFIG, value['defaultConfig'], issues);
  if (Array.isArray(value['discoverySelectors'])) checkLabelSelectors(value['discoverySelectors'], issues);
  if (Array.isArray(value['extensionProviders'])) {
    value['extensionProviders'].forEach((p, i) => {
      if (isMap(p) && (typeof p['name'] !== 'string' || p['name'] === '')) {
        issues.push({ field: `extensionProviders[${i}].name`, message: 'is required: layers merge providers by name' });
      }
    });
  }
  if (Array.isArray(value['caCertificates'])) {
    value['caCertificates'].forEach((c, i) => {
      if (!isMap(c)) return;
      for (const k of ['pem', 'spiffeBundleUrl'])
        if (c[k] !== undefined) checkType(`caCertificates[${i}].${k}`, 'string', c[k], issues);
      for (const k of ['certSigners', 'trustDomains'])
        if (c[k] !== undefined) checkType(`caCertificates[${i}].${k}`, 'strings', c[k], issues);
    });
  }
  if (issues.length > 0) throw new MeshConfigError(source, issues);
  return value;
}
