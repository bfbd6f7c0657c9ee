// The mesh-wide inputs of every derivation, gathered once per meshConfig change.

import type { ServeEnv } from '../config/options';
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
  /** istiod's feature switches; a switch left out has istiod's default. */
  features?: Partial<AmbientFeatures>;
}

/** The environment switches istiod reads that change what the index derives. */
export interface AmbientFeatures {
  /** PILOT_ENABLE_IP_AUTOALLOCATE: ServiceEntry addresses allocated in status.addresses are used. */
  ipAutoallocate: boolean;
  /** PILOT_AUTO_ALLOW_WAYPOINT_POLICY: an ALLOW policy from each waypoint's service accounts, bound to its workloads. */
  autoAllowWaypointPolicy: boolean;
  /** PILOT_ENABLE_SERVICEENTRY_SELECT_PODS: a ServiceEntry's workloadSelector picks pods. */
  serviceEntrySelectPods: boolean;
  /** PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES: a Kubernetes Service's selector picks WorkloadEntries. */
  k8sSelectWorkloadEntries: boolean;
}

/** istiod's defaults for the switches. */
export const DEFAULT_AMBIENT_FEATURES: Readonly<AmbientFeatures> = {
  ipAutoallocate: true,
  autoAllowWaypointPolicy: false,
  serviceEntrySelectPods: true,
  k8sSelectWorkloadEntries: true,
};

/** The switches from istiod's environment variables, as read into ServeEnv. */
export function ambientFeatures(
  env: Pick<
    ServeEnv,
    | 'PILOT_ENABLE_IP_AUTOALLOCATE'
    | 'PILOT_AUTO_ALLOW_WAYPOINT_POLICY'
    | 'PILOT_ENABLE_SERVICEENTRY_SELECT_PODS'
    | 'PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES'
  >,
): AmbientFeatures {
  return {
    ipAutoallocate: env.PILOT_ENABLE_IP_AUTOALLOCATE,
    autoAllowWaypointPolicy: env.PILOT_AUTO_ALLOW_WAYPOINT_POLICY,
    serviceEntrySelectPods: env.PILOT_ENABLE_SERVICEENTRY_SELECT_PODS,
    k8sSelectWorkloadEntries: env.PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES,
  };
}

export function featureOn(settings: Pick<AmbientSettings, 'features'>, name: keyof AmbientFeatures): boolean {
  return settings.features?.[name] ?? DEFAULT_AMBIENT_FEATURES[name];
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
