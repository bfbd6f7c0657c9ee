// The mesh-wide inputs of every derivation, gathered once per meshConfig change.

import { DEFAULT_TRUST_DOMAIN } from './constants';

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
}

/** istiod leaves trust_domain empty when it is the default, and ztunnel fills the default back in. */
export function workloadTrustDomain(settings: AmbientSettings): string {
  return settings.trustDomain === DEFAULT_TRUST_DOMAIN ? '' : settings.trustDomain;
}
