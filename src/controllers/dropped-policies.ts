// AuthorizationPolicies that ztunnel never receives, reported on the shared list of ignored objects
// (log line once, istiod_ts_ignored_objects_total, /debug/ignored) so none vanishes from xDS without
// a word: a waypoint's policy (targetRef), an action ztunnel cannot enforce, a dry-run policy while
// dry-run is off. The status condition says the same in Kubernetes; this list works in both modes
// and on every replica, since it only reads. A policy sent in part (HTTP attributes dropped) is not
// listed: it reaches ztunnel, and its ZtunnelAccepted condition names what was left out.

import type { PolicyStatusFacts } from '../ambient/policy-status';
import type { IgnoredObjects } from '../store/ignored';
import { ignoredKey } from '../store/ignored';
import type { KubeObject, ObjectStore } from '../store/types';

const KIND = 'AuthorizationPolicy';

export interface DroppedPolicyFacts {
  policyStatus(namespace: string, name: string): PolicyStatusFacts | undefined;
}

function hasTargetRef(ap: KubeObject): boolean {
  const spec = (ap.spec ?? {}) as { targetRef?: unknown; targetRefs?: unknown };
  return Boolean(spec.targetRef) || (Array.isArray(spec.targetRefs) && spec.targetRefs.length > 0);
}

/** Why ztunnel gets nothing of this policy, or undefined when it gets it (in whole or in part). */
export function droppedReason(ap: KubeObject, facts: PolicyStatusFacts | undefined): string | undefined {
  if (facts === undefined)
    return hasTargetRef(ap)
      ? 'not sent to ztunnel: it has targetRef(s), so a waypoint enforces it, and istiod-ts programs no waypoints'
      : undefined;
  switch (facts.outcome.kind) {
    case 'unsupportedAction':
      return `not sent to ztunnel: action ${facts.outcome.action} cannot be enforced by ztunnel (only ALLOW and DENY)`;
    case 'dryRunUnsupported':
      return 'not sent to ztunnel: annotated istio.io/dry-run while AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY is off';
    case 'accepted':
    case 'httpAttributesIgnored':
      return undefined;
  }
}

/** Keeps `ignored` equal to the store's dropped policies until the returned stop is called. */
export function reportDroppedPolicies(
  store: ObjectStore,
  facts: DroppedPolicyFacts,
  ignored: IgnoredObjects,
): () => void {
  const nameOf = (ap: KubeObject) => `${ap.metadata.namespace ?? ''}/${ap.metadata.name}`;
  const check = (ap: KubeObject) => {
    const reason = droppedReason(ap, facts.policyStatus(ap.metadata.namespace ?? '', ap.metadata.name));
    if (reason === undefined) ignored.clear(ignoredKey(KIND, nameOf(ap)));
    else ignored.report(KIND, nameOf(ap), reason);
  };
  const unsubscribe = store.subscribe((events) => {
    for (const e of events) {
      if (e.kind !== KIND) continue;
      if (e.type === 'delete') ignored.clear(ignoredKey(KIND, nameOf(e.object)));
      else check(e.object);
    }
  });
  for (const ap of store.list(KIND)) check(ap);
  return unsubscribe;
}
