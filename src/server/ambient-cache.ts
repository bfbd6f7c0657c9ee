// Which index ztunnel is served from. With AMBIENT_ENABLE_MULTI_NETWORK off, the config cluster's
// own index, as istiod's single-cluster collections; on, the mesh index that joins one index per
// cluster of the directory (remote clusters come and go with their secrets). Either way the status
// conditions, explain and /debug/ambient read the config cluster's index, as istiod writes status
// for its own cluster only.

import { AmbientIndex, type AmbientIndexOptions } from '../ambient/ambient-index';
import { ambientFeatures } from '../ambient/settings';
import type { ResourceCache } from '../contract/xds-resources';
import { MeshIndex } from '../multicluster/mesh-index';
import type { ClusterDirectory } from '../store/clusters';
import type { ServerContext } from './context';

export interface AmbientCache {
  /** What the xDS server serves. */
  served: ResourceCache;
  /** The config cluster's index. */
  local: AmbientIndex;
  /** The mesh index, when AMBIENT_ENABLE_MULTI_NETWORK is on. */
  mesh?: MeshIndex;
  close(): void;
}

export function createAmbientCache(ctx: ServerContext, clusters: ClusterDirectory): AmbientCache {
  const { env, flags } = ctx.options;
  const common = {
    mesh: ctx.mesh,
    domain: flags.domain,
    systemNamespace: env.POD_NAMESPACE,
    revision: env.REVISION,
    enableDryRun: env.AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY,
    features: ambientFeatures(env),
  } satisfies Omit<AmbientIndexOptions, 'store' | 'clusterId'>;
  if (!env.AMBIENT_ENABLE_MULTI_NETWORK) {
    const local = new AmbientIndex({ ...common, store: ctx.store, clusterId: env.CLUSTER_ID });
    return { served: local, local, close: () => local.close() };
  }
  const mesh = new MeshIndex({ ...common, clusters });
  return { served: mesh, local: mesh.local, mesh, close: () => mesh.close() };
}
