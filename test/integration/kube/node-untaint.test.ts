// The node untaint controller against the test API server: Nodes through the shared store (the
// Kubernetes source as the server runs it), istio-cni pods through the controller's own watch,
// every write through KubeWriter. Where a test says "no write", a second node whose istio-cni pod
// is Ready is untainted first, so the controller demonstrably had the data and its turn.

import { eventually, type TestApiServer } from '../../support/apiserver';
import { namespace } from '../../support/apiserver/fixtures';
import { FAST_TIMING, startServer, startSource } from './helpers';
import {
  startNodeUntaintController,
  NODE_UNTAINT_LEASE,
  UNTAINT_FAILURES_METRIC,
  UNTAINT_MAX_ATTEMPTS,
  type Taint,
} from '../../../src/controllers/untaint';
import { Registry } from 'prom-client';
import { captureLogs } from '../../support/logs';
import { LEASE_NAMES, type LeaderElector } from '../../../src/contract/leader';
import type { KubeClient } from '../../../src/store/kube/client';
import { KubeWriter } from '../../../src/store/kube/writes';
import type { MemoryStore } from '../../../src/store/memory-store';
import type { KubeSource } from '../../../src/store/kube/source';
import type { DiscoverySelectorSource } from '../../../src/store/kube/namespace-filter';
import { logs } from '../../../src/log/logger';

logs.configure('kube:error,leader:error,untaint:error');

const TAINT = 'cni.istio.io/not-ready';
const OURS: Taint = { key: TAINT, effect: 'NoSchedule' };
const OTHER: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
const CNI_NS = 'istio-system';
const FAST_BACKOFF = { initialMs: 20, maxMs: 200 };

/** A LeaderElector the test drives: leadership is granted and taken away by hand. */
class HandLeader implements LeaderElector {
  readonly leases: string[] = [];
  private run: (() => () => void | Promise<void>) | undefined;
  private stop: (() => void | Promise<void>) | undefined;

  runWhileLeader(lease: string, run: () => () => void | Promise<void>): void {
    this.leases.push(lease);
    this.run = run;
  }

  lead(): void {
    if (!this.run) throw new Error('nothing registered to lead');
    this.stop = this.run();
  }

  async lose(): Promise<void> {
    await this.stop?.();
    this.stop = undefined;
  }
}

function node(name: string, taints?: Taint[]) {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: taints ? { taints } : {} };
}

function cniPod(
  name: string,
  nodeName: string,
  o: { ready?: boolean; phase?: string; namespace?: string; labels?: Record<string, string> } = {},
) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: o.namespace ?? CNI_NS, labels: o.labels ?? { 'k8s-app': 'istio-cni-node' } },
    spec: { nodeName, hostNetwork: true, containers: [{ name: 'install-cni', image: 'istio/install-cni' }] },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: (o.ready ?? true) ? 'True' : 'False' }],
    },
  };
}

let server: TestApiServer;
let client: KubeClient;
let store: MemoryStore;
let source: KubeSource;
let leader: HandLeader;

const taintsOn = (name: string) =>
  (server.get('v1', 'Node', undefined, name)?.['spec'] as { taints?: Taint[] } | undefined)?.taints ?? [];
const nodeWrites = (name?: string) =>
  server.requests.filter(
    (r) => r.resource === 'nodes' && r.verb === 'patch' && (name === undefined || r.name === name),
  );
const nodeReads = (name: string) =>
  server.requests.filter((r) => r.resource === 'nodes' && r.verb === 'get' && r.name === name);
const untainted = (name: string) => () => !taintsOn(name).some((t) => t.key === TAINT);

function host(enabled = true, mode = 'kubernetes') {
  return {
    options: {
      mode,
      flags: { cniNamespace: CNI_NS },
      env: { PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS: enabled, PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME: TAINT },
    },
    store,
    leader,
  };
}

async function startStore(mesh?: DiscoverySelectorSource): Promise<void> {
  ({ store, source } = startSource(client, mesh ? { mesh } : {}));
  await source.start();
  await store.whenSynced();
}

/** Starts the controller as the leader, with test timings; `writer` replaces the real one. */
function startLeading(writer?: Pick<KubeWriter, 'get' | 'patch'>): void {
  const started = startNodeUntaintController(host(), client, {
    watchTiming: FAST_TIMING,
    backoff: FAST_BACKOFF,
    ...(writer ? { writer } : {}),
  });
  expect(started).toBe(true);
  leader.lead();
}

/** A control node that must be untainted: once it is, the controller has seen the pods put before it. */
async function controlNodeUntainted(): Promise<void> {
  server.put(node('control', [OURS]));
  server.put(cniPod('istio-cni-control', 'control'));
  await eventually('the control node is untainted', untainted('control'));
}

beforeEach(async () => {
  ({ server, client } = await startServer());
  for (const ns of [CNI_NS, 'kube-system', 'default']) server.put(namespace(ns));
  leader = new HandLeader();
});

afterEach(async () => {
  await leader.lose();
  await source.stop();
  await server.close();
});

test('a Ready istio-cni pod removes the taint from its node, with one read and one patch', async () => {
  server.put(node('node-a', [OURS]));
  server.put(cniPod('istio-cni-a', 'node-a'));
  await startStore();
  startLeading();
  await eventually('node-a is untainted', untainted('node-a'));
  expect(taintsOn('node-a')).toEqual([]);
  expect(nodeWrites('node-a')).toHaveLength(1);
  expect(nodeReads('node-a')).toHaveLength(1);
});

test('only our taint goes: the node keeps every other taint, in order', async () => {
  const zone = { key: 'zone', value: 'b', effect: 'PreferNoSchedule' };
  server.put(node('node-a', [OTHER, OURS, zone, { key: TAINT, effect: 'NoExecute' }]));
  server.put(cniPod('istio-cni-a', 'node-a'));
  await startStore();
  startLeading();
  await eventually('node-a is untainted', untainted('node-a'));
  expect(taintsOn('node-a')).toEqual([OTHER, zone]);
});

test('a not-Ready istio-cni pod leaves the taint, and the pod turning Ready later removes it', async () => {
  server.put(node('node-a', [OURS]));
  server.put(cniPod('istio-cni-a', 'node-a', { ready: false }));
  await startStore();
  startLeading();
  await controlNodeUntainted();
  expect(taintsOn('node-a')).toEqual([OURS]);
  expect(nodeWrites('node-a')).toHaveLength(0);

  server.put(cniPod('istio-cni-a', 'node-a', { ready: true }));
  await eventually('node-a is untainted once its pod is Ready', untainted('node-a'));
  expect(nodeWrites('node-a')).toHaveLength(1);
});

test('a node that appears after its Ready istio-cni pod is untainted when it arrives', async () => {
  server.put(cniPod('istio-cni-a', 'node-a'));
  await startStore();
  startLeading();
  await controlNodeUntainted();
  server.put(node('node-a', [OURS]));
  await eventually('node-a is untainted', untainted('node-a'));
});

test.each([
  ['a Failed pod (even one that last reported Ready)', cniPod('istio-cni-a', 'node-a', { phase: 'Failed' })],
  ['a Ready pod in another namespace', cniPod('istio-cni-a', 'node-a', { namespace: 'kube-system' })],
  ['a Ready pod without the istio-cni label', cniPod('istio-cni-a', 'node-a', { labels: { app: 'istio-cni' } })],
])('%s leaves the taint', async (_name, pod) => {
  server.put(node('node-a', [OURS]));
  server.put(pod);
  await startStore();
  startLeading();
  await controlNodeUntainted();
  expect(taintsOn('node-a')).toEqual([OURS]);
  expect(nodeWrites('node-a')).toHaveLength(0);
});

test('a node without the taint is neither read nor written, whatever its pods', async () => {
  server.put(node('node-a', [OTHER]));
  server.put(node('node-b'));
  server.put(cniPod('istio-cni-a', 'node-a'));
  server.put(cniPod('istio-cni-b', 'node-b'));
  await startStore();
  startLeading();
  await controlNodeUntainted();
  expect(nodeWrites()).toHaveLength(1);
  expect([...nodeReads('node-a'), ...nodeReads('node-b')]).toEqual([]);
  expect(taintsOn('node-a')).toEqual([OTHER]);
});

test('it never adds a taint: a pod going not-Ready or away after the untaint writes nothing', async () => {
  server.put(node('node-a', [OURS]));
  server.put(cniPod('istio-cni-a', 'node-a'));
  await startStore();
  startLeading();
  await eventually('node-a is untainted', untainted('node-a'));
  server.put(cniPod('istio-cni-a', 'node-a', { ready: false }));
  server.delete('v1', 'Pod', CNI_NS, 'istio-cni-a');
  await controlNodeUntainted();
  expect(taintsOn('node-a')).toEqual([]);
  expect(nodeWrites('node-a')).toHaveLength(1);
});

test('a taint put back while istio-cni is Ready is removed again', async () => {
  server.put(node('node-a', [OURS]));
  server.put(cniPod('istio-cni-a', 'node-a'));
  await startStore();
  startLeading();
  await eventually('node-a is untainted', untainted('node-a'));
  server.put(node('node-a', [OURS]));
  await eventually('node-a is untainted again', () => untainted('node-a')() && nodeWrites('node-a').length === 2);
});

test('a patch whose test op fails (the taints changed) is retried on a fresh read and keeps the newcomer', async () => {
  server.put(node('node-a', [OURS, OTHER]));
  server.put(cniPod('istio-cni-a', 'node-a'));
  await startStore();
  const real = new KubeWriter(client);
  const newcomer: Taint = { key: 'example.com/maintenance', effect: 'NoSchedule' };
  let disturbed = false;
  // Another writer adds a taint between our read and our patch, once.
  const writer: Pick<KubeWriter, 'get' | 'patch'> = {
    get: (ref, opts) => real.get(ref, opts),
    patch: async (ref, patch, opts) => {
      if (!disturbed) {
        disturbed = true;
        server.put(node('node-a', [OURS, OTHER, newcomer]));
      }
      return real.patch(ref, patch, opts);
    },
  };
  startLeading(writer);
  await eventually('node-a is untainted', untainted('node-a'));
  expect(taintsOn('node-a')).toEqual([OTHER, newcomer]);
  expect(nodeWrites('node-a')).toHaveLength(2);
  expect(nodeReads('node-a')).toHaveLength(2);
});

test('a refused patch (here 403 twice) is retried with backoff until it lands', async () => {
  server.put(node('node-a', [OURS]));
  server.put(cniPod('istio-cni-a', 'node-a'));
  server.injectFault({ verb: 'patch', resource: 'nodes', status: 403, reason: 'Forbidden', times: 2 });
  await startStore();
  startLeading();
  await eventually('node-a is untainted', untainted('node-a'));
  expect(nodeWrites('node-a')).toHaveLength(3);
  expect(nodeReads('node-a')).toHaveLength(3);
});

test('istio-cni pods are found even when discoverySelectors leave their namespace out', async () => {
  server.put(namespace('team-a', { mesh: 'on' }));
  server.put(node('node-a', [OURS]));
  server.put(cniPod('istio-cni-a', 'node-a'));
  await startStore({
    current: () => ({ discoverySelectors: [{ matchLabels: { mesh: 'on' } }] }),
    subscribe: () => () => undefined,
  });
  expect(store.list('Pod', CNI_NS)).toEqual([]);
  startLeading();
  await eventually('node-a is untainted', untainted('node-a'));
});

test('disabled (the default), or in local mode, nothing is registered and nothing is written', async () => {
  server.put(node('node-a', [OURS]));
  server.put(cniPod('istio-cni-a', 'node-a'));
  await startStore();
  expect(startNodeUntaintController(host(false), client)).toBe(false);
  expect(startNodeUntaintController(host(true, 'local'), client)).toBe(false);
  expect(leader.leases).toEqual([]);
  await eventually('the shared store holds the Ready pod', () => store.list('Pod', CNI_NS).length === 1);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(server.requests.filter((r) => r.resource === 'nodes' && r.verb !== 'list' && r.verb !== 'watch')).toEqual([]);
  expect(taintsOn('node-a')).toEqual([OURS]);
});

test(`it runs under istiod's lock ${LEASE_NAMES.nodeUntaint}: no watch and no write until leading, none after leadership is lost`, async () => {
  server.put(node('node-a', [OURS]));
  server.put(cniPod('istio-cni-a', 'node-a'));
  await startStore();
  expect(startNodeUntaintController(host(), client, { watchTiming: FAST_TIMING, backoff: FAST_BACKOFF })).toBe(true);
  expect(leader.leases).toEqual([NODE_UNTAINT_LEASE]);
  expect(NODE_UNTAINT_LEASE).toBe('istio-node-untaint');

  // A follower: the shared store has everything, yet nothing is watched in the cni namespace or written.
  await eventually('the shared store holds the Ready pod', () => store.list('Pod', CNI_NS).length === 1);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const cniWatches = () => server.requests.filter((r) => r.resource === 'pods' && r.namespace === CNI_NS);
  expect(cniWatches()).toEqual([]);
  expect(nodeWrites()).toEqual([]);

  leader.lead();
  await eventually('node-a is untainted by the new leader', untainted('node-a'));
  expect(cniWatches().length).toBeGreaterThan(0);

  await leader.lose();
  server.put(node('node-b', [OURS]));
  server.put(cniPod('istio-cni-b', 'node-b'));
  await eventually('the shared store holds node-b', () => store.get('Node', undefined, 'node-b') !== undefined);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(taintsOn('node-b')).toEqual([OURS]);
  expect(nodeWrites()).toHaveLength(1);
});

test(`a node patch refused with 403 is tried UNTAINT_MAX_ATTEMPTS (${UNTAINT_MAX_ATTEMPTS}) times, each failure logged at warn and counted, then left until the node or its pod changes`, async () => {
  server.put(node('node-a', [OURS]));
  server.put(cniPod('istio-cni-a', 'node-a'));
  server.injectFault({
    verb: 'patch',
    resource: 'nodes',
    name: 'node-a',
    status: 403,
    reason: 'Forbidden',
    times: 1_000,
  });
  await startStore();
  const metrics = new Registry();
  const failures = async () =>
    (await metrics.getSingleMetric(UNTAINT_FAILURES_METRIC)?.get())?.values.find((v) => v.labels['code'] === '403')
      ?.value ?? 0;
  logs.configure('untaint:warn');
  const captured = captureLogs();
  try {
    expect(
      startNodeUntaintController({ ...host(), metrics }, client, { watchTiming: FAST_TIMING, backoff: FAST_BACKOFF }),
    ).toBe(true);
    leader.lead();
    await eventually('every attempt is spent', async () => (await failures()) === UNTAINT_MAX_ATTEMPTS);
    // Another node is untainted meanwhile, and time well past the longest backoff goes by: no
    // further attempt on node-a.
    await controlNodeUntainted();
    await new Promise((resolve) => setTimeout(resolve, FAST_BACKOFF.maxMs * 3));
    expect(nodeWrites('node-a')).toHaveLength(UNTAINT_MAX_ATTEMPTS);
    expect(await failures()).toBe(UNTAINT_MAX_ATTEMPTS);
    const warnings = captured.lines().filter((l) => l['node'] === 'node-a' && l['level'] === 'warn');
    expect(warnings.map((l) => l['code'])).toEqual(Array<number>(UNTAINT_MAX_ATTEMPTS).fill(403));
    expect(String(warnings.at(-1)!['msg'])).toContain('giving up until the node or its istio-cni pod changes');
  } finally {
    captured.restore();
    logs.configure('untaint:error');
  }

  // A change of the node brings it back for another bounded round.
  server.put({ ...node('node-a', [OURS]), metadata: { name: 'node-a', labels: { pool: 'b' } } });
  await eventually('a second round is spent', async () => (await failures()) === 2 * UNTAINT_MAX_ATTEMPTS);
  // The refusal is fixed; the next change of the istio-cni pod removes the taint.
  server.clearFaults();
  server.put({
    ...cniPod('istio-cni-a', 'node-a'),
    metadata: { ...cniPod('istio-cni-a', 'node-a').metadata, labels: { 'k8s-app': 'istio-cni-node', rev: '2' } },
  });
  await eventually('node-a is untainted', untainted('node-a'));
  expect(nodeWrites('node-a')).toHaveLength(2 * UNTAINT_MAX_ATTEMPTS + 1);
});
