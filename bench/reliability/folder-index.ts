// An ambient index built from a folder of manifests the way the server builds it in local mode
// (same options), loaded once without watching: the "fresh build" the soak compares the
// server's final xDS state with, and the cache the xDS fuzz target serves from.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { AmbientIndex } from '../../src/ambient/ambient-index';
import type { ServeOptions } from '../../src/config/options';
import { defaultMeshConfig } from '../../src/mesh/defaults';
import type { MeshConfigSource } from '../../src/mesh/types';
import { LocalSource } from '../../src/store/local/local-source';
import { MemoryStore } from '../../src/store/memory-store';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL, XdsTypeUrl } from '../../src/contract/xds-resources';

/** The repository root, found from here whether running from bench/ (jest) or dist/bench/ (npm run). */
function repoRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

export const DEMO_DIR = path.join(repoRoot(), 'examples/demo');

export function staticMesh(): MeshConfigSource {
  const mesh = defaultMeshConfig();
  return { current: () => mesh, subscribe: () => () => undefined };
}

export interface FolderIndex {
  index: AmbientIndex;
  store: MemoryStore;
  close(): Promise<void>;
}

/** Loads `dir` once into a new store and derives the ambient index, with the server's settings when given. */
export async function buildFolderIndex(
  dir: string,
  options?: ServeOptions,
  mesh: MeshConfigSource = staticMesh(),
): Promise<FolderIndex> {
  const store = new MemoryStore();
  const source = new LocalSource({ dir, writer: store, watch: false });
  await source.start();
  const index = new AmbientIndex({
    store,
    mesh,
    clusterId: options?.env.CLUSTER_ID ?? 'Kubernetes',
    domain: options?.flags.domain ?? 'cluster.local',
    ...(options
      ? {
          systemNamespace: options.env.POD_NAMESPACE,
          revision: options.env.REVISION,
          enableDryRun: options.env.AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY,
        }
      : {}),
  });
  return {
    index,
    store,
    async close() {
      index.close();
      await source.stop();
    },
  };
}

/** Every resource's name and version, per type: what a wildcard client ends up holding. */
export function stateOf(index: AmbientIndex): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const type of [ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL] as XdsTypeUrl[]) {
    const entries = [...index.all(type)]
      .map((r) => [r.name, r.version] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    out[type] = Object.fromEntries(entries);
  }
  return out;
}
