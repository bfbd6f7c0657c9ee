// The mesh-wide inputs of every derivation, gathered once per meshConfig change.

import { DEFAULT_TRUST_DOMAIN } from './constants';
import type { ServiceEntryVisibilityConfig } from './visibility';

export interface AmbientSettings {
  clusterId: string;
  /** Service DNS suffix, e.g. cluster.local. */
  domain: string;
  /** meshConfig trustDomain. */
  trustDomain: string;
  /** meshConfig rootNamespace: GLOBAL policies, mesh-wide PeerAuthentication, static strict policy. */
  rootNamespace: string;
  /** The local network ("" = default). */
  network: string;
  /** AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY: send istio.io/dry-run policies with dry_run set. */
  enableDryRun?: boolean;
  /** Control plane revision; Istio objects labelled istio.io/rev for another revision are ignored. */
  revision?: string;
  /** meshConfig.serviceEntryVisibility. */
  serviceEntryVisibility?: ServiceEntryVisibilityConfig;
}

/**
 * istiod's LabelsInRevision: an Istio object without istio.io/rev is everyone's; with it, only its
 * revision's, unless this control plane has no revision.
 */
export function inRevision(labels: Record<string, string> | undefined, revision: string | undefined): boolean {
  const rev = labels?.['istio.io/rev'];
  return rev === undefined || revision === undefined || revision === '' || rev === revision;
}

/** istiod leaves trust_domain empty when it is the default, and ztunnel fills the default back in. */
export function workloadTrustDomain(settings: AmbientSettings): string {
  return settings.trustDomain === DEFAULT_TRUST_DOMAIN ? '' : settings.trustDomain;
}
