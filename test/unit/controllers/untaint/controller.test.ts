// The untaint controller's limits, with stores in memory and a writer the test controls: how
// many nodes are handled at once, and how retries back off.

import {
  NodeUntaintController,
  UNTAINT_BACKOFF,
  UNTAINT_CONCURRENCY,
  UNTAINT_MAX_ATTEMPTS,
} from '../../../../src/controllers/untaint/controller';
import type { Counter } from 'prom-client';
import { CNI_PODS_BY_NODE, podNodeName } from '../../../../src/controllers/untaint/cni-pods';
import { BACKOFF_JITTER } from '../../../../src/store/kube/backoff';
import { KubeApiError } from '../../../../src/store/kube/client';
import type { KubeWriter } from '../../../../src/store/kube/writes';
import { MemoryStore } from '../../../../src/store/memory-store';
import type { KubeObject } from '../../../../src/store/types';
import { logs } from '../../../../src/log/logger';

logs.configure('untaint:error');

const KEY = 'cni.istio.io/not-ready';
const RULE = { taintKey: KEY, cniNamespace: 'istio-system' };

function taintedNode(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, uid: `uid-${name}` },
    spec: { taints: [{ key: KEY, effect: 'NoSchedule' }] },
  };
}

function readyCniPod(nodeName: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `istio-cni-${nodeName}`, namespace: 'istio-system', labels: { 'k8s-app': 'istio-cni-node' } },
    spec: { nodeName },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

function stores(nodeCount: number): { nodes: MemoryStore; cniPods: MemoryStore } {
  const nodes = new MemoryStore();
  const cniPods = new MemoryStore();
  cniPods.addIndex('Pod', CNI_PODS_BY_NODE, (p) => {
    const n = podNodeName(p);
    return n === undefined ? [] : [n];
  });
  const names = Array.from({ length: nodeCount }, (_, i) => `node-${i}`);
  nodes.upsert('Node', names.map(taintedNode));
  cniPods.upsert('Pod', names.map(readyCniPod));
  return { nodes, cniPods };
}

test(`at most UNTAINT_CONCURRENCY (${UNTAINT_CONCURRENCY}) nodes are handled at once; the rest wait their turn`, async () => {
  const { nodes, cniPods } = stores(UNTAINT_CONCURRENCY * 3);
  let inFlight = 0;
  let most = 0;
  const gates: (() => void)[] = [];
  const writer: Pick<KubeWriter, 'get' | 'patch'> = {
    get: async (ref) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((resolve) => gates.push(resolve));
      return nodes.get('Node', undefined, ref.name) as never;
    },
    patch: () => {
      inFlight--;
      return Promise.resolve({} as never);
    },
  };
  const controller = new NodeUntaintController({ nodes, cniPods, writer, rule: RULE });
  controller.start();
  try {
    expect(controller.pending()).toEqual({ queued: UNTAINT_CONCURRENCY * 2, active: UNTAINT_CONCURRENCY, retrying: 0 });
    for (let handled = 0; handled < UNTAINT_CONCURRENCY * 3; handled++) {
      while (gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
      gates.shift()!();
    }
    while (controller.pending().active > 0) await new Promise((resolve) => setImmediate(resolve));
    expect(most).toBe(UNTAINT_CONCURRENCY);
    expect(controller.pending()).toEqual({ queued: 0, active: 0, retrying: 0 });
  } finally {
    await controller.stop();
  }
});

describe('retries', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test(`a refused patch is retried from a fresh read with UNTAINT_BACKOFF (${UNTAINT_BACKOFF.initialMs} ms doubling to ${UNTAINT_BACKOFF.maxMs} ms)`, async () => {
    const { nodes, cniPods } = stores(1);
    const attempts: number[] = [];
    const writer: Pick<KubeWriter, 'get' | 'patch'> = {
      get: (ref) => Promise.resolve(nodes.get('Node', undefined, ref.name) as never),
      patch: () => {
        attempts.push(Date.now());
        return Promise.reject(new KubeApiError(403, 'Forbidden', 'nodes "node-0" is forbidden'));
      },
    };
    // More attempts than the default bound, so the delays can be seen reaching the cap.
    const controller = new NodeUntaintController({ nodes, cniPods, writer, rule: RULE, maxAttempts: 30 });
    controller.start();
    try {
      // Long enough for the delays to reach the cap and stay there.
      await jest.advanceTimersByTimeAsync(UNTAINT_BACKOFF.maxMs * 12);
      const gaps = attempts.slice(1).map((t, i) => t - attempts[i]!);
      expect(gaps.length).toBeGreaterThan(10);
      expect(gaps[0]).toBeGreaterThanOrEqual(UNTAINT_BACKOFF.initialMs * (1 - BACKOFF_JITTER));
      expect(gaps[0]).toBeLessThanOrEqual(UNTAINT_BACKOFF.initialMs * (1 + BACKOFF_JITTER) + 1);
      for (const gap of gaps) expect(gap).toBeLessThanOrEqual(UNTAINT_BACKOFF.maxMs * (1 + BACKOFF_JITTER) + 1);
      expect(gaps.at(-1)).toBeGreaterThanOrEqual(UNTAINT_BACKOFF.maxMs * (1 - BACKOFF_JITTER));
      expect(controller.pending().retrying).toBe(1);
    } finally {
      await controller.stop();
    }
  });

  test(`a refused patch is tried UNTAINT_MAX_ATTEMPTS (${UNTAINT_MAX_ATTEMPTS}) times and each failure counted; a change of the node starts a new round`, async () => {
    const { nodes, cniPods } = stores(1);
    let patches = 0;
    const counted: string[] = [];
    const writer: Pick<KubeWriter, 'get' | 'patch'> = {
      get: (ref) => Promise.resolve(nodes.get('Node', undefined, ref.name) as never),
      patch: () => {
        patches++;
        return Promise.reject(new KubeApiError(403, 'Forbidden', 'nodes "node-0" is forbidden'));
      },
    };
    const failures = { inc: (labels: { code: string }) => counted.push(labels.code) } as unknown as Counter<'code'>;
    const controller = new NodeUntaintController({ nodes, cniPods, writer, rule: RULE, failures });
    controller.start();
    try {
      await jest.advanceTimersByTimeAsync(UNTAINT_BACKOFF.maxMs * 20);
      expect(patches).toBe(UNTAINT_MAX_ATTEMPTS);
      expect(counted).toEqual(Array<string>(UNTAINT_MAX_ATTEMPTS).fill('403'));
      expect(controller.pending()).toEqual({ queued: 0, active: 0, retrying: 0 });
      expect(controller.givenUp).toBe(1);
      nodes.upsert('Node', [
        { ...taintedNode('node-0'), metadata: { name: 'node-0', uid: 'uid-node-0', resourceVersion: '2' } },
      ]);
      await jest.advanceTimersByTimeAsync(UNTAINT_BACKOFF.maxMs * 20);
      expect(patches).toBe(2 * UNTAINT_MAX_ATTEMPTS);
      expect(controller.givenUp).toBe(2);
    } finally {
      await controller.stop();
    }
  });

  test('a node that no longer needs it while waiting out a backoff is dropped without a write', async () => {
    const { nodes, cniPods } = stores(1);
    let patches = 0;
    const writer: Pick<KubeWriter, 'get' | 'patch'> = {
      get: (ref) => Promise.resolve(nodes.get('Node', undefined, ref.name) as never),
      patch: () => {
        patches++;
        return Promise.reject(new KubeApiError(500, 'InternalError', 'etcd is away'));
      },
    };
    const controller = new NodeUntaintController({ nodes, cniPods, writer, rule: RULE });
    controller.start();
    try {
      await jest.advanceTimersByTimeAsync(1);
      expect(patches).toBe(1);
      nodes.upsert('Node', [
        { ...taintedNode('node-0'), metadata: { name: 'node-0', uid: 'uid-node-0', resourceVersion: '2' }, spec: {} },
      ]);
      await jest.advanceTimersByTimeAsync(UNTAINT_BACKOFF.maxMs);
      expect(patches).toBe(1);
      expect(controller.pending()).toEqual({ queued: 0, active: 0, retrying: 0 });
    } finally {
      await controller.stop();
    }
  });
});
