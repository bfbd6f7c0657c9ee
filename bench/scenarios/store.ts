// The object store's write path with indexes, against a plain Map as the reference measured in
// the same run: how much the indexing and event batching cost per object.

import { median, Scenario } from '../scenario';
import { MemoryStore } from '../../src/store/memory-store';
import type { KubeObject } from '../../src/store/types';

const PODS = 100_000;
const RUNS = 5;

function pods(generation: number): KubeObject[] {
  const out: KubeObject[] = [];
  for (let i = 0; i < PODS; i++) {
    out.push({
      metadata: {
        name: `pod-${i}`,
        namespace: `ns-${i % 100}`,
        uid: `uid-${i}`,
        resourceVersion: `${generation}-${i}`,
        labels: { app: `app-${i % 500}` },
      },
      spec: { nodeName: `node-${i % 1000}`, serviceAccountName: `sa-${i % 50}` },
      status: { podIP: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
    });
  }
  return out;
}

function timeStore(objects: KubeObject[]): number {
  const store = new MemoryStore();
  // The store keeps spec and status as untyped JSON; these are the pod fields the indexes read.
  const spec = (o: KubeObject) => o.spec as { nodeName: string; serviceAccountName: string };
  store.addIndex('Pod', 'node-sa', (o) => [
    `${spec(o).nodeName}/${o.metadata.namespace}/${spec(o).serviceAccountName}`,
  ]);
  store.addIndex('Pod', 'ip', (o) => [(o.status as { podIP: string }).podIP]);
  let events = 0;
  store.subscribe((batch) => (events += batch.length));
  const start = process.hrtime.bigint();
  for (let i = 0; i < objects.length; i += 100) store.upsert('Pod', objects.slice(i, i + 100));
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (events !== objects.length) throw new Error(`expected ${objects.length} events, saw ${events}`);
  return ms;
}

function timeMap(objects: KubeObject[]): number {
  const map = new Map<string, KubeObject>();
  const start = process.hrtime.bigint();
  for (const o of objects) map.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const scenario: Scenario = {
  name: 'store',
  description: `MemoryStore upsert of ${PODS} pods with two indexes, vs a plain Map`,
  run() {
    const objects = pods(1);
    const storeRuns: number[] = [];
    const mapRuns: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      storeRuns.push((PODS / timeStore(objects)) * 1000);
      mapRuns.push((PODS / timeMap(objects)) * 1000);
    }
    const store = median(storeRuns);
    const map = median(mapRuns);
    return Promise.resolve([
      {
        metric: 'pod upserts per second (2 indexes, events in batches of 100)',
        value: store,
        unit: 'objects/s',
        runs: storeRuns,
        reference: { metric: 'Map.set per second', value: map, ratio: store / map },
      },
    ]);
  },
};

export default scenario;
