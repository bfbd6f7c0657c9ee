// The shape of meshConfig (istio.mesh.v1alpha1.MeshConfig and ProxyConfig in istio/api
// mesh/v1alpha1/config.proto and proxy.proto), written out by hand in the JSON names a mesh file
// uses. decode.ts walks a layer against it: field types, enum names (istiod's decoder refuses an
// unknown name), and which fields this version does not know. Messages from other packages
// (networking types such as LocalityLoadBalancerSetting or OutlierDetection) are `any`: checked to
// be mappings, not walked, except for the two enums a mesh file can set inside them (TLS mode and
// h2UpgradePolicy).

import { EXTENSION_PROVIDER } from './schema-providers';
import { PROXY_CONFIG } from './schema-proxy';
import { CLIENT_TLS, CONNECTION_POOL, e, enumOf, LABEL_SELECTOR, list, m, MESH, msg } from './schema-types';

export type { EnumSpec, Field, MessageSpec } from './schema-types';
export { EXTENSION_PROVIDER_KINDS } from './schema-providers';

const TLS_CONFIG = msg(`${MESH}.MeshConfig.TLSConfig`, {
  minProtocolVersion: e(enumOf(`${MESH}.MeshConfig.TLSConfig.TLSProtocol`, 'TLS_AUTO', 'TLSV1_2', 'TLSV1_3')),
  ecdhCurves: 'strings',
  cipherSuites: 'strings',
});

const VISIBILITY = enumOf(
  `${MESH}.ServiceEntryVisibility.Visibility`,
  'VISIBILITY_UNSPECIFIED',
  'NONE',
  'NAMESPACE',
  'PUBLIC',
);

export const MESH_CONFIG = msg(`${MESH}.MeshConfig`, {
  proxyListenPort: 'int',
  proxyInboundListenPort: 'int',
  proxyHttpPort: 'int',
  connectTimeout: 'duration',
  hboneIdleTimeout: 'duration',
  protocolDetectionTimeout: 'duration',
  tcpKeepalive: 'any',
  ingressClass: 'string',
  ingressService: 'string',
  ingressControllerMode: e(
    enumOf(`${MESH}.MeshConfig.IngressControllerMode`, 'UNSPECIFIED', 'OFF', 'DEFAULT', 'STRICT'),
  ),
  ingressSelector: 'string',
  enableTracing: 'bool',
  accessLogFile: 'string',
  accessLogFormat: 'string',
  accessLogEncoding: e(enumOf(`${MESH}.MeshConfig.AccessLogEncoding`, 'TEXT', 'JSON')),
  enableEnvoyAccessLogService: 'bool',
  disableEnvoyListenerLog: 'bool',
  defaultConfig: m(PROXY_CONFIG),
  outboundTrafficPolicy: m(
    msg(`${MESH}.MeshConfig.OutboundTrafficPolicy`, {
      mode: e(
        enumOf(`${MESH}.MeshConfig.OutboundTrafficPolicy.Mode`, 'REGISTRY_ONLY', 'ALLOW_ANY', [
          'ALLOW_ANY_DYNAMIC_DNS',
          3,
        ]),
      ),
      tls: m(CLIENT_TLS),
    }),
  ),
  inboundTrafficPolicy: m(
    msg(`${MESH}.MeshConfig.InboundTrafficPolicy`, {
      mode: e(enumOf(`${MESH}.MeshConfig.InboundTrafficPolicy.Mode`, 'PASSTHROUGH', 'LOCALHOST')),
    }),
  ),
  configSources: list(
    msg(`${MESH}.ConfigSource`, {
      address: 'string',
      tlsSettings: m(CLIENT_TLS),
      subscribedResources: { enumList: enumOf(`${MESH}.Resource`, 'SERVICE_REGISTRY') },
    }),
  ),
  enableAutoMtls: 'bool',
  trustDomain: 'string',
  trustDomainAliases: 'strings',
  caCertificates: list(
    msg(`${MESH}.MeshConfig.CertificateData`, {
      pem: 'string',
      spiffeBundleUrl: 'string',
      certSigners: 'strings',
      trustDomains: 'strings',
    }),
  ),
  defaultServiceExportTo: 'strings',
  defaultVirtualServiceExportTo: 'strings',
  defaultDestinationRuleExportTo: 'strings',
  rootNamespace: 'string',
  localityLbSetting: 'any',
  zoneAwareLbSetting: 'any',
  dnsRefreshRate: 'duration',
  h2UpgradePolicy: e(enumOf(`${MESH}.MeshConfig.H2UpgradePolicy`, 'DO_NOT_UPGRADE', 'UPGRADE')),
  inboundClusterStatName: 'string',
  outboundClusterStatName: 'string',
  certificates: list(msg(`${MESH}.Certificate`, { secretName: 'string', dnsNames: 'strings' })),
  serviceSettings: list(
    msg(`${MESH}.MeshConfig.ServiceSettings`, {
      settings: m(msg(`${MESH}.MeshConfig.ServiceSettings.Settings`, { clusterLocal: 'bool' })),
      hosts: 'strings',
    }),
  ),
  serviceScopeConfigs: list(
    msg(`${MESH}.MeshConfig.ServiceScopeConfigs`, {
      namespaceSelector: m(LABEL_SELECTOR),
      servicesSelector: m(LABEL_SELECTOR),
      scope: e(enumOf(`${MESH}.MeshConfig.ServiceScopeConfigs.Scope`, 'LOCAL', 'GLOBAL')),
    }),
  ),
  enablePrometheusMerge: 'bool',
  verifyCertificateAtClient: 'bool',
  ca: m(
    msg(`${MESH}.MeshConfig.CA`, {
      address: 'string',
      tlsSettings: m(CLIENT_TLS),
      requestTimeout: 'duration',
      istiodSide: 'bool',
    }),
  ),
  extensionProviders: list(EXTENSION_PROVIDER),
  defaultProviders: m(
    msg(`${MESH}.MeshConfig.DefaultProviders`, { tracing: 'strings', metrics: 'strings', accessLogging: 'strings' }),
  ),
  discoverySelectors: list(LABEL_SELECTOR),
  pathNormalization: m(
    msg(`${MESH}.MeshConfig.ProxyPathNormalization`, {
      normalization: e(
        enumOf(
          `${MESH}.MeshConfig.ProxyPathNormalization.NormalizationType`,
          'DEFAULT',
          'NONE',
          'BASE',
          'MERGE_SLASHES',
          'DECODE_AND_MERGE_SLASHES',
        ),
      ),
    }),
  ),
  defaultHttpRetryPolicy: 'any',
  defaultInboundHttpRetryPolicy: 'any',
  meshMTLS: m(TLS_CONFIG),
  tlsDefaults: m(TLS_CONFIG),
  defaultTrafficPolicy: m(
    msg(`${MESH}.MeshConfig.DefaultTrafficPolicy`, { connectionPool: m(CONNECTION_POOL), outlierDetection: 'any' }),
  ),
  serviceEntryVisibility: m(
    msg(`${MESH}.ServiceEntryVisibility`, {
      defaultVisibility: e(VISIBILITY),
      applyToSidecars: 'bool',
      policies: list(
        msg(`${MESH}.ServiceEntryVisibility.Policy`, {
          visibility: e(VISIBILITY),
          matchingRules: list(
            msg(`${MESH}.ServiceEntryVisibility.MatchRule`, { namespaceSelector: m(LABEL_SELECTOR) }),
          ),
        }),
      ),
    }),
  ),
});
