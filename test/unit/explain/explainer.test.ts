// The explainer over a store: which question it puts to the node authorizer, why no pod grants an
// identity (another node, not scheduled, finished, none at all), the bound on the pods it walks, and
// the checks on the question itself.

import type { DecisionStep } from '../../../src/contract/decision';
import {
  Explainer,
  MAX_EXPLAINED_PODS,
  MAX_EXPLAINED_SCOPED_POLICIES,
  type IdentityRecord,
} from '../../../src/explain/explainer';
import {
  ExplainQueryError,
  MAX_EXPLAIN_NAME_LENGTH,
  queryFromParams,
  workloadQuery,
  identityQuery,
} from '../../../src/explain/query';
import { exitCodeOf, renderText } from '../../../src/explain/render';
import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';
import { SETTINGS } from '../../support/ambient/fixtures';

const ID = (sa: string) => `spiffe://cluster.local/ns/app/sa/${sa}`;

function podObj(ns: string, name: string, sa: string, node?: string, phase = 'Running'): KubeObject {
  return {
    metadata: { name, namespace: ns, uid: `uid-${name}` },
    spec: { serviceAccountName: sa, ...(node ? { nodeName: node } : {}) },
    status: { phase, podIP: '10.0.0.1' },
  };
}

function policy(ns: string, name: string, spec: Record<string, unknown> = {}): KubeObject {
  return { metadata: { name, namespace: ns }, spec };
}

function explainer(
  pods: KubeObject[],
  trustedAccounts = ['istio-system/ztunnel'],
  policies: KubeObject[] = [],
): Explainer {
  const store = new MemoryStore();
  store.upsert('Pod', [podObj('istio-system', 'zt-a', 'ztunnel', 'node-a'), ...pods]);
  store.upsert('AuthorizationPolicy', policies);
  return new Explainer({
    store,
    trustedAccounts,
    trustDomains: () => ['cluster.local'],
    ambientSettings: () => SETTINGS,
  });
}

const step = (r: IdentityRecord, rule: string): DecisionStep | undefined => r.steps.find((s) => s.rule === rule);

describe('explain identity', () => {
  it("asks as the node's agent pod when one runs there", () => {
    const r = explainer([podObj('app', 'web', 'web', 'node-a')]).identity('node-a', ID('web'));
    expect(r).toMatchObject({ allowed: true, askedAs: 'istio-system/zt-a' });
    expect(exitCodeOf(r)).toBe(0);
  });

  it('runs the caller-independent checks when no agent pod runs on the node', () => {
    const r = explainer([podObj('app', 'web', 'web', 'node-b')]).identity('node-b', ID('web'));
    expect(r.allowed).toBe(true);
    expect(r.askedAs).toBeUndefined();
    expect(r.steps[0]?.rule).toBe('explain.no-caller');
  });

  it('a pod that has finished grants nothing: the index function says so', () => {
    const r = explainer([podObj('app', 'job', 'job', 'node-a', 'Succeeded')]).identity('node-a', ID('job'));
    expect(r).toMatchObject({ allowed: false, reason: 'no_pod_on_node' });
    expect(step(r, 'index.terminal')?.facts).toContainEqual({ name: 'pod app/job status.phase', value: 'Succeeded' });
    expect(exitCodeOf(r)).toBe(1);
  });

  it('a pod not yet scheduled grants nothing anywhere', () => {
    const r = explainer([podObj('app', 'new', 'new', undefined, 'Pending')]).identity('node-a', ID('new'));
    expect(step(r, 'index.unscheduled')?.outcome).toBe('not filed: grants nothing');
  });

  it(`walks at most MAX_EXPLAINED_PODS (${MAX_EXPLAINED_PODS}) pods of the account and counts them all`, () => {
    const many = Array.from({ length: MAX_EXPLAINED_PODS + 5 }, (_, i) => podObj('app', `w-${i}`, 'w', 'node-b'));
    const r = explainer(many).identity('node-a', ID('w'));
    expect(r.steps.filter((s) => s.rule === 'index.filed')).toHaveLength(MAX_EXPLAINED_PODS);
    expect(step(r, 'explain.pods-of-account')?.outcome).toBe(
      `${MAX_EXPLAINED_PODS + 5} pod(s) of app/w, none filed under the node (first ${MAX_EXPLAINED_PODS} shown)`,
    );
  });

  it('the text view leads with the verdict and the detail', () => {
    const text = renderText(explainer([]).identity('node-a', ID('ghost')));
    expect(text.split('\n').slice(0, 2)).toEqual([
      `identity ${ID('ghost')} for a ztunnel on node node-a: DENIED (no_pod_on_node)`,
      '  no running pod of app/ghost on node node-a',
    ]);
  });
});

describe('explain workload', () => {
  it('a pod that is not there is not found, exit 1', () => {
    const r = explainer([]).workload('app', 'gone');
    expect(r).toMatchObject({ kind: 'workload', found: false });
    expect(exitCodeOf(r)).toBe(1);
  });

  it('policies without a selector are shown as applying by scope, namespace-wide and mesh-wide', () => {
    const r = explainer([podObj('app', 'web', 'web', 'node-a')], undefined, [
      policy('app', 'ns-wide', { action: 'DENY' }),
      policy('istio-system', 'mesh-wide'),
      policy('app', 'selecting', { selector: { matchLabels: { app: 'web' } } }),
      policy('other', 'elsewhere'),
    ]).workload('app', 'web');
    expect(r.scopedPolicies).toEqual(['app/ns-wide (NAMESPACE, DENY)', 'istio-system/mesh-wide (GLOBAL, ALLOW)']);
  });

  it(`lists at most MAX_EXPLAINED_SCOPED_POLICIES (${MAX_EXPLAINED_SCOPED_POLICIES}) scoped policies and counts them all`, () => {
    const many = Array.from({ length: MAX_EXPLAINED_SCOPED_POLICIES + 2 }, (_, i) => policy('app', `p-${i}`));
    const r = explainer([podObj('app', 'web', 'web', 'node-a')], undefined, many).workload('app', 'web');
    expect(r.scopedPolicies).toHaveLength(MAX_EXPLAINED_SCOPED_POLICIES);
    expect(r.steps.find((s) => s.rule === 'explain.scoped-policies')?.outcome).toBe(
      `${MAX_EXPLAINED_SCOPED_POLICIES + 2} apply by scope (first ${MAX_EXPLAINED_SCOPED_POLICIES} shown)`,
    );
  });

  it('a finished pod is found in the store but yields no workload: the record says why', () => {
    const r = explainer([podObj('app', 'done', 'done', 'node-a', 'Failed')]).workload('app', 'done');
    expect(r.found).toBe(false);
    expect(r.steps[0]?.rule).toBe('workload.terminal');
  });
});

describe('explain questions', () => {
  it.each([
    [{ workload: 'app/web' }, { kind: 'workload', namespace: 'app', name: 'web' }],
    [
      { identity: ID('web'), node: 'node-a' },
      { kind: 'identity', node: 'node-a', identity: ID('web') },
    ],
  ])('%j is read from the query string', (params, query) => {
    expect(queryFromParams(new URLSearchParams(params))).toEqual(query);
  });

  it.each([
    [{}, 'give workload=NAMESPACE/POD, or identity=spiffe://... and node=NODE'],
    [{ workload: 'a/b', identity: ID('x') }, 'not both'],
    [{ node: 'node-a' }, 'identity is missing'],
    [{ workload: 'a/b/c' }, 'is not NAMESPACE/POD'],
    [{ workload: '/b' }, 'namespace is empty'],
  ])('%j is refused', (params, message) => {
    expect(() => queryFromParams(new URLSearchParams(params))).toThrow(ExplainQueryError);
    expect(() => queryFromParams(new URLSearchParams(params))).toThrow(message);
  });

  it(`names longer than MAX_EXPLAIN_NAME_LENGTH (${MAX_EXPLAIN_NAME_LENGTH}) are refused`, () => {
    const long = 'a'.repeat(MAX_EXPLAIN_NAME_LENGTH + 1);
    expect(() => workloadQuery(`app/${long}`)).toThrow(`pod name is longer than ${MAX_EXPLAIN_NAME_LENGTH} characters`);
    expect(() => identityQuery(long, ID('x'))).toThrow('node is longer than');
    expect(workloadQuery(`app/${'a'.repeat(MAX_EXPLAIN_NAME_LENGTH)}`).kind).toBe('workload');
  });
});
