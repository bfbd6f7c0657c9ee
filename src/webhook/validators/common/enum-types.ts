// The enums of the Istio APIs the webhook validates, with their full protobuf names and their
// values in number order (each is numbered 0..n-1), taken from istio/api's .proto files. Both the
// decoder check (enum-fields.ts) and the validators read enum values from here. Source:
// istio/api b8f8791d9653b2edc77a071d48887e582cfe84bf (2026-07-21).

/**
 * A protobuf enum: its full name (as istiod's decoder names it in errors) and its value names by
 * number. Every proto3 enum has a value 0, the one an unset field reads as, so there is at least one.
 */
export interface EnumType<T extends string = string> {
  readonly fullName: string;
  readonly values: readonly [T, ...T[]];
}

function protoEnum<const T extends string>(fullName: string, values: readonly [T, ...T[]]): EnumType<T> {
  return { fullName, values };
}

// istio.extensions.v1alpha1
export const EnvValueSource = protoEnum('istio.extensions.v1alpha1.EnvValueSource', ['INLINE', 'HOST']);
export const FailStrategy = protoEnum('istio.extensions.v1alpha1.FailStrategy', [
  'FAIL_CLOSE',
  'FAIL_OPEN',
  'FAIL_RELOAD',
]);
export const PluginPhase = protoEnum('istio.extensions.v1alpha1.PluginPhase', [
  'UNSPECIFIED_PHASE',
  'AUTHN',
  'AUTHZ',
  'STATS',
]);
export const PluginType = protoEnum('istio.extensions.v1alpha1.PluginType', [
  'UNSPECIFIED_PLUGIN_TYPE',
  'HTTP',
  'NETWORK',
]);
export const PullPolicy = protoEnum('istio.extensions.v1alpha1.PullPolicy', [
  'UNSPECIFIED_POLICY',
  'IfNotPresent',
  'Always',
]);
export const TrafficExtension_ExecutionPhase = protoEnum('istio.extensions.v1alpha1.TrafficExtension.ExecutionPhase', [
  'UNSPECIFIED',
  'AUTHN',
  'AUTHZ',
  'STATS',
]);

// istio.networking.v1alpha3
export const CaptureMode = protoEnum('istio.networking.v1alpha3.CaptureMode', ['DEFAULT', 'IPTABLES', 'NONE']);
export const ClientTLSSettings_TLSmode = protoEnum('istio.networking.v1alpha3.ClientTLSSettings.TLSmode', [
  'DISABLE',
  'SIMPLE',
  'MUTUAL',
  'ISTIO_MUTUAL',
]);
export const HTTPSettings_H2UpgradePolicy = protoEnum(
  'istio.networking.v1alpha3.ConnectionPoolSettings.HTTPSettings.H2UpgradePolicy',
  ['DEFAULT', 'DO_NOT_UPGRADE', 'UPGRADE'],
);
export const CorsPolicy_UnmatchedPreflights = protoEnum('istio.networking.v1alpha3.CorsPolicy.UnmatchedPreflights', [
  'UNSPECIFIED',
  'FORWARD',
  'IGNORE',
]);
export const EnvoyFilter_ApplyTo = protoEnum('istio.networking.v1alpha3.EnvoyFilter.ApplyTo', [
  'INVALID',
  'LISTENER',
  'FILTER_CHAIN',
  'NETWORK_FILTER',
  'HTTP_FILTER',
  'ROUTE_CONFIGURATION',
  'VIRTUAL_HOST',
  'HTTP_ROUTE',
  'CLUSTER',
  'EXTENSION_CONFIG',
  'BOOTSTRAP',
  'LISTENER_FILTER',
]);
export const Patch_FilterClass = protoEnum('istio.networking.v1alpha3.EnvoyFilter.Patch.FilterClass', [
  'UNSPECIFIED',
  'AUTHN',
  'AUTHZ',
  'STATS',
]);
export const Patch_Operation = protoEnum('istio.networking.v1alpha3.EnvoyFilter.Patch.Operation', [
  'INVALID',
  'MERGE',
  'ADD',
  'REMOVE',
  'INSERT_BEFORE',
  'INSERT_AFTER',
  'INSERT_FIRST',
  'REPLACE',
  'MERGE_AND_REPLACE_LIST',
]);
export const EnvoyFilter_PatchContext = protoEnum('istio.networking.v1alpha3.EnvoyFilter.PatchContext', [
  'ANY',
  'SIDECAR_INBOUND',
  'SIDECAR_OUTBOUND',
  'GATEWAY',
  'WAYPOINT',
]);
export const RouteMatch_Action = protoEnum(
  'istio.networking.v1alpha3.EnvoyFilter.RouteConfigurationMatch.RouteMatch.Action',
  ['ANY', 'ROUTE', 'REDIRECT', 'DIRECT_RESPONSE'],
);
export const HTTPRedirect_RedirectPortSelection = protoEnum(
  'istio.networking.v1alpha3.HTTPRedirect.RedirectPortSelection',
  ['FROM_PROTOCOL_DEFAULT', 'FROM_REQUEST_PORT'],
);
export const LoadBalancerSettings_SimpleLB = protoEnum('istio.networking.v1alpha3.LoadBalancerSettings.SimpleLB', [
  'UNSPECIFIED',
  'LEAST_CONN',
  'RANDOM',
  'PASSTHROUGH',
  'ROUND_ROBIN',
  'LEAST_REQUEST',
]);
export const OutboundTrafficPolicy_Mode = protoEnum('istio.networking.v1alpha3.OutboundTrafficPolicy.Mode', [
  'REGISTRY_ONLY',
  'ALLOW_ANY',
]);
export const ServerTLSSettings_TLSProtocol = protoEnum('istio.networking.v1alpha3.ServerTLSSettings.TLSProtocol', [
  'TLS_AUTO',
  'TLSV1_0',
  'TLSV1_1',
  'TLSV1_2',
  'TLSV1_3',
]);
export const ServerTLSSettings_TLSmode = protoEnum('istio.networking.v1alpha3.ServerTLSSettings.TLSmode', [
  'PASSTHROUGH',
  'SIMPLE',
  'MUTUAL',
  'AUTO_PASSTHROUGH',
  'ISTIO_MUTUAL',
  'OPTIONAL_MUTUAL',
]);
export const ServiceEntry_Location = protoEnum('istio.networking.v1alpha3.ServiceEntry.Location', [
  'MESH_EXTERNAL',
  'MESH_INTERNAL',
]);
export const ServiceEntry_Resolution = protoEnum('istio.networking.v1alpha3.ServiceEntry.Resolution', [
  'NONE',
  'STATIC',
  'DNS',
  'DNS_ROUND_ROBIN',
  'DYNAMIC_DNS',
]);
export const ProxyProtocol_VERSION = protoEnum('istio.networking.v1alpha3.TrafficPolicy.ProxyProtocol.VERSION', [
  'V1',
  'V2',
]);

// istio.security.v1beta1
export const AuthorizationPolicy_Action = protoEnum('istio.security.v1beta1.AuthorizationPolicy.Action', [
  'ALLOW',
  'DENY',
  'AUDIT',
  'CUSTOM',
]);
export const MutualTLS_Mode = protoEnum('istio.security.v1beta1.PeerAuthentication.MutualTLS.Mode', [
  'UNSET',
  'DISABLE',
  'PERMISSIVE',
  'STRICT',
]);

// istio.telemetry.v1alpha1
export const MetricSelector_IstioMetric = protoEnum('istio.telemetry.v1alpha1.MetricSelector.IstioMetric', [
  'ALL_METRICS',
  'REQUEST_COUNT',
  'REQUEST_DURATION',
  'REQUEST_SIZE',
  'RESPONSE_SIZE',
  'TCP_OPENED_CONNECTIONS',
  'TCP_CLOSED_CONNECTIONS',
  'TCP_SENT_BYTES',
  'TCP_RECEIVED_BYTES',
  'GRPC_REQUEST_MESSAGES',
  'GRPC_RESPONSE_MESSAGES',
]);
export const TagOverride_Operation = protoEnum('istio.telemetry.v1alpha1.MetricsOverrides.TagOverride.Operation', [
  'UPSERT',
  'REMOVE',
]);
export const TelemetryWorkloadMode = protoEnum('istio.telemetry.v1alpha1.WorkloadMode', [
  'CLIENT_AND_SERVER',
  'CLIENT',
  'SERVER',
]);

// istio.type.v1beta1
export const TypeWorkloadMode = protoEnum('istio.type.v1beta1.WorkloadMode', [
  'UNDEFINED',
  'CLIENT',
  'SERVER',
  'CLIENT_AND_SERVER',
]);
