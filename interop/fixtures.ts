// The inputs istiod's own index judged: each fixture is a folder of manifests, either one the project
// ships (examples/demo) or one generated from fixed options. A golden records the fixture's name and
// the digest of the folder it was made from, so a changed input is caught as such instead of showing
// up as a wall of differences.

import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { generateMesh, type MeshOptions } from './mesh/generate';
import { generateClusterMesh, multiclusterMeshConfig, type MulticlusterMeshOptions } from './mesh/multicluster';
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

// --- Multicluster fixtures (test/golden/istiod-multicluster): one folder per cluster, recorded by
// istiod's fake discovery server with the remote clusters attached through remote secrets.

export interface MulticlusterFixture {
  name: string;
  mesh: MulticlusterMeshOptions;
  /** As Fixture.env; a multicluster golden is recorded with AMBIENT_ENABLE_MULTI_NETWORK=true at least. */
  env: Readonly<Record<string, string>>;
}

const SMALL: MeshOptions = { workloads: 20, nodes: 2, namespaces: 2 };

/**
 * Three clusters, two networks: cluster-1 (local) and cluster-2 share network-1 (so cluster-2 gets
 * its own addresses), cluster-3 is alone on network-2 behind its east-west gateway and reuses
 * cluster-1's addresses, as clusters behind different gateways may. apps-1 and apps-0/app-0 are
 * GLOBAL; the rest stays LOCAL. network-2's gateway is either cluster-3's own (class istio-east-west)
 * or one the local cluster names for it (class istio-remote), the two ways istiod learns of a
 * network's gateway. Never both: istiod then picks "the first" of the two in an order that varies
 * from run to run (ambient/multicluster.go, istio/istio#56960), which no golden can hold.
 */
function threeClusters(network2Gateway: 'east-west' | 'remote'): MulticlusterMeshOptions {
  return {
    clusters: [
      {
        id: 'cluster-1',
        network: 'network-1',
        local: true,
        mesh: SMALL,
        addressShift: 0,
        ...(network2Gateway === 'remote' ? { remoteGateways: { 'network-2': '172.30.0.20' } } : {}),
      },
      { id: 'cluster-2', network: 'network-1', local: false, mesh: SMALL, addressShift: 100 },
      {
        id: 'cluster-3',
        network: 'network-2',
        local: false,
        mesh: SMALL,
        addressShift: 0,
        ...(network2Gateway === 'east-west' ? { eastWestGatewayIp: '172.30.0.10' } : {}),
      },
    ],
    globalNamespaces: ['apps-1'],
    globalServices: ['apps-0/app-0'],
  };
}

export const MULTICLUSTER_FIXTURES: readonly MulticlusterFixture[] = [
  // network-2 reached through cluster-3's own east-west gateway.
  { name: 'multicluster', mesh: threeClusters('east-west'), env: { AMBIENT_ENABLE_MULTI_NETWORK: 'true' } },
  // network-2 reached through the istio-remote gateway the local cluster names for it.
  {
    name: 'multicluster-remote-gateway',
    mesh: threeClusters('remote'),
    env: { AMBIENT_ENABLE_MULTI_NETWORK: 'true' },
  },
];

export function multiclusterFixtureNamed(name: string): MulticlusterFixture {
  const f = MULTICLUSTER_FIXTURES.find((x) => x.name === name);
  if (!f)
    throw new Error(
      `no multicluster fixture named ${name}; known: ${MULTICLUSTER_FIXTURES.map((x) => x.name).join(', ')}`,
    );
  return f;
}

/** One cluster's folder of a laid-out multicluster fixture. */
export interface ClusterFolder {
  clusterId: string;
  network: string;
  local: boolean;
  dir: string;
}

export interface MulticlusterLayout {
  /** The local cluster first, then the remotes in the fixture's order (the recorder's -clusters order). */
  folders: ClusterFolder[];
  /** meshConfig (plain MeshConfig YAML), outside the cluster folders: no cluster reads it as an object. */
  meshConfigFile: string;
  digest: string;
}

/** The recorder's argument for a layout: id=DIR,... with the local cluster first. */
export function recorderClustersArg(layout: MulticlusterLayout): string {
  return layout.folders.map((f) => `${f.clusterId}=${f.dir}`).join(',');
}

/**
 * Lays a multicluster fixture out under `dir`: `<cluster id>/` per cluster and `mesh.yaml`. The
 * digest covers every cluster's id, network, role and folder digest, then the meshConfig file.
 */
export function materializeMulticluster(fixture: MulticlusterFixture, dir: string): MulticlusterLayout {
  const clusters = [...fixture.mesh.clusters].sort((a, b) => Number(b.local) - Number(a.local));
  if (clusters.filter((c) => c.local).length !== 1)
    throw new Error(`fixture ${fixture.name}: exactly one cluster must be local`);
  mkdirSync(dir, { recursive: true });
  const hash = createHash('sha256');
  const folders = clusters.map((c) => {
    const sub = path.join(dir, c.id);
    writeMesh(sub, generateClusterMesh(fixture.mesh, c));
    hash.update(`${c.id}\n${c.network}\n${c.local}\n${folderDigest(sub)}\n`);
    return { clusterId: c.id, network: c.network, local: c.local, dir: sub };
  });
  const meshConfigFile = path.join(dir, 'mesh.yaml');
  const meshText = stringify(multiclusterMeshConfig(), { lineWidth: 0 });
  writeFileSync(meshConfigFile, meshText);
  hash.update(`mesh.yaml\n${meshText}`);
  return { folders, meshConfigFile, digest: hash.digest('hex') };
}
