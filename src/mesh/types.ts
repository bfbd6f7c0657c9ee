// meshConfig: the fields istiod-ts reads (istio.mesh.v1alpha1.MeshConfig, JSON/YAML names).
// Fields we do not read are kept as-is so /debug/mesh shows the whole effective config.

import type { LabelSelector } from '../store/selector';

export interface CertificateData {
  pem?: string;
  spiffeBundleUrl?: string;
  certSigners?: string[];
  trustDomains?: string[];
}

export interface ProxyConfig {
  discoveryAddress?: string;
  proxyMetadata?: Record<string, string>;
  [field: string]: unknown;
}

export interface MeshConfig {
  trustDomain: string;
  trustDomainAliases: string[];
  rootNamespace: string;
  defaultConfig: ProxyConfig;
  caCertificates?: CertificateData[];
  discoverySelectors?: LabelSelector[];
  [field: string]: unknown;
}

/** The effective meshConfig, kept current; subscribers hear every valid change. */
export interface MeshConfigSource {
  current(): MeshConfig;
  /** Returns an unsubscribe function. */
  subscribe(listener: (mesh: MeshConfig, previous: MeshConfig) => void): () => void;
}

/** One entry of meshConfig.extensionProviders; layers merge these by name. */
export interface ExtensionProvider {
  name: string;
  [provider: string]: unknown;
}

/** A problem with a meshConfig, naming the field (dotted path) it is about. */
export interface MeshConfigIssue {
  field: string;
  message: string;
}
