// The kinds istiod validates, found by group and kind with the version ignored (a newer API
// version of a known kind must not be rejected by an older control plane).

import { validateAuthorizationPolicy } from './authorization-policy';
import { checkEnumFields } from './common/enum-fields';
import { isObject, JsonObject } from './common/fields';
import { Report, ValidationResult } from './common/report';
import { validateDestinationRule } from './destination-rule';
import { validateEnvoyFilter } from './envoy-filter';
import { validateGateway } from './gateway';
import { checkMetadata, readMetadata } from './metadata';
import { validatePeerAuthentication } from './peer-authentication';
import { validateProxyConfig } from './proxy-config';
import { validateRequestAuthentication } from './request-authentication';
import { validateServiceEntry } from './service-entry';
import { validateSidecar } from './sidecar';
import { validateTelemetry } from './telemetry';
import { validateTrafficExtension } from './traffic-extension';
import type { ObjectMeta, SpecValidator } from './types';
import { validateVirtualService } from './virtual-service';
import { validateWasmPlugin } from './wasm-plugin';
import { validateWorkloadEntry } from './workload-entry';
import { validateWorkloadGroup } from './workload-group';

export interface KindSchema {
  group: string;
  kind: string;
  /** API versions Istio serves; informational, lookups ignore the version. */
  versions: readonly string[];
  validate: SpecValidator;
}

const NETWORKING = ['v1', 'v1beta1', 'v1alpha3'] as const;
const SECURITY = ['v1', 'v1beta1'] as const;
/** Gateway API kinds: istiod accepts them with only the metadata checks. */
const metadataOnly: SpecValidator = () => undefined;

const SCHEMAS: readonly KindSchema[] = [
  {
    group: 'security.istio.io',
    kind: 'AuthorizationPolicy',
    versions: SECURITY,
    validate: validateAuthorizationPolicy,
  },
  { group: 'security.istio.io', kind: 'PeerAuthentication', versions: SECURITY, validate: validatePeerAuthentication },
  {
    group: 'security.istio.io',
    kind: 'RequestAuthentication',
    versions: SECURITY,
    validate: validateRequestAuthentication,
  },
  { group: 'networking.istio.io', kind: 'VirtualService', versions: NETWORKING, validate: validateVirtualService },
  { group: 'networking.istio.io', kind: 'DestinationRule', versions: NETWORKING, validate: validateDestinationRule },
  { group: 'networking.istio.io', kind: 'Gateway', versions: NETWORKING, validate: validateGateway },
  { group: 'networking.istio.io', kind: 'ServiceEntry', versions: NETWORKING, validate: validateServiceEntry },
  { group: 'networking.istio.io', kind: 'Sidecar', versions: NETWORKING, validate: validateSidecar },
  { group: 'networking.istio.io', kind: 'WorkloadEntry', versions: NETWORKING, validate: validateWorkloadEntry },
  { group: 'networking.istio.io', kind: 'WorkloadGroup', versions: NETWORKING, validate: validateWorkloadGroup },
  { group: 'networking.istio.io', kind: 'EnvoyFilter', versions: ['v1alpha3'], validate: validateEnvoyFilter },
  { group: 'networking.istio.io', kind: 'ProxyConfig', versions: ['v1beta1'], validate: validateProxyConfig },
  { group: 'telemetry.istio.io', kind: 'Telemetry', versions: ['v1', 'v1alpha1'], validate: validateTelemetry },
  { group: 'extensions.istio.io', kind: 'WasmPlugin', versions: ['v1alpha1'], validate: validateWasmPlugin },
  {
    group: 'extensions.istio.io',
    kind: 'TrafficExtension',
    versions: ['v1alpha1'],
    validate: validateTrafficExtension,
  },
  ...[
    'Gateway',
    'GatewayClass',
    'HTTPRoute',
    'GRPCRoute',
    'TCPRoute',
    'TLSRoute',
    'UDPRoute',
    'ReferenceGrant',
    'BackendTLSPolicy',
  ].map((kind): KindSchema => ({
    group: 'gateway.networking.k8s.io',
    kind,
    versions: ['v1', 'v1beta1', 'v1alpha2', 'v1alpha3'],
    validate: metadataOnly,
  })),
];

const BY_GROUP_KIND = new Map(SCHEMAS.map((s) => [`${s.group}/${s.kind}`, s]));

export function findSchema(group: string, kind: string): KindSchema | undefined {
  return BY_GROUP_KIND.get(`${group}/${kind}`);
}

export function allSchemas(): readonly KindSchema[] {
  return SCHEMAS;
}

/** Splits "group/version" (or a bare core "v1") into its parts. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Top-level keys a Kubernetes object of these kinds may have. */
export const TOP_LEVEL_KEYS: ReadonlySet<string> = new Set(['apiVersion', 'kind', 'metadata', 'spec', 'status']);

export type ConfigVerdict =
  /** `decodeError`: the errors are the decoder's (istiod denies with "error decoding configuration: ..."). */
  | { outcome: 'validated'; schema: KindSchema; meta: ObjectMeta; result: ValidationResult; decodeError?: boolean }
  | { outcome: 'unknown-kind'; gvk: string; message: string }
  | { outcome: 'not-an-object'; message: string };

/** The group/version/kind as Go prints a GroupVersionKind. */
function gvkText(group: string, version: string, kind: string): string {
  return `${group}/${version}, Kind=${kind}`;
}

/**
 * Validates one object as istiod's webhook does: find the schema by group and kind, check the
 * metadata rules, then the spec. Top-level keys are checked by the caller (istiod checks them
 * only after the spec passes).
 */
export function validateConfig(object: unknown): ConfigVerdict {
  if (!isObject(object))
    return { outcome: 'not-an-object', message: 'cannot decode configuration: expected a JSON object' };
  const apiVersion = typeof object['apiVersion'] === 'string' ? object['apiVersion'] : '';
  const kind = typeof object['kind'] === 'string' ? object['kind'] : '';
  const { group, version } = parseApiVersion(apiVersion);
  const schema = findSchema(group, kind);
  if (!schema) {
    const gvk = gvkText(group, version, kind);
    return { outcome: 'unknown-kind', gvk, message: `unrecognized type ${gvk}` };
  }
  const r = new Report();
  const meta = readMetadata(r, object['metadata']);
  const rawSpec = object['spec'];
  let spec: JsonObject = {};
  if (isObject(rawSpec)) spec = rawSpec;
  else if (rawSpec !== undefined && rawSpec !== null) r.error('spec', 'must be an object');
  // istiod decodes the spec (refusing unknown enum names) before it validates anything.
  let decodeError = false;
  if (r.ok) {
    checkEnumFields(r, schema.kind, spec);
    decodeError = r.errorCount > 0;
  }
  if (r.ok && checkMetadata(r, schema.kind, meta, spec)) schema.validate(r, spec, meta);
  // istiod drops warnings when there is an error.
  const result: ValidationResult = r.ok ? r.result() : { errors: r.result().errors, warnings: [] };
  return decodeError
    ? { outcome: 'validated', schema, meta, result, decodeError }
    : { outcome: 'validated', schema, meta, result };
}

/** Top-level keys other than apiVersion, kind, metadata, spec and status. */
export function unknownTopLevelKeys(object: JsonObject): string[] {
  return Object.keys(object).filter((k) => !TOP_LEVEL_KEYS.has(k));
}
