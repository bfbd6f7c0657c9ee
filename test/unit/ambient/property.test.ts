// After any random sequence of store events, the incremental index equals a from-scratch rebuild
// byte for byte, and each change set is exactly the difference between consecutive states.

import { AmbientIndex } from '../../../src/ambient/ambient-index';
import type { AmbientFeatures } from '../../../src/ambient/settings';
import type { KindId } from '../../../src/store/kinds';
import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';
import {
  ADDRESS_TYPE_URL,
  AUTHORIZATION_TYPE_URL,
  ChangeSet,
  XDS_TYPE_ORDER,
} from '../../../src/contract/xds-resources';
import { meshSource } from '../../support/ambient/fixtures';
import { COUNTS, generator, prng, randomBatch, randomMeshConfig, REVISION } from '../../support/ambient/random-mesh';

const EVENTS = 1000;
const SEED = 20240611;

function snapshot(index: AmbientIndex): Map<string, string> {
  const out = new Map<string, string>();
  for (const t of XDS_TYPE_ORDER)
    for (const r of index.all(t)) out.set(`${t} ${r.name}`, Buffer.from(r.bytes).toString('hex'));
  return out;
}

function diff(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of after) if (before.get(k) !== v) out.push(`updated ${k}`);
  for (const k of before.keys()) if (!after.has(k)) out.push(`removed ${k}`);
  return out.sort();
}

function flatten(changes: readonly ChangeSet[]): string[] {
  const out: string[] = [];
  for (const c of changes) {
    for (const n of c.updated) out.push(`updated ${c.typeUrl} ${n}`);
    for (const n of c.removed) out.push(`removed ${c.typeUrl} ${n}`);
  }
  return out.sort();
}

// istiod's defaults, then the switches that add dependencies (an implicit waypoint policy per
// waypoint with pods) or drop some (no allocated addresses, no cross-kind selection).
const FEATURE_SETS: [string, Partial<AmbientFeatures>][] = [
  ["istiod's default switches", {}],
  ['PILOT_AUTO_ALLOW_WAYPOINT_POLICY=true', { autoAllowWaypointPolicy: true }],
  [
    'every switch away from its default',
    {
      autoAllowWaypointPolicy: true,
      ipAutoallocate: false,
      serviceEntrySelectPods: false,
      k8sSelectWorkloadEntries: false,
    },
  ],
];

describe.each(FEATURE_SETS)('incremental ambient index (property, %s)', (_name, features) => {
  it(`equals a from-scratch rebuild after each of ${EVENTS} random events, and change sets are exactly the difference`, () => {
    const rand = prng(SEED);
    const g = generator(rand);
    const { maybe, make } = g;
    const store = new MemoryStore();
    // Start from a populated mesh so updates and deletes dominate.
    const initial: { kind: KindId; object: KubeObject }[] = [];
    for (const [kind, n] of Object.entries(COUNTS))
      for (let i = 0; i < n; i++) if (maybe(0.7)) initial.push(make[kind]!(i));
    store.apply(initial);
    const mesh = meshSource();
    const index = new AmbientIndex({
      store,
      mesh,
      clusterId: 'Kubernetes',
      domain: 'cluster.local',
      revision: REVISION,
      features,
    });
    let emitted: ChangeSet[] = [];
    index.subscribe((c) => emitted.push(...c));
    let before = snapshot(index);
    let events = 0;
    let nonEmptyBatches = 0;
    while (events < EVENTS) {
      const batch = randomBatch(rand, g, store);
      events += batch.length;
      if (maybe(0.02)) {
        // A meshConfig change is its own push; the batch after it is checked on its own.
        mesh.set(randomMeshConfig(g));
        before = snapshot(index);
      }
      emitted = [];
      store.apply(batch);
      const after = snapshot(index);
      const fresh = new AmbientIndex({
        store,
        mesh,
        clusterId: 'Kubernetes',
        domain: 'cluster.local',
        revision: REVISION,
        features,
      });
      const rebuilt = snapshot(fresh);
      fresh.close();
      expect(diff(rebuilt, after)).toEqual([]);
      expect(flatten(emitted)).toEqual(diff(before, after));
      expect(new Set(emitted.map((c) => c.typeUrl)).size).toBe(emitted.length === 0 ? 0 : emitted.length);
      if (emitted.length) nonEmptyBatches++;
      before = after;
    }
    expect(nonEmptyBatches).toBeGreaterThan(EVENTS / 10);
    expect([...index.all(ADDRESS_TYPE_URL)].length).toBeGreaterThan(0);
    expect([...index.all(AUTHORIZATION_TYPE_URL)].length).toBeGreaterThan(0);
    index.close();
  });
});
