// The environment variables istiod's feature registry reads for ambient (pilot/pkg/features,
// ambient.go and the ambient ones of pilot.go), in one table: which istiod-ts honours, and which it
// does not, with what it does instead. A switch it does not honour, set to ask for something it
// does not do, is named in one warning at start, so a values file moved over from istiod does not
// change behaviour in silence. docs/compat.md lists the same table.

import { parseGoBool } from './bool';

export interface IstiodSwitch {
  name: string;
  /** istiod's default with ambient enabled, as text. */
  istiodDefault: string;
  /** Honoured: the setting of the same name in SERVE_ENV (config/options.ts) reads it. */
  honoured: boolean;
  /** What istiod-ts does about it; for an unhonoured switch, the warning's reason. */
  note: string;
  /**
   * Unhonoured only: whether a given value asks for something istiod-ts does not do (and so is
   * warned about). Absent: any value is.
   */
  warnWhen?: (value: string) => boolean;
}

/** Go's ParseBool spellings; a value that is not one reads as what istiod would fall back to. */
const isTrue = (v: string) => parseGoBool(v.trim()) === true;
const isFalse = (v: string) => parseGoBool(v.trim()) === false;

const ENVOY_ONLY =
  'configures the Envoy xDS istiod serves sidecars, gateways and waypoints; istiod-ts serves ztunnel only (Address, Authorization), so it has no effect';

export const ISTIOD_SWITCHES: readonly IstiodSwitch[] = [
  {
    name: 'PILOT_ENABLE_AMBIENT',
    istiodDefault: 'false',
    honoured: false,
    note: 'istiod-ts always serves ambient mode; false is not honoured',
    warnWhen: isFalse,
  },
  {
    name: 'PILOT_ENABLE_AMBIENT_WAYPOINTS',
    istiodDefault: 'true',
    honoured: false,
    note: 'istiod deploys a Deployment and Service for each Gateway of class istio-waypoint; istiod-ts does not deploy waypoints (it reads the Gateways and their status addresses)',
    warnWhen: isTrue,
  },
  { name: 'PILOT_ENABLE_SENDING_HBONE', istiodDefault: 'true', honoured: false, note: ENVOY_ONLY },
  { name: 'PILOT_ENABLE_SIDECAR_LISTENING_HBONE', istiodDefault: 'true', honoured: false, note: ENVOY_ONLY },
  { name: 'PILOT_PREFER_SENDING_HBONE', istiodDefault: 'false', honoured: false, note: ENVOY_ONLY },
  { name: 'ENABLE_INGRESS_WAYPOINT_ROUTING', istiodDefault: 'true', honoured: false, note: ENVOY_ONLY },
  { name: 'AMBIENT_ENABLE_BAGGAGE', istiodDefault: 'false', honoured: false, note: ENVOY_ONLY },
  { name: 'ENABLE_LAYERED_WAYPOINT_AUTHORIZATION_POLICIES', istiodDefault: 'false', honoured: false, note: ENVOY_ONLY },
  { name: 'AMBIENT_SCOPED_ADDRESS_PUSHES', istiodDefault: 'true', honoured: false, note: ENVOY_ONLY },
  { name: 'PILOT_HBONE_INITIAL_STREAM_WINDOW_SIZE', istiodDefault: '0', honoured: false, note: ENVOY_ONLY },
  { name: 'PILOT_HBONE_INITIAL_CONNECTION_WINDOW_SIZE', istiodDefault: '0', honoured: false, note: ENVOY_ONLY },
  {
    name: 'AMBIENT_ENABLE_MULTI_NETWORK_WAYPOINT',
    istiodDefault: 'true',
    honoured: false,
    note: "routes a waypoint's Envoy to remote networks; istiod-ts serves no Envoy, so it has no effect",
    warnWhen: isFalse,
  },
  {
    name: 'AMBIENT_ENABLE_MULTI_NETWORK_INGRESS',
    istiodDefault: 'false',
    honoured: false,
    note: "routes an ingress gateway's Envoy to remote networks; istiod-ts serves no Envoy, so it has no effect",
    warnWhen: isTrue,
  },
  {
    name: 'ENABLE_DEBUG_ENDPOINT_AUTH',
    istiodDefault: 'true',
    honoured: false,
    note: 'istiod-ts always authenticates debug xDS types (istioctl proxy-status); false is not honoured',
    warnWhen: isFalse,
  },
  // Honoured: read by the setting of the same name (config/options.ts).
  {
    name: 'AMBIENT_ENABLE_MULTI_NETWORK',
    istiodDefault: 'false',
    honoured: true,
    note: 'remote clusters, GLOBAL services, network gateways (docs/multicluster.md)',
  },
  { name: 'AMBIENT_ENABLE_STATUS', istiodDefault: 'true', honoured: true, note: 'status conditions' },
  {
    name: 'AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY',
    istiodDefault: 'false',
    honoured: true,
    note: 'dry-run policies sent with dry_run',
  },
  {
    name: 'PILOT_AUTO_ALLOW_WAYPOINT_POLICY',
    istiodDefault: 'false',
    honoured: true,
    note: 'istio_allow_waypoint_<ns>_<name> policies',
  },
  { name: 'PILOT_ENABLE_IP_AUTOALLOCATE', istiodDefault: 'true', honoured: true, note: 'ServiceEntry addresses' },
  {
    name: 'PILOT_ENABLE_SERVICEENTRY_SELECT_PODS',
    istiodDefault: 'true',
    honoured: true,
    note: 'ServiceEntry workloadSelector and pods',
  },
  {
    name: 'PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES',
    istiodDefault: 'true',
    honoured: true,
    note: 'Service selector and WorkloadEntries',
  },
  {
    name: 'ISTIO_MULTIROOT_MESH',
    istiodDefault: 'false',
    honoured: true,
    note: 'plugged-in root changes (docs/ca.md)',
  },
];

export interface UnservedSwitch {
  name: string;
  value: string;
  reason: string;
}

/** The unhonoured switches `env` sets to ask for something istiod-ts does not do, in table order. */
export function unservedSwitches(env: Readonly<Record<string, string | undefined>>): UnservedSwitch[] {
  const out: UnservedSwitch[] = [];
  for (const s of ISTIOD_SWITCHES) {
    if (s.honoured) continue;
    const value = env[s.name];
    if (value === undefined) continue;
    if (s.warnWhen && !s.warnWhen(value)) continue;
    out.push({ name: s.name, value, reason: s.note });
  }
  return out;
}
