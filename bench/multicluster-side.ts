// One side of the `multicluster` scenario (bench/scenarios/multicluster.ts), in a process of its
// own: either the reference (one cluster of 3×N pods, one AmbientIndex over one store) or the mesh
// (three clusters of N pods on one network, a MeshIndex over three stores). The scenario runs the
// sides alternately in fresh processes, so neither inherits the other's heap or the code V8
// compiled for it (the ambient index's builders are the same functions on both sides: whichever
// ran second in one process would build with them already optimized).
//
// What a side measures:
// - the stores filled from generated manifests (timed on a row of its own, not in the build);
// - the cold build: the index constructed over the filled stores, wall and CPU time;
// - heap in use after full collections: with the stores alone, then with the index too;
// - with `push`: the index served by an XdsServer over TLS to `ztunnels` wildcard streams from
//   xds-client-worker processes, then single pod changes (store write to the last stream's receipt).

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Registry } from 'prom-client';
import { stringify } from 'yaml';
import { AmbientIndex } from '../src/ambient/ambient-index';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL, type ResourceCache } from '../src/contract/xds-resources';
import { logs } from '../src/log/logger';
import { applyMeshLayer } from '../src/mesh/build';
import { defaultMeshConfig } from '../src/mesh/defaults';
import type { MeshConfigSource } from '../src/mesh/types';
import { MeshIndex } from '../src/multicluster/mesh-index';
import type { ClusterDirectory, MeshCluster } from '../src/store/clusters';
import { kindOf, type KindId } from '../src/store/kinds';
import { deterministicUid } from '../src/store/local/manifest';
import { MemoryStore } from '../src/store/memory-store';
import type { KubeObject } from '../src/store/types';
import { XdsMetrics } from '../src/xds/protocol/metrics';
import { XdsServer } from '../src/xds/server';
import {
  generateClusterMesh,
  multiclusterMeshConfig,
  type ClusterMeshOptions,
  type MulticlusterMeshOptions,
} from '../interop/mesh/multicluster';
import { SERVER_NAME, makeTestPki } from '../test/support/tls';
import { serveAds, ztunnelTokenAuthenticator } from './ads-server';
import { median, percentile } from './scenario';
import { Clients, WORKER_COUNT } from './xds-clients';

export type Side = 'reference' | 'mesh';

export interface SideConfig {
  side: Side;
  /** Pods per cluster of the mesh; the reference's one cluster has CLUSTERS times as many. */
  podsPerCluster: number;
  /** Serve the index and push pod changes to this many streams; 0 measures the build only. */
  ztunnels: number;
}

/** Where a pod change was made: the reference's one cluster, or the mesh's config or a remote cluster. */
export type ChangeSite = 'reference' | 'config' | 'remote';

export interface ChangeRuns {
  site: ChangeSite;
  /** Per measured change: ms from the store write until the last stream had the new version. */
  last: number[];
  /** Per measured change: the median stream's ms. */
  p50: number[];
}

export interface SideResult {
  side: Side;
  pods: number;
  clusters: number;
  /** Address resources the index serves a wildcard ztunnel (workloads and services). */
  addresses: number;
  /** Of those, the workloads of pods: what tells that every cluster's pods are served (one network). */
  podWorkloads: number;
  authorizations: number;
  storeFillMs: number;
  buildMs: number;
  buildCpuMs: number;
  /** heapUsed after full collections, the stores filled and no index yet. */
  heapStoresBytes: number;
  /** The same with the index built. */
  heapAfterBuildBytes: number;
  push?: {
    /** s from spawning the clients until every stream had both full responses. */
    syncSeconds: number;
    /** Message bytes of one stream's full sync. */
    syncBytes: number;
    changes: ChangeRuns[];
  };
}

export type SideMessage = { t: 'result'; result: SideResult } | { t: 'error'; message: string };

/** The config cluster's id: the one the bench clients name in their `clusterid` header and node metadata. */
const CONFIG_CLUSTER = 'Kubernetes';
/** The mesh: the config cluster and two remotes, all on one network. */
export const CLUSTERS = 3;
const NETWORK = 'network-1';
/**
 * Added to the second octet of each mesh cluster's 10.x addresses so clusters on one network share
 * none (multicluster.ts). The generator uses 10.50 (EndpointSlice), 10.96-10.99 (Services,
 * ServiceEntries) and 10.100-10.102 (pods on 3 nodes): shifts of 10 and 20 keep all three disjoint.
 */
const ADDRESS_SHIFTS = [0, 10, 20];
/** Nodes per mesh cluster; the reference has CLUSTERS times as many, so both have as many pods per node. */
const NODES_PER_CLUSTER = 3;
/** Application namespaces per cluster, as the istiod scenario's meshes have. */
const NAMESPACES = 20;
/**
 * Services made GLOBAL in every cluster, as the multicluster goldens' fixture makes them: one
 * application namespace of twenty (about 5% of the Services) and one Service by label. The rest
 * stay LOCAL (a remote cluster's LOCAL Services never leave it, as in istiod).
 */
const GLOBAL = { globalNamespaces: ['apps-1'], globalServices: ['apps-0/app-0'] };
const TOKEN = 'bench-token';
const WARMUP_CHANGES = 5;
const MEASURED_CHANGES = 9;
/** Longer than PILOT_DEBOUNCE_AFTER: each change is alone when it is written. */
const CHANGE_GAP_MS = 300;
const SYNC_TIMEOUT_MS = 20 * 60_000;
const DELIVERY_TIMEOUT_MS = 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.timeOrigin + performance.now();

/** generate.ts takes workloads, of which it makes nine in ten pods (the rest WorkloadEntries and endpoints). */
function workloadsFor(pods: number): number {
  return Math.ceil(pods / 0.9);
}

function clusterOptions(config: SideConfig): ClusterMeshOptions[] {
  if (config.side === 'reference')
    return [
      {
        id: CONFIG_CLUSTER,
        network: NETWORK,
        local: true,
        mesh: {
          workloads: workloadsFor(config.podsPerCluster * CLUSTERS),
          nodes: NODES_PER_CLUSTER * CLUSTERS,
          namespaces: NAMESPACES,
        },
        addressShift: 0,
      },
    ];
  return ADDRESS_SHIFTS.map((shift, i) => ({
    id: i === 0 ? CONFIG_CLUSTER : `cluster-${i + 1}`,
    network: NETWORK,
    local: i === 0,
    mesh: { workloads: workloadsFor(config.podsPerCluster), nodes: NODES_PER_CLUSTER, namespaces: NAMESPACES },
    addressShift: shift,
  }));
}

/** A manifest as the local source stores it (manifest.ts normalize, ownership.ts storedForm): uid and resourceVersion set. */
function toStored(m: { apiVersion: string; kind: string; metadata: Record<string, unknown> }): {
  kind: KindId;
  object: KubeObject;
} {
  const info = kindOf(m.apiVersion, m.kind);
  if (!info) throw new Error(`the generator made a ${m.apiVersion} ${m.kind}, a kind the store does not hold`);
  const name = m.metadata['name'] as string;
  const namespace = info.namespaced ? ((m.metadata['namespace'] as string | undefined) ?? 'default') : undefined;
  const metadata: Record<string, unknown> = { ...m.metadata, uid: deterministicUid(info.kind, namespace, name) };
  metadata['resourceVersion'] = '1';
  if (namespace === undefined) delete metadata['namespace'];
  else metadata['namespace'] = namespace;
  return { kind: info.id, object: { ...m, metadata } as unknown as KubeObject };
}

function fixedMesh(): MeshConfigSource {
  const current = applyMeshLayer(defaultMeshConfig(), {
    source: 'multicluster bench',
    text: stringify(multiclusterMeshConfig()),
  });
  return { current: () => current, subscribe: () => () => undefined };
}

/** global.gc under --expose-gc (the scenario forks each side with it); otherwise one from a fresh context (tests). */
function findGc(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function heapUsed(): number {
  const gc = findGc();
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

interface Built {
  served: ResourceCache;
  stores: Map<string, MemoryStore>;
  close(): void;
}

/** Builds one side and measures it; exported for the test that checks what the sides serve. */
export async function measure(config: SideConfig): Promise<SideResult> {
  logs.setLevel('xds', 'warn');
  logs.setLevel('multicluster', 'warn');
  const options: MulticlusterMeshOptions = { clusters: clusterOptions(config), ...GLOBAL };
  // Generated outside every timed window; the stores then hold their own copies (toStored), so
  // nothing of the generator's output is left for the heap figures.
  let generated: { kind: KindId; object: KubeObject }[][] | undefined = options.clusters.map((c) =>
    generateClusterMesh(options, c).map(toStored),
  );
  const pods = generated.reduce((n, objects) => n + objects.filter((o) => o.kind === 'Pod').length, 0);
  const stores = new Map<string, MemoryStore>();
  const fillStart = process.hrtime.bigint();
  options.clusters.forEach((c, i) => {
    const store = new MemoryStore();
    store.apply(generated![i]!);
    stores.set(c.id, store);
  });
  const storeFillMs = Number(process.hrtime.bigint() - fillStart) / 1e6;
  generated = undefined;
  const mesh = fixedMesh();
  const heapStoresBytes = heapUsed();

  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  const built = build(config.side, stores, mesh);
  const buildMs = Number(process.hrtime.bigint() - start) / 1e6;
  const buildCpuMs = cpuMs(cpu);
  const heapAfterBuildBytes = heapUsed();
  const served = [...built.served.all(ADDRESS_TYPE_URL)];
  const addresses = served.length;
  const podWorkloads = served.filter((r) => r.name.includes('//Pod/')).length;
  const authorizations = [...built.served.all(AUTHORIZATION_TYPE_URL)].length;
  const result: SideResult = {
    side: config.side,
    pods,
    clusters: stores.size,
    addresses,
    podWorkloads,
    authorizations,
    storeFillMs,
    buildMs,
    buildCpuMs,
    heapStoresBytes,
    heapAfterBuildBytes,
  };
  try {
    if (config.ztunnels > 0) result.push = await push(config, built);
  } finally {
    built.close();
  }
  return result;
}

function build(side: Side, stores: Map<string, MemoryStore>, mesh: MeshConfigSource): Built {
  const common = { mesh, domain: 'cluster.local', systemNamespace: 'istio-system' };
  if (side === 'reference') {
    const index = new AmbientIndex({ ...common, store: stores.get(CONFIG_CLUSTER)!, clusterId: CONFIG_CLUSTER });
    return { served: index, stores, close: () => index.close() };
  }
  const clusters: MeshCluster[] = [...stores].map(([id, store]) => ({
    id,
    local: id === CONFIG_CLUSTER,
    store,
    synced: () => true,
  }));
  const directory: ClusterDirectory = {
    localId: CONFIG_CLUSTER,
    get: (id) => clusters.find((c) => c.id === id),
    list: () => clusters,
    subscribe: () => () => undefined,
  };
  const index = new MeshIndex({ ...common, clusters: directory });
  return { served: index, stores, close: () => index.close() };
}

/** Pods of the application namespaces (redirected, in Services), sorted, so each run changes the same ones. */
function changeablePods(store: MemoryStore): KubeObject[] {
  return store
    .list('Pod')
    .filter((p) => (p.metadata.namespace ?? '').startsWith('apps-'))
    .sort((a, b) =>
      `${a.metadata.namespace}/${a.metadata.name}` < `${b.metadata.namespace}/${b.metadata.name}` ? -1 : 1,
    );
}

async function push(config: SideConfig, built: Built): Promise<NonNullable<SideResult['push']>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'multicluster-bench-'));
  const pki = makeTestPki();
  const caFile = path.join(dir, 'ca.crt');
  fs.writeFileSync(caFile, pki.caPem);
  // As the xds scenario serves its synthetic cache: istiod's default debounce (a lone change is
  // pushed at once, docs/compat.md), authentication and the identity check on.
  const xds = new XdsServer(
    built.served,
    ztunnelTokenAuthenticator(TOKEN),
    { debounce: { after: 100, max: 10_000 }, auth: true, identityCheck: true },
    new XdsMetrics(new Registry()),
  );
  const { server, port } = await serveAds(xds, pki, { 'grpc.max_concurrent_streams': 100_000 });
  const clients = new Clients();
  try {
    const started = now();
    clients.spawn({ port, caFile, serverName: SERVER_NAME, token: TOKEN }, config.ztunnels, WORKER_COUNT);
    await clients.until(() => clients.synced.size >= config.ztunnels, SYNC_TIMEOUT_MS, 'every stream to sync');
    const synced = [...clients.synced.values()];
    const syncSeconds = (Math.max(...synced.map((s) => s.at)) - started) / 1000;
    const syncBytes = median(synced.map((s) => s.bytes));
    // The sync's garbage (megabytes per stream) collected before the changes, as the xds scenario does.
    await sleep(2_000);
    heapUsed();

    const sites: { site: ChangeSite; clusterId: string }[] =
      config.side === 'reference'
        ? [{ site: 'reference', clusterId: CONFIG_CLUSTER }]
        : [
            { site: 'config', clusterId: CONFIG_CLUSTER },
            { site: 'remote', clusterId: 'cluster-2' },
          ];
    const changes: ChangeRuns[] = sites.map(({ site }) => ({ site, last: [], p50: [] }));
    const candidates = sites.map(({ clusterId }) => changeablePods(built.stores.get(clusterId)!));
    let n = 0;
    // The sites take turns, so a slow phase of the shared machine lands on both alike.
    for (let r = 0; r < WARMUP_CHANGES + MEASURED_CHANGES; r++)
      for (let s = 0; s < sites.length; s++) {
        const lat = await change(built, clients, sites[s]!.clusterId, candidates[s]!, ++n, config.ztunnels);
        if (r < WARMUP_CHANGES) continue;
        changes[s]!.last.push(Math.max(...lat));
        changes[s]!.p50.push(percentile(lat, 50));
      }
    return { syncSeconds, syncBytes, changes };
  } finally {
    clients.stop();
    xds.close();
    server.forceShutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One pod's canonical revision label changed in its cluster's store; each stream's ms until it had the new version. */
async function change(
  built: Built,
  clients: Clients,
  clusterId: string,
  pods: readonly KubeObject[],
  n: number,
  streams: number,
): Promise<number[]> {
  await sleep(CHANGE_GAP_MS);
  const pod = pods[(n * 7919) % pods.length]!;
  const uid = `${clusterId}//Pod/${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;
  const before = built.served.get(ADDRESS_TYPE_URL, uid)?.version;
  if (before === undefined) throw new Error(`${uid} is not served`);
  const labels = { ...pod.metadata.labels, 'service.istio.io/canonical-revision': `bench-${n}` };
  const at = now();
  built.stores
    .get(clusterId)!
    .apply([{ kind: 'Pod', object: { ...pod, metadata: { ...pod.metadata, labels, resourceVersion: `bench-${n}` } } }]);
  // The indexes derive a change in the store's turn; a remote's passes through its feed's store first.
  let version = built.served.get(ADDRESS_TYPE_URL, uid)?.version;
  for (let i = 0; version === before && i < 1000; i++) {
    await sleep(1);
    version = built.served.get(ADDRESS_TYPE_URL, uid)?.version;
  }
  if (version === undefined || version === before) throw new Error(`the change of ${uid} was not derived`);
  await clients.until(
    () => (clients.receipts.get(version)?.length ?? 0) >= streams,
    DELIVERY_TIMEOUT_MS,
    `the change of ${uid} to reach every stream`,
  );
  return clients.receipts.get(version)!.map((t) => t - at);
}

function main(): void {
  const config = JSON.parse(process.argv[2]!) as SideConfig;
  measure(config).then(
    (result) => process.send!({ t: 'result', result } satisfies SideMessage, () => process.exit(0)),
    (err: unknown) =>
      process.send!(
        { t: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies SideMessage,
        () => process.exit(1),
      ),
  );
}

if (require.main === module) main();
