// What istiod-ts tells every ztunnel about a folder of manifests, without a socket: the folder read
// by the local source, the ambient index over it, and each resource decoded to the shared JSON shape
// (ambient/codec.ts). The goldens test compares this with istiod's answers for the same folder.

import { AmbientIndex } from '../src/ambient/ambient-index';
import { ambientFeatures, type AmbientFeatures } from '../src/ambient/settings';
import { SERVE_ENV } from '../src/config/options';
import { parseEnv } from '../src/config/settings';
import { addressToJson, authorizationToJson } from '../src/ambient/codec';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL, type ResourceCache } from '../src/contract/xds-resources';
import { defaultMeshConfig } from '../src/mesh/defaults';
import type { MeshConfig, MeshConfigSource } from '../src/mesh/types';
import { applyMeshLayer } from '../src/mesh/build';
import { MeshIndex } from '../src/multicluster/mesh-index';
import type { ClusterDirectory, MeshCluster } from '../src/store/clusters';
import { readFileSync } from 'node:fs';
import { LocalSource } from '../src/store/local/local-source';
import { MemoryStore } from '../src/store/memory-store';

export interface DerivedResources {
  address: Map<string, Record<string, unknown>>;
  authorization: Map<string, Record<string, unknown>>;
}

/** A meshConfig that never changes: the defaults, as a server without a meshConfig file has. */
function staticMesh(): MeshConfigSource {
  const current = defaultMeshConfig();
  return { current: () => current, subscribe: () => () => undefined };
}

function fixedMesh(current: MeshConfig): MeshConfigSource {
  return { current: () => current, subscribe: () => () => undefined };
}

/** Every resource of the cache, decoded to the shared JSON shape. */
function decodeAll(cache: ResourceCache): DerivedResources {
  const decode = (typeUrl: typeof ADDRESS_TYPE_URL | typeof AUTHORIZATION_TYPE_URL) => {
    const toJson = typeUrl === ADDRESS_TYPE_URL ? addressToJson : authorizationToJson;
    return new Map([...cache.all(typeUrl)].map((r) => [r.name, toJson(r.bytes)]));
  };
  return { address: decode(ADDRESS_TYPE_URL), authorization: decode(AUTHORIZATION_TYPE_URL) };
}

/** istiod's environment switches (names as istiod reads them) as the index's features. */
export function featuresFromEnv(env: Readonly<Record<string, string>> = {}): AmbientFeatures {
  return ambientFeatures(parseEnv(SERVE_ENV, env));
}

export async function deriveFromFolder(
  dir: string,
  clusterId = 'Kubernetes',
  features?: AmbientFeatures,
): Promise<DerivedResources> {
  const store = new MemoryStore();
  const source = new LocalSource({ dir, writer: store, watch: false, now: () => new Date('2026-01-01T00:00:00Z') });
  await source.start();
  await source.stop();
  const index = new AmbientIndex({
    store,
    mesh: staticMesh(),
    clusterId,
    domain: 'cluster.local',
    ...(features ? { features } : {}),
  });
  try {
    return decodeAll(index);
  } finally {
    index.close();
  }
}

/** One cluster's folder, as interop/fixtures.ts lays a multicluster fixture out. */
export interface ClusterFolderInput {
  clusterId: string;
  dir: string;
  /** The config cluster, whose ztunnels the multicluster goldens recorded (exactly one). */
  local: boolean;
}

/**
 * What istiod-ts tells a ztunnel of the local cluster about a multicluster mesh: each folder read
 * as its cluster's objects into its own store, the mesh index (src/multicluster) over them with the
 * meshConfig of `meshConfigFile` (serviceScopeConfigs), decoded as deriveFromFolder does. A remote
 * folder's Istio objects are in its store but never read, as istiod reads Istio config from the
 * config cluster only; each cluster's network is its istio-system's topology.istio.io/network.
 */
export async function deriveFromClusterFolders(
  folders: readonly ClusterFolderInput[],
  features?: AmbientFeatures,
  meshConfigFile?: string,
): Promise<DerivedResources> {
  const local = folders.find((f) => f.local);
  if (!local) throw new Error('a multicluster fixture needs exactly one local cluster');
  const clusters: MeshCluster[] = [];
  for (const f of folders) {
    const store = new MemoryStore();
    const source = new LocalSource({
      dir: f.dir,
      writer: store,
      watch: false,
      now: () => new Date('2026-01-01T00:00:00Z'),
    });
    await source.start();
    await source.stop();
    clusters.push({ id: f.clusterId, local: f.local, store, synced: () => true });
  }
  const mesh = meshConfigFile
    ? fixedMesh(
        applyMeshLayer(defaultMeshConfig(), { source: meshConfigFile, text: readFileSync(meshConfigFile, 'utf8') }),
      )
    : staticMesh();
  const directory: ClusterDirectory = {
    localId: local.clusterId,
    get: (id) => clusters.find((c) => c.id === id),
    list: () => [...clusters].sort((a, b) => (a.local ? -1 : b.local ? 1 : a.id < b.id ? -1 : 1)),
    subscribe: () => () => undefined,
  };
  const index = new MeshIndex({
    clusters: directory,
    mesh,
    domain: 'cluster.local',
    systemNamespace: 'istio-system',
    ...(features ? { features } : {}),
  });
  try {
    return decodeAll(index);
  } finally {
    index.close();
  }
}
