// The decoder's enum check: istiod decodes a spec into its protobuf message before validating it,
// and the decoder refuses an enum written with a name the enum does not have, in any field at any
// depth. This is the map of where the enum fields are, per kind, from istio/api's .proto files
// (messages with no enum field below them are left out), and an iterative walk over it.

import {
  AuthorizationPolicy_Action,
  CaptureMode,
  ClientTLSSettings_TLSmode,
  CorsPolicy_UnmatchedPreflights,
  EnumType,
  EnvValueSource,
  EnvoyFilter_ApplyTo,
  EnvoyFilter_PatchContext,
  FailStrategy,
  HTTPRedirect_RedirectPortSelection,
  HTTPSettings_H2UpgradePolicy,
  LoadBalancerSettings_SimpleLB,
  MetricSelector_IstioMetric,
  MutualTLS_Mode,
  OutboundTrafficPolicy_Mode,
  Patch_FilterClass,
  Patch_Operation,
  PluginPhase,
  PluginType,
  ProxyProtocol_VERSION,
  PullPolicy,
  RouteMatch_Action,
  ServerTLSSettings_TLSmode,
  ServerTLSSettings_TLSProtocol,
  ServiceEntry_Location,
  ServiceEntry_Resolution,
  TagOverride_Operation,
  TelemetryWorkloadMode,
  TrafficExtension_ExecutionPhase,
  TypeWorkloadMode,
} from './enum-types';
import { isObject, JsonObject, quote } from './fields';
import { at, idx, key, Report } from './report';

/** The most negative and most positive enum numbers: protobuf enums are int32. */
const ENUM_NUMBER_MIN = -2147483648;
const ENUM_NUMBER_MAX = 2147483647;

/**
 * Why istiod's JSON decoder refuses `v` for an enum field, or undefined: a value is written by
 * name (exactly, case included) or by number; proto3 enums are open, so any int32 number decodes.
 * Null is unset.
 */
export function enumValueError(type: EnumType, v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string')
    return type.values.includes(v) ? undefined : `unknown value ${quote(v)} for enum ${type.fullName}`;
  if (typeof v === 'number' && Number.isInteger(v) && v >= ENUM_NUMBER_MIN && v <= ENUM_NUMBER_MAX) return undefined;
  return `invalid value ${quote(v)} for enum ${type.fullName}`;
}

/** A field's type: an enum, or the name of a message (without the `istio.` prefix). */
type FieldType = EnumType | string;
/** A field: singular, repeated (`list`) or a map whose values have the type. */
export type FieldShape = FieldType | { list: FieldType } | { map: FieldType };

const list = (t: FieldType): FieldShape => ({ list: t });
const map = (t: FieldType): FieldShape => ({ map: t });

/** Messages by name, each with its fields (JSON names) that are enums or lead to one. */
export const ENUM_FIELD_MESSAGES: Readonly<Record<string, Readonly<Record<string, FieldShape>>>> = {
  'extensions.v1alpha1.EnvVar': { valueFrom: EnvValueSource },
  'extensions.v1alpha1.TrafficExtension': {
    phase: TrafficExtension_ExecutionPhase,
    match: list('extensions.v1alpha1.TrafficSelector'),
    wasm: 'extensions.v1alpha1.WasmConfig',
  },
  'extensions.v1alpha1.TrafficSelector': { mode: TypeWorkloadMode },
  'extensions.v1alpha1.VmConfig': { env: list('extensions.v1alpha1.EnvVar') },
  'extensions.v1alpha1.WasmConfig': {
    imagePullPolicy: PullPolicy,
    failStrategy: FailStrategy,
    vmConfig: 'extensions.v1alpha1.VmConfig',
    type: PluginType,
  },
  'extensions.v1alpha1.WasmPlugin': {
    imagePullPolicy: PullPolicy,
    phase: PluginPhase,
    failStrategy: FailStrategy,
    vmConfig: 'extensions.v1alpha1.VmConfig',
    match: list('extensions.v1alpha1.WasmPlugin.TrafficSelector'),
    type: PluginType,
  },
  'extensions.v1alpha1.WasmPlugin.TrafficSelector': { mode: TypeWorkloadMode },
  'networking.v1alpha3.ClientTLSSettings': { mode: ClientTLSSettings_TLSmode },
  'networking.v1alpha3.ConnectionPoolSettings': { http: 'networking.v1alpha3.ConnectionPoolSettings.HTTPSettings' },
  'networking.v1alpha3.ConnectionPoolSettings.HTTPSettings': { h2UpgradePolicy: HTTPSettings_H2UpgradePolicy },
  'networking.v1alpha3.CorsPolicy': { unmatchedPreflights: CorsPolicy_UnmatchedPreflights },
  'networking.v1alpha3.DestinationRule': {
    trafficPolicy: 'networking.v1alpha3.TrafficPolicy',
    subsets: list('networking.v1alpha3.Subset'),
  },
  'networking.v1alpha3.EnvoyFilter': { configPatches: list('networking.v1alpha3.EnvoyFilter.EnvoyConfigObjectPatch') },
  'networking.v1alpha3.EnvoyFilter.EnvoyConfigObjectMatch': {
    context: EnvoyFilter_PatchContext,
    routeConfiguration: 'networking.v1alpha3.EnvoyFilter.RouteConfigurationMatch',
  },
  'networking.v1alpha3.EnvoyFilter.EnvoyConfigObjectPatch': {
    applyTo: EnvoyFilter_ApplyTo,
    match: 'networking.v1alpha3.EnvoyFilter.EnvoyConfigObjectMatch',
    patch: 'networking.v1alpha3.EnvoyFilter.Patch',
  },
  'networking.v1alpha3.EnvoyFilter.Patch': { operation: Patch_Operation, filterClass: Patch_FilterClass },
  'networking.v1alpha3.EnvoyFilter.RouteConfigurationMatch': {
    vhost: 'networking.v1alpha3.EnvoyFilter.RouteConfigurationMatch.VirtualHostMatch',
  },
  'networking.v1alpha3.EnvoyFilter.RouteConfigurationMatch.RouteMatch': { action: RouteMatch_Action },
  'networking.v1alpha3.EnvoyFilter.RouteConfigurationMatch.VirtualHostMatch': {
    route: 'networking.v1alpha3.EnvoyFilter.RouteConfigurationMatch.RouteMatch',
  },
  'networking.v1alpha3.Gateway': { servers: list('networking.v1alpha3.Server') },
  'networking.v1alpha3.HTTPRedirect': { derivePort: HTTPRedirect_RedirectPortSelection },
  'networking.v1alpha3.HTTPRoute': {
    redirect: 'networking.v1alpha3.HTTPRedirect',
    corsPolicy: 'networking.v1alpha3.CorsPolicy',
  },
  'networking.v1alpha3.IstioEgressListener': { captureMode: CaptureMode },
  'networking.v1alpha3.IstioIngressListener': {
    captureMode: CaptureMode,
    tls: 'networking.v1alpha3.ServerTLSSettings',
    connectionPool: 'networking.v1alpha3.ConnectionPoolSettings',
  },
  'networking.v1alpha3.LoadBalancerSettings': { simple: LoadBalancerSettings_SimpleLB },
  'networking.v1alpha3.OutboundTrafficPolicy': { mode: OutboundTrafficPolicy_Mode },
  'networking.v1alpha3.Server': { tls: 'networking.v1alpha3.ServerTLSSettings' },
  'networking.v1alpha3.ServerTLSSettings': {
    mode: ServerTLSSettings_TLSmode,
    minProtocolVersion: ServerTLSSettings_TLSProtocol,
    maxProtocolVersion: ServerTLSSettings_TLSProtocol,
  },
  'networking.v1alpha3.ServiceEntry': { location: ServiceEntry_Location, resolution: ServiceEntry_Resolution },
  'networking.v1alpha3.Sidecar': {
    ingress: list('networking.v1alpha3.IstioIngressListener'),
    egress: list('networking.v1alpha3.IstioEgressListener'),
    inboundConnectionPool: 'networking.v1alpha3.ConnectionPoolSettings',
    outboundTrafficPolicy: 'networking.v1alpha3.OutboundTrafficPolicy',
  },
  'networking.v1alpha3.Subset': { trafficPolicy: 'networking.v1alpha3.TrafficPolicy' },
  'networking.v1alpha3.TrafficPolicy': {
    loadBalancer: 'networking.v1alpha3.LoadBalancerSettings',
    connectionPool: 'networking.v1alpha3.ConnectionPoolSettings',
    tls: 'networking.v1alpha3.ClientTLSSettings',
    portLevelSettings: list('networking.v1alpha3.TrafficPolicy.PortTrafficPolicy'),
    proxyProtocol: 'networking.v1alpha3.TrafficPolicy.ProxyProtocol',
  },
  'networking.v1alpha3.TrafficPolicy.PortTrafficPolicy': {
    loadBalancer: 'networking.v1alpha3.LoadBalancerSettings',
    connectionPool: 'networking.v1alpha3.ConnectionPoolSettings',
    tls: 'networking.v1alpha3.ClientTLSSettings',
  },
  'networking.v1alpha3.TrafficPolicy.ProxyProtocol': { version: ProxyProtocol_VERSION },
  'networking.v1alpha3.VirtualService': { http: list('networking.v1alpha3.HTTPRoute') },
  'networking.v1alpha3.WorkloadEntry': {},
  'networking.v1alpha3.WorkloadGroup': {},
  'networking.v1beta1.ProxyConfig': {},
  'security.v1beta1.AuthorizationPolicy': { action: AuthorizationPolicy_Action },
  'security.v1beta1.PeerAuthentication': {
    mtls: 'security.v1beta1.PeerAuthentication.MutualTLS',
    portLevelMtls: map('security.v1beta1.PeerAuthentication.MutualTLS'),
  },
  'security.v1beta1.PeerAuthentication.MutualTLS': { mode: MutualTLS_Mode },
  'security.v1beta1.RequestAuthentication': {},
  'telemetry.v1alpha1.AccessLogging': { match: 'telemetry.v1alpha1.AccessLogging.LogSelector' },
  'telemetry.v1alpha1.AccessLogging.LogSelector': { mode: TelemetryWorkloadMode },
  'telemetry.v1alpha1.MetricSelector': { metric: MetricSelector_IstioMetric, mode: TelemetryWorkloadMode },
  'telemetry.v1alpha1.Metrics': { overrides: list('telemetry.v1alpha1.MetricsOverrides') },
  'telemetry.v1alpha1.MetricsOverrides': {
    match: 'telemetry.v1alpha1.MetricSelector',
    tagOverrides: map('telemetry.v1alpha1.MetricsOverrides.TagOverride'),
  },
  'telemetry.v1alpha1.MetricsOverrides.TagOverride': { operation: TagOverride_Operation },
  'telemetry.v1alpha1.Telemetry': {
    tracing: list('telemetry.v1alpha1.Tracing'),
    metrics: list('telemetry.v1alpha1.Metrics'),
    accessLogging: list('telemetry.v1alpha1.AccessLogging'),
  },
  'telemetry.v1alpha1.Tracing': { match: 'telemetry.v1alpha1.Tracing.TracingSelector' },
  'telemetry.v1alpha1.Tracing.TracingSelector': { mode: TelemetryWorkloadMode },
};

/** The message each validated kind's spec decodes into. */
export const KIND_MESSAGES: Readonly<Record<string, string>> = {
  AuthorizationPolicy: 'security.v1beta1.AuthorizationPolicy',
  PeerAuthentication: 'security.v1beta1.PeerAuthentication',
  RequestAuthentication: 'security.v1beta1.RequestAuthentication',
  VirtualService: 'networking.v1alpha3.VirtualService',
  DestinationRule: 'networking.v1alpha3.DestinationRule',
  Gateway: 'networking.v1alpha3.Gateway',
  ServiceEntry: 'networking.v1alpha3.ServiceEntry',
  Sidecar: 'networking.v1alpha3.Sidecar',
  WorkloadEntry: 'networking.v1alpha3.WorkloadEntry',
  WorkloadGroup: 'networking.v1alpha3.WorkloadGroup',
  EnvoyFilter: 'networking.v1alpha3.EnvoyFilter',
  ProxyConfig: 'networking.v1beta1.ProxyConfig',
  Telemetry: 'telemetry.v1alpha1.Telemetry',
  WasmPlugin: 'extensions.v1alpha1.WasmPlugin',
  TrafficExtension: 'extensions.v1alpha1.TrafficExtension',
};

/** `loadBalancer` -> `load_balancer`: the decoder accepts a field by its proto name too. */
function protoName(jsonName: string): string {
  return jsonName.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * Each message's enum-bearing fields under every name the decoder accepts (JSON name, then proto
 * name when it differs), worked out once per message instead of on every value the walk visits.
 */
const fieldNamesCache = new Map<string, readonly (readonly [string, FieldShape])[]>();
function fieldNames(message: string): readonly (readonly [string, FieldShape])[] {
  let names = fieldNamesCache.get(message);
  if (names === undefined) {
    names = Object.entries(ENUM_FIELD_MESSAGES[message] ?? {}).flatMap(([jsonName, shape]) =>
      [...new Set([jsonName, protoName(jsonName)])].map((name) => [name, shape] as const),
    );
    fieldNamesCache.set(message, names);
  }
  return names;
}

function isEnum(t: FieldType): t is EnumType {
  return typeof t !== 'string';
}

/**
 * Where a value sits: its parent and the step from it (a field name, then a list index or a map
 * key). The path text is only built for an error; most walks report none.
 */
interface Place {
  parent: Place | undefined;
  /** The field name, or 'spec' at the root. */
  name: string;
  /** A list index or a map key under the field, if any. */
  item?: number | string;
}

function pathOf(place: Place): string {
  const steps: Place[] = [];
  for (let p: Place | undefined = place; p !== undefined; p = p.parent) steps.push(p);
  let path = '';
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i] as Place;
    path = step.parent === undefined ? step.name : at(path, step.name);
    if (typeof step.item === 'number') path = idx(path, step.item);
    else if (typeof step.item === 'string') path = key(path, step.item);
  }
  return path;
}

interface Pending {
  value: unknown;
  message: string;
  place: Place;
}

function visit(r: Report, queue: Pending[], type: FieldType, v: unknown, place: Place): void {
  if (v === undefined || v === null) return;
  if (!isEnum(type)) {
    queue.push({ value: v, message: type, place });
    return;
  }
  const err = enumValueError(type, v);
  if (err) r.error(pathOf(place), err);
}

/**
 * Reports every enum value in `spec` that istiod's decoder would refuse, at its path. The walk
 * follows the (acyclic) message map with an explicit queue, so its depth is that of the map and
 * its work is linear in the values it visits; values of the wrong type are left to the validators.
 */
export function checkEnumFields(r: Report, kind: string, spec: JsonObject): void {
  const root = KIND_MESSAGES[kind];
  if (root === undefined) return;
  const queue: Pending[] = [{ value: spec, message: root, place: { parent: undefined, name: 'spec' } }];
  // Indexing (not for...of) visits what is pushed to the queue during the walk too.
  for (let q = 0; q < queue.length; q++) {
    const { value, message, place: parent } = queue[q] as Pending;
    if (!isObject(value)) continue;
    for (const [name, shape] of fieldNames(message)) {
      if (!Object.prototype.hasOwnProperty.call(value, name)) continue;
      const v = value[name];
      if (typeof shape === 'object' && 'list' in shape) {
        if (Array.isArray(v)) v.forEach((item, i) => visit(r, queue, shape.list, item, { parent, name, item: i }));
      } else if (typeof shape === 'object' && 'map' in shape) {
        if (isObject(v))
          for (const [k, item] of Object.entries(v)) visit(r, queue, shape.map, item, { parent, name, item: k });
      } else visit(r, queue, shape, v, { parent, name });
    }
  }
}
