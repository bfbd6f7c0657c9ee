// Decision records come from the deciding code itself: with a recorder passed, the node authorizer
// and the pod workload derivation return exactly what they return without one, and the steps they
// record name the rule that decided. The recorder keeps a bounded record.

import {
  DecisionRecorder,
  MAX_DECISION_STEPS,
  MAX_FACTS_PER_STEP,
  type DecisionStep,
} from '../../../src/contract/decision';
import { podWorkload } from '../../../src/ambient/workloads';
import type { CallerIdentity } from '../../../src/security/identity';
import { NodeAuthorizer } from '../../../src/security/node-authorizer';
import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';
import { gateway, namespace, pod, service, viewOf, type Obj } from '../../support/ambient/fixtures';

const rules = (steps: readonly DecisionStep[]) => steps.map((s) => s.rule);

describe('DecisionRecorder', () => {
  it('files the facts read since the previous step under the step that used them', () => {
    const rec = new DecisionRecorder();
    rec.fact('a', 1);
    rec.decide('t', 'r1', 'rule one', 'first');
    rec.fact('b', ['x', 'y']);
    rec.fact('c', null);
    rec.decide('t', 'r2', 'rule two', 'second');
    expect(rec.steps).toEqual([
      { topic: 't', rule: 'r1', text: 'rule one', facts: [{ name: 'a', value: 1 }], outcome: 'first' },
      {
        topic: 't',
        rule: 'r2',
        text: 'rule two',
        facts: [
          { name: 'b', value: ['x', 'y'] },
          { name: 'c', value: null },
        ],
        outcome: 'second',
      },
    ]);
  });

  it(`keeps at most MAX_DECISION_STEPS (${MAX_DECISION_STEPS}) steps and counts the rest`, () => {
    const rec = new DecisionRecorder();
    for (let i = 0; i < MAX_DECISION_STEPS + 5; i++) rec.decide('t', 'r', 'rule', String(i));
    expect(rec.steps).toHaveLength(MAX_DECISION_STEPS);
    expect(rec.omittedSteps).toBe(5);
  });

  it(`keeps at most MAX_FACTS_PER_STEP (${MAX_FACTS_PER_STEP}) facts in a step and counts the rest`, () => {
    const rec = new DecisionRecorder();
    for (let i = 0; i < MAX_FACTS_PER_STEP + 3; i++) rec.fact(`f${i}`, i);
    rec.decide('t', 'r', 'rule', 'done');
    expect(rec.steps[0]?.facts).toHaveLength(MAX_FACTS_PER_STEP);
    expect(rec.omittedFacts).toBe(3);
  });
});

describe('node authorization with a recorder', () => {
  const podObj = (ns: string, name: string, uid: string, sa: string, node?: string, phase = 'Running'): KubeObject => ({
    metadata: { name, namespace: ns, uid },
    spec: { serviceAccountName: sa, ...(node ? { nodeName: node } : {}) },
    status: { phase },
  });
  const store = new MemoryStore();
  store.upsert('Pod', [
    podObj('istio-system', 'zt-a', 'uid-zt', 'ztunnel', 'node-a'),
    podObj('istio-system', 'zt-done', 'uid-done', 'ztunnel', 'node-a', 'Failed'),
    podObj('default', 'sleep', 'uid-s', 'sleep', 'node-a'),
    podObj('default', 'far', 'uid-f', 'far', 'node-b'),
  ]);
  const authorizer = new NodeAuthorizer(store, {
    trustedAccounts: ['istio-system/ztunnel'],
    trustDomains: () => ['cluster.local'],
  });
  const caller = (podName: string, podUid: string, sa = 'ztunnel'): CallerIdentity => ({
    identities: [`spiffe://cluster.local/ns/istio-system/sa/${sa}`],
    namespace: 'istio-system',
    serviceAccount: sa,
    podName,
    podUid,
    via: 'token',
  });
  const cases: [string, CallerIdentity, string, string][] = [
    ['allowed', caller('zt-a', 'uid-zt'), 'spiffe://cluster.local/ns/default/sa/sleep', 'identity.on-node'],
    ['pod on another node', caller('zt-a', 'uid-zt'), 'spiffe://cluster.local/ns/default/sa/far', 'no_pod_on_node'],
    [
      'untrusted caller',
      caller('zt-a', 'uid-zt', 'sleep'),
      'spiffe://cluster.local/ns/default/sa/sleep',
      'caller_not_trusted',
    ],
    ['bad identity', caller('zt-a', 'uid-zt'), 'spiffe://cluster.local/default/sleep', 'invalid_identity'],
    [
      'other trust domain',
      caller('zt-a', 'uid-zt'),
      'spiffe://x.example/ns/default/sa/sleep',
      'untrusted_trust_domain',
    ],
    ['uid mismatch', caller('zt-a', 'other'), 'spiffe://cluster.local/ns/default/sa/sleep', 'caller_pod_mismatch'],
    [
      'terminated caller',
      caller('zt-done', 'uid-done'),
      'spiffe://cluster.local/ns/default/sa/sleep',
      'caller_pod_terminated',
    ],
  ];

  it.each(cases)(
    '%s: the recorded run decides exactly what the CA gets, and its last step is the rule',
    (_, c, id, rule) => {
      const rec = new DecisionRecorder();
      expect(authorizer.authorize(c, id, rec)).toEqual(authorizer.authorize(c, id));
      expect(rec.steps.at(-1)?.rule).toBe(rule);
    },
  );

  it('the allowing step lists the pods filed under (node, ns/sa) that grant the identity', () => {
    const rec = new DecisionRecorder();
    authorizer.authorize(caller('zt-a', 'uid-zt'), 'spiffe://cluster.local/ns/default/sa/sleep', rec);
    expect(rec.steps.at(-1)?.facts).toEqual([
      { name: 'pods filed under node-a/default/sleep', value: ['default/sleep'] },
    ]);
  });

  it('authorizeOnNode runs the caller-independent checks of authorize, with the same outcome', () => {
    const rec = new DecisionRecorder();
    expect(authorizer.authorizeOnNode('node-a', 'spiffe://cluster.local/ns/default/sa/sleep', rec)).toEqual({
      allowed: true,
      node: 'node-a',
    });
    expect(rules(rec.steps)).toEqual(['impersonation.enabled', 'identity.in-mesh', 'identity.on-node']);
    expect(authorizer.authorizeOnNode('node-a', 'spiffe://cluster.local/ns/default/sa/far')).toMatchObject({
      allowed: false,
      reason: 'no_pod_on_node',
    });
  });

  it('a second authorizer over the same store shares its (node, ns/sa) index', () => {
    const second = new NodeAuthorizer(store, {
      trustedAccounts: ['istio-system/ztunnel'],
      trustDomains: () => ['cluster.local'],
    });
    expect(second.authorizeOnNode('node-a', 'spiffe://cluster.local/ns/default/sa/sleep')).toEqual({
      allowed: true,
      node: 'node-a',
    });
  });
});

describe('pod workload with a recorder', () => {
  const wp = gateway('waypoint', 'default', { labels: { 'istio.io/waypoint-for': 'workload' } });
  const derive = (p: Obj, others: Obj[] = []) => {
    const view = viewOf([p, ...others]);
    const rec = new DecisionRecorder();
    const traced = podWorkload(p.object, view, rec);
    expect(traced).toEqual(podWorkload(p.object, view));
    return { w: traced, steps: rec.steps, rule: (topic: string) => rules(rec.steps.filter((s) => s.topic === topic)) };
  };

  it('the redirection annotation decides HBONE, and the recorded run derives the same workload', () => {
    const { rule } = derive(pod('a', { annotations: { 'ambient.istio.io/redirection': 'enabled' } }));
    expect(rule('protocol')).toEqual(['protocol.redirection']);
  });

  it('without the annotation or a tunnel label the protocol rule is protocol.none', () => {
    expect(derive(pod('a')).rule('protocol')).toEqual(['protocol.none']);
  });

  it("the namespace's use-waypoint binds a workload waypoint: namespace label, attachment, traffic type, bound", () => {
    const { rule } = derive(pod('a'), [wp, namespace('default', { 'istio.io/use-waypoint': 'waypoint' })]);
    expect(rule('waypoint')).toEqual([
      'waypoint.namespace-label',
      'waypoint.attachment-allowed',
      'waypoint.traffic-type',
      'waypoint.bound',
    ]);
  });

  it('use-waypoint none on the pod is recorded as the opt-out', () => {
    const { rule } = derive(pod('a', { labels: { 'istio.io/use-waypoint': 'none' } }), [
      wp,
      namespace('default', { 'istio.io/use-waypoint': 'waypoint' }),
    ]);
    expect(rule('waypoint')).toEqual(['waypoint.opt-out']);
  });

  it('a waypoint named but missing is recorded as missing', () => {
    const { rule } = derive(pod('a', { labels: { 'istio.io/use-waypoint': 'gone' } }));
    expect(rule('waypoint')).toEqual(['waypoint.own-label', 'waypoint.missing']);
  });

  it('a service-only waypoint is named but not bound to the workload: the traffic type says why', () => {
    const { steps } = derive(pod('a', { labels: { 'istio.io/use-waypoint': 'w2' } }), [gateway('w2', 'default')]);
    expect(steps.find((s) => s.rule === 'waypoint.traffic-type')?.outcome).toBe(
      'none: the waypoint is for service traffic',
    );
  });

  it('a selecting Service is recorded with its selector and the ports it maps on this pod', () => {
    const { steps } = derive(pod('a', { labels: { app: 'a' } }), [service('svc', { selector: { app: 'a' } })]);
    const step = steps.find((s) => s.rule === 'services.selector');
    expect(step?.facts.map((f) => f.name)).toEqual([
      'Service default/svc selector',
      'Service default/svc ports (service->target on this pod)',
    ]);
    expect(step?.facts[0]?.value).toEqual(['app=a']);
  });

  it('a terminal pod is recorded as no workload', () => {
    expect(derive(pod('a', { status: { phase: 'Failed' } })).rule('workload')).toEqual(['workload.terminal']);
  });
});
