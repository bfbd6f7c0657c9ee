// PeerAuthentication -> DENY Authorizations ztunnel enforces, and which of them a workload
// references. Ported literally from istiod (amb/authorization.go), quirks included: see the
// comments on convertPeerAuthentication's port loop.

import { matchLabels } from '../store/selector';
import type { KubeObject } from '../store/types';
import { CONVERTED_PA_PREFIX, STATIC_STRICT_POLICY } from './constants';
import { Authorization, AuthzAction, AuthzScope, Clause, Rule } from './messages';
import { PeerAuthenticationMtls, namespaceOf, peerAuthenticationSpec as paSpec } from './specs';

export type MtlsMode = 'UNSET' | 'DISABLE' | 'PERMISSIVE' | 'STRICT';
const MODES: readonly MtlsMode[] = ['UNSET', 'DISABLE', 'PERMISSIVE', 'STRICT'];

function modeOf(mtls: { mode?: string } | undefined | null): MtlsMode {
  return MODES.find((m) => m === mtls?.mode) ?? 'UNSET';
}
const isStrict = (mtls: { mode?: string } | undefined | null) => modeOf(mtls) === 'STRICT';
const isUnset = (mtls: { mode?: string } | undefined | null) => modeOf(mtls) === 'UNSET';
const isPermissive = (mtls: { mode?: string } | undefined | null) => modeOf(mtls) === 'PERMISSIVE';
const isDisable = (mtls: { mode?: string } | undefined | null) => modeOf(mtls) === 'DISABLE';

/** The last name made: every workload of a build lists it, and a fresh string each was then flattened to encode. */
let lastStrict = { root: '', name: `/${STATIC_STRICT_POLICY}` };

export function staticStrictName(rootNamespace: string): string {
  if (lastStrict.root !== rootNamespace)
    lastStrict = { root: rootNamespace, name: `${rootNamespace}/${STATIC_STRICT_POLICY}` };
  return lastStrict.name;
}

export function convertedPolicyName(pa: KubeObject): string {
  return `${CONVERTED_PA_PREFIX}${pa.metadata.name}`;
}

/** Sent whenever any PeerAuthentication exists: deny connections without an mTLS identity. */
export function staticStrictPolicy(rootNamespace: string): Authorization {
  return {
    name: STATIC_STRICT_POLICY,
    namespace: rootNamespace,
    scope: AuthzScope.WORKLOAD_SELECTOR,
    action: AuthzAction.DENY,
    rules: [{ clauses: [{ matches: [{ notPrincipals: [{ presence: {} }] }] }] }],
  };
}

const created = (o: KubeObject) => (o.metadata.creationTimestamp ? Date.parse(o.metadata.creationTimestamp) || 0 : 0);

const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** Oldest by creationTimestamp; ties go to the namespace/name that sorts first, so the choice is stable. */
export function oldest(objects: readonly KubeObject[]): KubeObject | undefined {
  let best: KubeObject | undefined;
  for (const o of objects) {
    if (!best || created(o) < created(best) || (created(o) === created(best) && keyOf(o) < keyOf(best))) best = o;
  }
  return best;
}

const hasSelector = (pa: KubeObject) => {
  const selector = paSpec(pa).selector;
  return selector !== undefined && selector !== null;
};
const hasMatchLabels = (pa: KubeObject) => Object.keys(paSpec(pa).selector?.matchLabels ?? {}).length > 0;

/** The oldest PeerAuthentication without any selector in a namespace (istiod's PeerAuthByNamespace). */
export function namespacePolicy(pas: readonly KubeObject[]): KubeObject | undefined {
  return oldest(pas.filter((p) => !hasSelector(p)));
}

/** Port-level modes in ascending port order; keys that are not ports are ignored. */
function portModes(pa: KubeObject): [number, PeerAuthenticationMtls][] {
  const out: [number, PeerAuthenticationMtls][] = [];
  for (const [k, v] of Object.entries(paSpec(pa).portLevelMtls ?? {})) {
    if (/^\d+$/.test(k) && Number(k) <= 0xffffffff) out.push([Number(k), v ?? {}]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

const denyWithoutIdentity = (): Clause => ({ matches: [{ notPrincipals: [{ presence: {} }] }] });

/**
 * The converted policy of a workload-selector PA with port-level mTLS outside the root namespace,
 * merged with its namespace's (`nsCfg`) and the mesh's (`rootCfg`) policy; undefined when none.
 */
export function convertPeerAuthentication(
  pa: KubeObject,
  nsCfg: KubeObject | undefined,
  rootCfg: KubeObject | undefined,
  rootNamespace: string,
): Authorization | undefined {
  const ports = portModes(pa);
  if (
    pa.metadata.namespace === rootNamespace ||
    !hasSelector(pa) ||
    Object.keys(paSpec(pa).portLevelMtls ?? {}).length === 0
  )
    return undefined;
  const mtls = paSpec(pa).mtls;
  const mode = modeOf(mtls);
  const nsMtls = nsCfg && paSpec(nsCfg).mtls;
  const rootMtls = rootCfg && paSpec(rootCfg).mtls;
  const clauses: Clause[] = [];
  const rules: Rule[] = [];
  if (mode === 'STRICT') clauses.push(denyWithoutIdentity());
  let foundNonStrict = false;
  for (const [port, portMtls] of ports) {
    const portMode = modeOf(portMtls);
    if (portMode === 'STRICT') {
      // istiod's condition is `A || (B && C) || D` by Go precedence: D (namespace absent or UNSET
      // and mesh STRICT) skips the port even when the workload's own mode is PERMISSIVE.
      if (
        isStrict(mtls) ||
        (isUnset(mtls) && nsCfg !== undefined && isStrict(nsMtls)) ||
        ((nsCfg === undefined || isUnset(nsMtls)) && rootCfg !== undefined && isStrict(rootMtls))
      ) {
        continue;
      }
      rules.push({ clauses: [{ matches: [{ notPrincipals: [{ presence: {} }], destinationPorts: [port] }] }] });
    } else if (portMode === 'PERMISSIVE' || portMode === 'DISABLE') {
      if (mode === 'PERMISSIVE' || mode === 'DISABLE') continue;
      // Also istiod's: a non-STRICT namespace PA skips the port even when the mesh is STRICT.
      if (
        mode === 'UNSET' &&
        ((nsCfg !== undefined && !isStrict(nsMtls)) ||
          (nsCfg === undefined && rootCfg !== undefined && !isStrict(rootMtls)) ||
          (nsCfg === undefined && rootCfg === undefined))
      ) {
        continue;
      }
      foundNonStrict = true;
      clauses.push({ matches: [{ notDestinationPorts: [port] }] });
    }
  }
  if (mode === 'STRICT' && !foundNonStrict) return undefined;
  if (clauses.length === 0 && rules.length === 0) return undefined;
  const mergeStrict =
    (rootCfg !== undefined && isStrict(rootMtls) && (nsCfg === undefined || isUnset(nsMtls) || isStrict(nsMtls))) ||
    (nsCfg !== undefined && isStrict(nsMtls));
  if (mergeStrict && foundNonStrict) clauses.push(denyWithoutIdentity());
  if (clauses.length > 0) rules.push({ clauses });
  return {
    name: convertedPolicyName(pa),
    namespace: namespaceOf(pa),
    scope: AuthzScope.WORKLOAD_SELECTOR,
    action: AuthzAction.DENY,
    rules,
  };
}

/** PAs that may apply to a workload: its namespace's (selector-less or selecting it) and the mesh's selector-less ones. */
export function candidatePeerAuthentications(
  workloadNamespace: string,
  labels: Record<string, string> | undefined,
  inNamespace: readonly KubeObject[],
  inRoot: readonly KubeObject[],
  rootNamespace: string,
): KubeObject[] {
  const out: KubeObject[] = [];
  const consider = (p: KubeObject) => {
    if (p.metadata.namespace === rootNamespace && !hasSelector(p)) return out.push(p);
    if (p.metadata.namespace !== workloadNamespace) return;
    if (!hasSelector(p) || matchLabels(labels ?? {}, paSpec(p).selector?.matchLabels ?? undefined)) out.push(p);
  };
  inNamespace.forEach(consider);
  if (workloadNamespace !== rootNamespace) inRoot.forEach(consider);
  return out;
}

/** The PA-derived policy names a workload references, sorted (istiod's convertedSelectorPeerAuthentications). */
export function peerAuthenticationKeys(rootNamespace: string, configs: readonly KubeObject[]): string[] {
  if (configs.length === 0) return [];
  const mesh = oldest(configs.filter((c) => !hasMatchLabels(c) && c.metadata.namespace === rootNamespace));
  const ns = oldest(configs.filter((c) => !hasMatchLabels(c) && c.metadata.namespace !== rootNamespace));
  const workload = oldest(configs.filter((c) => hasMatchLabels(c) && c.metadata.namespace !== rootNamespace));
  let strict = mesh ? isStrict(paSpec(mesh).mtls) : false;
  if (ns && !isUnset(paSpec(ns).mtls)) strict = isStrict(paSpec(ns).mtls);
  let portKey = '';
  if (workload) {
    const spec = paSpec(workload);
    if (isStrict(spec.mtls)) strict = true;
    if (isPermissive(spec.mtls) || isDisable(spec.mtls)) strict = false;
    if (spec.portLevelMtls) {
      const portList = Object.values(spec.portLevelMtls);
      const key = `${workload.metadata.namespace}/${convertedPolicyName(workload)}`;
      const mode = modeOf(spec.mtls);
      if (mode === 'STRICT') {
        if (portList.some((p) => isPermissive(p) || isDisable(p))) {
          portKey = key;
          strict = false;
        }
      } else if (mode === 'PERMISSIVE' || mode === 'DISABLE') {
        if (portList.some((p) => isStrict(p))) portKey = key;
      } else if (strict) {
        // istiod looks only for PERMISSIVE ports here: a DISABLE port under an inherited STRICT is not an exception.
        if (portList.some((p) => isPermissive(p))) {
          portKey = key;
          strict = false;
        }
      } else {
        strict = false;
        if (portList.some((p) => isStrict(p))) portKey = key;
      }
    }
  }
  // At most two names, sorted and distinct: built directly, this runs once per workload in a build.
  const strictName = strict ? staticStrictName(rootNamespace) : '';
  if (!portKey || portKey === strictName) return strictName ? [strictName] : [];
  if (!strictName) return [portKey];
  return strictName < portKey ? [strictName, portKey] : [portKey, strictName];
}
