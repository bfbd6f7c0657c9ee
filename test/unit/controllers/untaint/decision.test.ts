// The node untaint rule as a table: which taint goes, and when nothing is written.

import {
  isReadyCniPod,
  taintRemovalPatch,
  untaintDecision,
  type Taint,
} from '../../../../src/controllers/untaint/decision';
import type { KubeObject } from '../../../../src/store/types';

const KEY = 'cni.istio.io/not-ready';
const RULE = { taintKey: KEY, cniNamespace: 'istio-system' };
const OUR_TAINT: Taint = { key: KEY, effect: 'NoSchedule' };
const OTHER_TAINT: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };

function node(taints?: Taint[]): KubeObject {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' }, spec: taints ? { taints } : {} };
}

function cniPod(
  over: { namespace?: string; labels?: Record<string, string>; nodeName?: string; phase?: string; ready?: string } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'istio-cni-node-x',
      namespace: over.namespace ?? 'istio-system',
      labels: over.labels ?? { 'k8s-app': 'istio-cni-node' },
    },
    spec: { nodeName: over.nodeName ?? 'node-a' },
    status: {
      phase: over.phase ?? 'Running',
      conditions:
        over.ready === undefined ? [{ type: 'Ready', status: 'True' }] : [{ type: 'Ready', status: over.ready }],
    },
  };
}

describe('untaintDecision', () => {
  test('a Ready istio-cni pod on a tainted node removes our taint and keeps the others', () => {
    expect(untaintDecision(node([OTHER_TAINT, OUR_TAINT]), [cniPod()], RULE)).toEqual({
      remove: true,
      taintKey: KEY,
      keep: [OTHER_TAINT],
    });
  });

  test('every effect of our taint key goes (NoSchedule and NoExecute alike)', () => {
    const d = untaintDecision(node([OUR_TAINT, { key: KEY, effect: 'NoExecute' }, OTHER_TAINT]), [cniPod()], RULE);
    expect(d).toEqual({ remove: true, taintKey: KEY, keep: [OTHER_TAINT] });
  });

  test.each([
    ['no taints at all', undefined],
    ['only other taints', [OTHER_TAINT]],
    ['a taint with our key as its value, not its key', [{ key: 'other', value: KEY, effect: 'NoSchedule' }]],
  ])('a node with %s needs nothing, whatever its pods', (_name, taints) => {
    expect(untaintDecision(node(taints), [cniPod()], RULE)).toEqual({ remove: false, reason: 'no-taint' });
  });

  test.each<[string, Parameters<typeof cniPod>[0] | undefined]>([
    ['no istio-cni pod', undefined],
    ['a pod whose Ready condition is False', { ready: 'False' }],
    ['a pod whose Ready condition is Unknown', { ready: 'Unknown' }],
    ['a Failed pod, even one still reporting Ready', { phase: 'Failed' }],
    ['a Ready pod in another namespace', { namespace: 'kube-system' }],
    ['a Ready pod without the istio-cni label', { labels: { app: 'istio-cni-node' } }],
    ['a Ready pod whose k8s-app label names something else', { labels: { 'k8s-app': 'kube-proxy' } }],
    ['a Ready istio-cni pod on another node', { nodeName: 'node-b' }],
  ])('the taint stays with %s', (_name, pod) => {
    const pods = pod === undefined ? [] : [cniPod(pod)];
    expect(untaintDecision(node([OUR_TAINT]), pods, RULE)).toEqual({ remove: false, reason: 'cni-not-ready' });
  });

  test('one Ready pod among not-Ready ones is enough (a DaemonSet rollout overlaps old and new)', () => {
    const d = untaintDecision(node([OUR_TAINT]), [cniPod({ ready: 'False' }), cniPod()], RULE);
    expect(d.remove).toBe(true);
  });

  test('the taint key and the cni namespace come from the rule', () => {
    const rule = { taintKey: 'example.com/cni', cniNamespace: 'kube-system' };
    const taints = [OUR_TAINT, { key: 'example.com/cni', effect: 'NoSchedule' }];
    expect(untaintDecision(node(taints), [cniPod({ namespace: 'kube-system' })], rule)).toEqual({
      remove: true,
      taintKey: 'example.com/cni',
      keep: [OUR_TAINT],
    });
    expect(untaintDecision(node(taints), [cniPod()], rule).remove).toBe(false);
  });

  test('a pod without status or conditions is not Ready', () => {
    const pod: KubeObject = { ...cniPod(), status: undefined };
    expect(isReadyCniPod(pod, 'node-a', 'istio-system')).toBe(false);
    expect(isReadyCniPod({ ...cniPod(), status: { phase: 'Running' } }, 'node-a', 'istio-system')).toBe(false);
  });

  test('taints that are not a list are read as none', () => {
    expect(untaintDecision({ ...node(), spec: { taints: 'x' } }, [cniPod()], RULE).remove).toBe(false);
  });
});

describe('taintRemovalPatch', () => {
  test('tests the taints as read, then replaces them with the others, in their order', () => {
    const current = [OTHER_TAINT, OUR_TAINT, { key: 'zone', effect: 'PreferNoSchedule' }];
    expect(taintRemovalPatch(current, KEY)).toEqual([
      { op: 'test', path: '/spec/taints', value: current },
      { op: 'replace', path: '/spec/taints', value: [OTHER_TAINT, { key: 'zone', effect: 'PreferNoSchedule' }] },
    ]);
  });

  test('our taint alone becomes an empty list', () => {
    expect(taintRemovalPatch([OUR_TAINT], KEY)?.[1]).toEqual({ op: 'replace', path: '/spec/taints', value: [] });
  });

  test('nothing to write when the taint is already gone', () => {
    expect(taintRemovalPatch([OTHER_TAINT], KEY)).toBeUndefined();
    expect(taintRemovalPatch([], KEY)).toBeUndefined();
  });

  test('fields the API added to a taint (timeAdded) are tested and kept as they are', () => {
    const timed = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: '2026-12-03T10:00:00Z' };
    const ops = taintRemovalPatch([timed, OUR_TAINT], KEY);
    expect(ops?.[0]).toEqual({ op: 'test', path: '/spec/taints', value: [timed, OUR_TAINT] });
    expect(ops?.[1]).toEqual({ op: 'replace', path: '/spec/taints', value: [timed] });
  });
});
