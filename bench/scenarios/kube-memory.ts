// Bytes held per pod in the store at 100k pods, after the Kubernetes source slims them.
// Pods arrive as kubectl shows them (managedFields, last-applied annotation, full spec and status),
// go through JSON text as on the wire, are slimmed and stored. The heap is measured after a full
// GC (the bench runner passes --expose-gc); the informer's cache holds the same objects, so it
// only adds its map entries, measured separately.

import { randomUUID } from 'node:crypto';
import type { Measurement, Scenario } from '../scenario';
import { MemoryStore } from '../../src/store/memory-store';
import { slimObject } from '../../src/store/kube/slim';
import type { KubeObject } from '../../src/store/types';
import { fatPod } from '../../test/support/apiserver/fixtures';

const PODS = 100_000;
const NAMESPACES = 500;
const DEPLOYMENTS_PER_NAMESPACE = 20;
const BATCH = 1_000;
/** Sample of unslimmed pods kept to show what slimming saves. */
const FAT_SAMPLE = 5_000;
const TARGET_BYTES_PER_POD = 1_536;

function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
  return process.memoryUsage().heapUsed;
}

/** Pod number i as the API server would send it: unique name, uid, IPs and version. */
function wirePod(i: number): string {
  const ns = `ns-${i % NAMESPACES}`;
  const app = `app${Math.floor(i / NAMESPACES) % DEPLOYMENTS_PER_NAMESPACE}`;
  const pod = fatPod(ns, `${app}-7d9f8c6b5-${i.toString(36).padStart(5, '0')}`, i);
  const meta = pod.metadata as Record<string, unknown>;
  meta['uid'] = randomUUID();
  meta['resourceVersion'] = String(100_000 + i);
  meta['creationTimestamp'] = '2026-01-01T00:00:00Z';
  return JSON.stringify(pod);
}

async function measure(): Promise<{ slim: number; cache: number; fat: number }> {
  const store = new MemoryStore();
  const before = heapAfterGc();
  let batch: KubeObject[] = [];
  const kept: KubeObject[] = [];
  for (let i = 0; i < PODS; i++) {
    const slim = slimObject('Pod', JSON.parse(wirePod(i)) as KubeObject);
    batch.push(slim);
    kept.push(slim);
    if (batch.length === BATCH) {
      store.upsert('Pod', batch);
      batch = [];
      // Let the event loop breathe, as the informer's chunks would.
      if (i % (BATCH * 10) === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }
  store.upsert('Pod', batch);
  batch = [];
  const afterStore = heapAfterGc();

  // client-node's informer cache: namespace -> name -> the same object.
  const cache = new Map<string, Map<string, KubeObject>>();
  for (const o of kept) {
    let inNs = cache.get(o.metadata.namespace!);
    if (!inNs) cache.set(o.metadata.namespace!, (inNs = new Map<string, KubeObject>()));
    inNs.set(o.metadata.name, o);
  }
  kept.length = 0;
  const afterCache = heapAfterGc();

  const fat: KubeObject[] = [];
  const beforeFat = heapAfterGc();
  for (let i = 0; i < FAT_SAMPLE; i++) fat.push(JSON.parse(wirePod(PODS + i)) as KubeObject);
  const afterFat = heapAfterGc();

  const result = {
    slim: (afterStore - before) / PODS,
    cache: (afterCache - afterStore) / PODS,
    fat: (afterFat - beforeFat) / FAT_SAMPLE,
  };
  // Keep everything alive until measured.
  if (store.count('Pod') !== PODS || cache.size !== NAMESPACES || fat.length !== FAT_SAMPLE)
    throw new Error('bench lost objects');
  return result;
}

const scenario: Scenario = {
  name: 'kube-memory',
  description: `heap bytes per pod held by the store at ${PODS / 1000}k kubectl-style pods after slimming`,
  async run(): Promise<Measurement[]> {
    const exact = typeof (globalThis as { gc?: unknown }).gc === 'function';
    const note = exact ? '' : ' (no --expose-gc: approximate)';
    const { slim, cache, fat } = await measure();
    return [
      {
        metric: `store bytes per slimmed pod at ${PODS / 1000}k pods${note}`,
        value: Math.round(slim),
        unit: 'B',
        runs: [Math.round(slim)],
        reference: { metric: 'bytes per unslimmed pod', value: Math.round(fat), ratio: slim / fat },
        target: `<= ${TARGET_BYTES_PER_POD} B`,
        met: slim <= TARGET_BYTES_PER_POD,
      },
      {
        metric: `informer cache entries per pod (objects shared with the store)${note}`,
        value: Math.round(cache),
        unit: 'B',
        runs: [Math.round(cache)],
      },
    ];
  },
};

export default scenario;
