// The multicluster bench divides every mesh row by the one-cluster reference's, which only means
// "what the join costs" if both sides serve the same pods. These checks hold the two sides to
// that at a small size (build only, no streams): a network label lost from a remote cluster, or a
// generator change that shifted addresses into a collision, would drop pods from the mesh side
// and flatter its ratios without failing anything else.

import { CLUSTERS, measure, type SideResult } from '../../../bench/multicluster-side';

const PODS_PER_CLUSTER = 300;

let reference: SideResult;
let mesh: SideResult;

beforeAll(async () => {
  reference = await measure({ side: 'reference', podsPerCluster: PODS_PER_CLUSTER, ztunnels: 0 });
  mesh = await measure({ side: 'mesh', podsPerCluster: PODS_PER_CLUSTER, ztunnels: 0 });
}, 60_000);

test('the reference is one cluster and the mesh three, with the same application pods', () => {
  expect(reference.clusters).toBe(1);
  expect(mesh.clusters).toBe(CLUSTERS);
  expect(mesh.pods).toBeGreaterThanOrEqual(CLUSTERS * PODS_PER_CLUSTER);
  expect(reference.pods).toBeGreaterThanOrEqual(CLUSTERS * PODS_PER_CLUSTER);
});

test("every cluster's pods are served: the mesh leaves out no more pods than the reference does", () => {
  // Pods that are no workload (none in the generated meshes today) are left out alike on both
  // sides; each cluster of the mesh has its own copy of the generator's fixed pods.
  const unserved = (s: SideResult) => s.pods - s.podWorkloads;
  expect(unserved(mesh)).toBeLessThanOrEqual(CLUSTERS * Math.max(unserved(reference), 0));
  expect(mesh.podWorkloads).toBeGreaterThanOrEqual(CLUSTERS * PODS_PER_CLUSTER);
});

// Only that both heap figures are taken, not that the second exceeds the first: here both sides
// share jest's process, so a collection can free the first side's leftovers (or jest's own) between
// the two readings and leave the "after" figure below the "before" one (a clean-clone CI run saw
// 15 MiB less). The bench forks each side into its own process, where the difference means what
// its rows say.
test('both sides report a build and the heap figures it is judged by', () => {
  for (const s of [reference, mesh]) {
    expect(s.buildMs).toBeGreaterThan(0);
    expect(s.buildCpuMs).toBeGreaterThan(0);
    for (const bytes of [s.heapStoresBytes, s.heapAfterBuildBytes]) {
      expect(Number.isSafeInteger(bytes)).toBe(true);
      expect(bytes).toBeGreaterThan(0);
    }
    expect(s.push).toBeUndefined();
  }
});
