// AuthorizationPolicies ztunnel never receives are listed on the shared ignored list with the
// reason, once each, and leave it when they change into something ztunnel gets or are deleted.

import { policyStatusFacts } from '../../../src/ambient/policy-status';
import { droppedReason, reportDroppedPolicies } from '../../../src/controllers/dropped-policies';
import { IgnoredObjects } from '../../../src/store/ignored';
import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';

function policy(name: string, spec: Record<string, unknown>, resourceVersion = '1'): KubeObject {
  return {
    apiVersion: 'security.istio.io/v1',
    kind: 'AuthorizationPolicy',
    metadata: { name, namespace: 'apps', resourceVersion, generation: Number(resourceVersion) },
    spec,
  };
}

function setup() {
  const store = new MemoryStore();
  const ignored = new IgnoredObjects();
  const facts = {
    policyStatus: (ns: string, name: string) => {
      const ap = store.get('AuthorizationPolicy', ns, name);
      return ap ? policyStatusFacts(ap, 'istio-system') : undefined;
    },
  };
  return { store, ignored, facts };
}

const reasons = (ignored: IgnoredObjects) => ignored.list().objects.map((o) => [o.name, o.reason]);

describe('dropped AuthorizationPolicies', () => {
  it('lists a waypoint policy, an AUDIT or CUSTOM action and a dry-run policy, each with its reason', () => {
    const { store, ignored, facts } = setup();
    store.upsert('AuthorizationPolicy', [
      policy('waypoint', { targetRefs: [{ kind: 'Gateway', group: 'gateway.networking.k8s.io', name: 'wp' }] }),
      policy('audit', { action: 'AUDIT', rules: [{}] }),
      policy('allowed', { action: 'ALLOW', rules: [{}] }),
      policy('http', { action: 'ALLOW', rules: [{ to: [{ operation: { methods: ['GET'] } }] }] }),
    ]);
    const dryRun = policy('dry', { action: 'DENY', rules: [{}] });
    dryRun.metadata.annotations = { 'istio.io/dry-run': 'true' };
    store.upsert('AuthorizationPolicy', [dryRun]);
    const stop = reportDroppedPolicies(store, facts, ignored);
    expect(reasons(ignored)).toEqual([
      ['apps/audit', 'not sent to ztunnel: action AUDIT cannot be enforced by ztunnel (only ALLOW and DENY)'],
      [
        'apps/dry',
        'not sent to ztunnel: annotated istio.io/dry-run while AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY is off',
      ],
      [
        'apps/waypoint',
        'not sent to ztunnel: it has targetRef(s), so a waypoint enforces it, and istiod-ts programs no waypoints',
      ],
    ]);
    stop();
  });

  it('follows the store: a policy fixed or deleted leaves the list, a policy broken later joins it', () => {
    const { store, ignored, facts } = setup();
    const stop = reportDroppedPolicies(store, facts, ignored);
    store.upsert('AuthorizationPolicy', [policy('p', { action: 'CUSTOM', provider: { name: 'ext' }, rules: [{}] })]);
    expect(reasons(ignored).map(([n]) => n)).toEqual(['apps/p']);
    store.upsert('AuthorizationPolicy', [policy('p', { action: 'DENY', rules: [{}] }, '2')]);
    expect(ignored.list().total).toBe(0);
    store.upsert('AuthorizationPolicy', [policy('p', { targetRef: { kind: 'Gateway', name: 'wp' } }, '3')]);
    expect(reasons(ignored).map(([n]) => n)).toEqual(['apps/p']);
    store.remove('AuthorizationPolicy', [policy('p', {}, '3')]);
    expect(ignored.list().total).toBe(0);
    stop();
    store.upsert('AuthorizationPolicy', [policy('late', { action: 'AUDIT' })]);
    expect(ignored.list().total).toBe(0);
  });

  it('does not list a policy sent without its HTTP attributes: it reaches ztunnel', () => {
    const ap = policy('http', { action: 'DENY', rules: [{ to: [{ operation: { paths: ['/admin'] } }] }] });
    expect(droppedReason(ap, policyStatusFacts(ap, 'istio-system'))).toBeUndefined();
  });
});
