// istiod's built-in meshConfig (pkg/config/mesh DefaultMeshConfig / DefaultProxyConfig), in the
// JSON spelling a mesh file uses. Every layer (shared ConfigMap, then the primary file or
// ConfigMap) is applied on top of this.

import type { MeshConfig, ProxyConfig } from './types';

export const DEFAULT_TRUST_DOMAIN = 'cluster.local';
export const DEFAULT_ROOT_NAMESPACE = 'istio-system';
export const DEFAULT_DISCOVERY_ADDRESS = 'istiod.istio-system.svc:15012';

export function defaultProxyConfig(): ProxyConfig {
  return {
    configPath: './etc/istio/proxy',
    binaryPath: '/usr/local/bin/envoy',
    serviceCluster: 'istio-proxy',
    drainDuration: '45s',
    parentShutdownDuration: '60s',
    terminationDrainDuration: '5s',
    proxyAdminPort: 15000,
    concurrency: 2,
    controlPlaneAuthPolicy: 'MUTUAL_TLS',
    discoveryAddress: DEFAULT_DISCOVERY_ADDRESS,
    tracing: { zipkin: { address: 'zipkin.istio-system:9411' } },
    statNameLength: 189,
    statusPort: 15020,
  };
}

/** A fresh copy each call: callers merge into it. */
export function defaultMeshConfig(): MeshConfig {
  return {
    enableTracing: true,
    accessLogFile: '',
    accessLogEncoding: 'TEXT',
    accessLogFormat: '',
    enableEnvoyAccessLogService: false,
    protocolDetectionTimeout: '0s',
    ingressService: 'istio-ingressgateway',
    ingressControllerMode: 'STRICT',
    ingressClass: 'istio',
    trustDomain: DEFAULT_TRUST_DOMAIN,
    trustDomainAliases: [],
    enableAutoMtls: true,
    outboundTrafficPolicy: { mode: 'ALLOW_ANY' },
    inboundTrafficPolicy: { mode: 'PASSTHROUGH' },
    localityLbSetting: { enabled: true },
    certificates: [],
    defaultConfig: defaultProxyConfig(),
    rootNamespace: DEFAULT_ROOT_NAMESPACE,
    proxyListenPort: 15001,
    proxyInboundListenPort: 15006,
    connectTimeout: '10s',
    defaultServiceExportTo: ['*'],
    defaultVirtualServiceExportTo: ['*'],
    defaultDestinationRuleExportTo: ['*'],
    dnsRefreshRate: '60s',
    thriftConfig: {},
    serviceSettings: [],
    enablePrometheusMerge: true,
    defaultProviders: {},
    extensionProviders: [
      { name: 'prometheus', prometheus: {} },
      { name: 'stackdriver', stackdriver: {} },
      { name: 'envoy', envoyFileAccessLog: { path: '/dev/stdout' } },
    ],
  };
}
