// When a singleton writer's leadership ends, its stop cancels the write under way (KubeWriter would
// otherwise keep retrying it for seconds, past the moment another replica takes the lock) and
// starts no other. Each controller here gets a write that answers only when cancelled, the shape
// of a write retrying against an API server that fails.

import { NodeUntaintController } from '../../../src/controllers/untaint/controller';
import { CNI_PODS_BY_NODE, podNodeName } from '../../../src/controllers/untaint/cni-pods';
import { IpAutoallocateController } from '../../../src/controllers/ipallocate';
import { AmbientStatusController } from '../../../src/controllers/status';
import { RootCertPublisher } from '../../../src/ca/roots/root-cert-publisher';
import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';
import { logs } from '../../../src/log/logger';
import { eventually } from '../../support/apiserver';
import { authz, indexOf, namespace, storeWith } from '../../support/ambient/fixtures';

logs.configure('untaint:silent,ipallocate:silent,status:silent,ca:silent');

/** How long a stop may take once its write is cancelled; a stop that waits for the write never ends. */
const STOP_WITHIN_MS = 2_000;

/** Writes that never answer until their signal aborts; records the signal each was given. */
class HangingWrites {
  readonly signals: (AbortSignal | undefined)[] = [];

  write<T>(signal: AbortSignal | undefined): Promise<T> {
    this.signals.push(signal);
    return new Promise<T>((_resolve, reject) => {
      signal?.addEventListener('abort', () => reject(new Error('cancelled')), { once: true });
    });
  }

  started(): Promise<void> {
    return eventually('a write is under way', () => this.signals.length > 0);
  }
}

/** Resolves true if `stop` settles within STOP_WITHIN_MS. */
async function stopsInTime(stop: () => void | Promise<void>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), STOP_WITHIN_MS)));
  const stopped = Promise.resolve(stop()).then(() => true);
  const inTime = await Promise.race([stopped, late]);
  clearTimeout(timer);
  return inTime;
}

let writes: HangingWrites;
beforeEach(() => (writes = new HangingWrites()));

test('node untaint: stop cancels the taint patch under way and patches nothing after', async () => {
  const node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'node-a', uid: 'uid-a' },
    spec: { taints: [{ key: 'cni.istio.io/not-ready', effect: 'NoSchedule' }] },
  };
  const nodes = new MemoryStore();
  nodes.upsert('Node', [node]);
  const cniPods = new MemoryStore();
  cniPods.addIndex('Pod', CNI_PODS_BY_NODE, (p) => {
    const n = podNodeName(p);
    return n === undefined ? [] : [n];
  });
  cniPods.upsert('Pod', [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'istio-cni-a', namespace: 'istio-system', labels: { 'k8s-app': 'istio-cni-node' } },
      spec: { nodeName: 'node-a' },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    },
  ]);
  const c = new NodeUntaintController({
    nodes,
    cniPods,
    rule: { taintKey: 'cni.istio.io/not-ready', cniNamespace: 'istio-system' },
    writer: {
      get: <T>() => Promise.resolve(node as T),
      patch: <T>(_ref: unknown, _patch: unknown, opts?: { signal?: AbortSignal }) => writes.write<T>(opts?.signal),
    },
  });
  c.start();
  await writes.started();
  expect(await stopsInTime(() => c.stop())).toBe(true);
  expect(writes.signals.map((s) => s?.aborted)).toEqual([true]);
});

test('ServiceEntry IP allocation: stop cancels the status write under way and writes nothing after', async () => {
  const store = new MemoryStore();
  store.expectSync('test');
  const entry = (name: string): KubeObject => ({
    apiVersion: 'networking.istio.io/v1',
    kind: 'ServiceEntry',
    metadata: { name, namespace: 'default', resourceVersion: '1' },
    spec: { hosts: [`${name}.example.com`], resolution: 'DNS' },
  });
  store.upsert('ServiceEntry', [entry('a'), entry('b')]);
  store.markSynced('test');
  const c = new IpAutoallocateController({
    store,
    prefixes: { ipv4: '240.240.0.0/16', ipv6: '2001:2::/48' },
    writer: {
      write: (_current, _addresses, signal) => writes.write(signal),
      read: (namespace, name) => Promise.resolve(store.get('ServiceEntry', namespace, name)),
      list: () => Promise.resolve(store.list('ServiceEntry')),
    },
  });
  const stop = c.start();
  await writes.started();
  expect(await stopsInTime(stop)).toBe(true);
  // Entry b was queued behind a: it is not written once the leadership has ended.
  expect(writes.signals.map((s) => s?.aborted)).toEqual([true]);
});

test('ambient status: stop cancels the condition write under way and writes nothing after', async () => {
  const store = storeWith([namespace('ns1'), authz('p1', 'ns1', {}), authz('p2', 'ns1', {})]);
  const index = indexOf(store);
  const c = new AmbientStatusController({
    store,
    facts: index,
    debounceMs: 1,
    sink: {
      rateLimited: false,
      current: () => undefined,
      write: (_kind, _o, _conditions, signal) => writes.write(signal),
      forget: () => undefined,
    },
  });
  try {
    c.start();
    await writes.started();
    expect(await stopsInTime(() => c.stop())).toBe(true);
    expect(writes.signals.map((s) => s?.aborted)).toEqual([true]);
  } finally {
    index.close();
  }
});

test('root certificates: stop cancels the ConfigMap write under way and writes no further namespace', async () => {
  const store = storeWith([namespace('ns1'), namespace('ns2')]);
  const publisher = new RootCertPublisher(
    store,
    {
      list: () => Promise.resolve([]),
      put: (_ns, _name, _data, _labels, signal) => writes.write(signal),
    },
    'istio-ca-root-cert',
    () => 'ROOT',
  );
  const stop = publisher.start(() => () => undefined);
  await writes.started();
  expect(await stopsInTime(stop)).toBe(true);
  expect(writes.signals.map((s) => s?.aborted)).toEqual([true]);
});
