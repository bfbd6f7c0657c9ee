// What istiod-ts tells every ztunnel about a folder of manifests, without a socket: the folder read
// by the local source, the ambient index over it, and each resource decoded to the shared JSON shape
// (ambient/codec.ts). The goldens test compares this with istiod's answers for the same folder.

import { AmbientIndex } from '../src/ambient/ambient-index';
import { ambientFeatures, type AmbientFeatures } from '../src/ambient/settings';
import { SERVE_ENV } from '../src/config/options';
import { parseEnv } from '../src/config/settings';
import { addressToJson, authorizationToJson } from '../src/ambient/codec';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL } from '../src/contract/xds-resources';
import { defaultMeshConfig } from '../src/mesh/defaults';
import type { MeshConfigSource } from '../src/mesh/types';
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
    const decode = (typeUrl: typeof ADDRESS_TYPE_URL | typeof AUTHORIZATION_TYPE_URL) => {
      const toJson = typeUrl === ADDRESS_TYPE_URL ? addressToJson : authorizationToJson;
      return new Map([...index.all(typeUrl)].map((r) => [r.name, toJson(r.bytes)]));
    };
    return { address: decode(ADDRESS_TYPE_URL), authorization: decode(AUTHORIZATION_TYPE_URL) };
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
 * as its cluster's objects (a remote one contributes Namespace, Node, Pod, Service, EndpointSlice
 * and Gateway only, as istiod reads it), Istio config from the local folder, the meshConfig
 * (serviceScopeConfigs) from `meshConfigFile`, and the index over all of them, decoded as
 * deriveFromFolder does. The cluster's network is its istio-system's topology.istio.io/network.
 *
 * WIRING NEEDED: src/multicluster/ (in progress elsewhere) derives this; replace the throw with a
 * call to it (roughly deriveFromClusters(folders.map((f) => ({ id: f.clusterId, dir: f.dir, local:
 * f.local })), ...)) and run test/interop/istiod-multicluster-goldens.test.ts with
 * ISTIOD_TS_MULTICLUSTER_GOLDENS=1, then drop that switch from the test.
 */
export type DeriveFromClusterFolders = (
  folders: readonly ClusterFolderInput[],
  features?: AmbientFeatures,
  meshConfigFile?: string,
) => Promise<DerivedResources>;

// A typed stub rather than a function body: its parameters are the contract, not used yet.
export const deriveFromClusterFolders: DeriveFromClusterFolders = () => {
  throw new Error('multicluster derivation not wired yet');
};
