// The inputs istiod's own index judged: each fixture is a folder of manifests, either one the project
// ships (examples/demo) or one generated from fixed options. A golden records the fixture's name and
// the digest of the folder it was made from, so a changed input is caught as such instead of showing
// up as a wall of differences.

import { cpSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { generateMesh, type MeshOptions } from './mesh/generate';
import { folderDigest, writeMesh } from './mesh/write';
import { REPO_ROOT } from '../test/support/cli';

export interface Fixture {
  name: string;
  /** A folder of the repository, relative to its root. */
  folder?: string;
  /** Or a generated mesh. */
  mesh?: MeshOptions;
  /**
   * istiod's environment switches the golden was recorded with (the recorder's process environment)
   * and that istiod-ts derives with; unset ones have istiod's defaults.
   */
  env?: Readonly<Record<string, string>>;
}

export const GOLDEN_FIXTURES: readonly Fixture[] = [
  { name: 'demo', folder: 'examples/demo' },
  // Every kind and field the index derives from, small enough that its goldens stay reviewable.
  { name: 'generated', mesh: { workloads: 60, nodes: 3, namespaces: 4 } },
  // The same mesh under the switches that change what istiod derives (issue 34).
  {
    name: 'generated-auto-allow',
    mesh: { workloads: 60, nodes: 3, namespaces: 4 },
    env: { PILOT_AUTO_ALLOW_WAYPOINT_POLICY: 'true' },
  },
  {
    name: 'generated-switches-off',
    mesh: { workloads: 60, nodes: 3, namespaces: 4 },
    env: {
      PILOT_ENABLE_IP_AUTOALLOCATE: 'false',
      PILOT_ENABLE_SERVICEENTRY_SELECT_PODS: 'false',
      PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES: 'false',
    },
  },
];

export function fixtureNamed(name: string): Fixture {
  const f = GOLDEN_FIXTURES.find((x) => x.name === name);
  if (!f) throw new Error(`no fixture named ${name}; known: ${GOLDEN_FIXTURES.map((x) => x.name).join(', ')}`);
  return f;
}

/** Lays the fixture's manifests into `dir` and returns their digest. */
export function materialize(fixture: Fixture, dir: string): string {
  mkdirSync(dir, { recursive: true });
  if (fixture.folder) cpSync(path.join(REPO_ROOT, fixture.folder), dir, { recursive: true });
  else if (fixture.mesh) writeMesh(dir, generateMesh(fixture.mesh));
  else throw new Error(`fixture ${fixture.name} names neither a folder nor a mesh`);
  return folderDigest(dir);
}
