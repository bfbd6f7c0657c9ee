// Whole istiod-ts servers in Kubernetes mode, in this process, against one test API server: each
// replica has its own POD_NAME, so its every call carries User-Agent istiod-ts/<POD_NAME> and each
// write on the API server can be told apart. Each replica runs on its own copy of the modules
// (jest.isolateModulesAsync), so module state is per replica as it is per pod: the one Kubernetes
// source a process may run (store/kube/source.ts), the logger. What the tests read back: who holds
// each of istiod's locks, and every write classified by what it was for.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseServeOptions } from '../../../src/config/options';
import type { RunningServer } from '../../../src/server/server';
import { LEASE_NAMES, type KubeLeaderElector, type LeaderTiming } from '../../../src/store/kube/leader';
import { LEADER_RECORD_ANNOTATION } from '../../../src/store/kube/leader-record';
import type { TestApiServer } from '../../support/apiserver';

export const SYSTEM_NS = 'istio-system';
/** The root-certificate ConfigMap in every namespace (istiod's default name). */
export const ROOT_CONFIGMAP = 'istio-ca-root-cert';

/**
 * istiod's 30 s / 15 s / 7.5 s shortened 10x-ish. The renew deadline leaves a second between a
 * cut-off leader stopping its controllers and the lease running out for the other replica; the
 * retry period keeps ten lock calls a second per replica on a machine shared with other suites.
 */
export const TIMING: LeaderTiming = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 250 };

/** Every lock a replica takes: istiod's ConfigMap locks, and the Lease of the status writer. */
export const LOCKS = [
  LEASE_NAMES.namespaceController,
  LEASE_NAMES.validationController,
  LEASE_NAMES.nodeUntaint,
  LEASE_NAMES.ipAutoallocate,
  LEASE_NAMES.status,
] as const;
export type LockName = (typeof LOCKS)[number];

export interface Replica {
  id: string;
  userAgent: string;
  server: RunningServer;
  elector: KubeLeaderElector;
}

/** Starts `istiod-ts serve` in Kubernetes mode as POD_NAME=id, every listener on 127.0.0.1:0. */
export async function startReplica(api: TestApiServer, id: string): Promise<Replica> {
  const dir = mkdtempSync(join(tmpdir(), `istiod-ts-${id}-`));
  const loopback = ['grpcAddr', 'secureGRPCAddr', 'httpsAddr', 'monitoringAddr', 'httpAddr'].flatMap((f) => [
    `--${f}`,
    '127.0.0.1:0',
  ]);
  const options = parseServeOptions(
    [
      '--kubeconfig',
      api.writeKubeconfig(),
      // No file: meshConfig comes from ConfigMap istio (absent here, so the defaults).
      '--meshConfig',
      join(dir, 'no-mesh-file'),
      '--shutdownDuration',
      '2s',
      '--log_output_level',
      process.env['REPLICA_TEST_LOG'] ?? 'default:error',
      ...loopback,
    ],
    {
      POD_NAME: id,
      POD_NAMESPACE: SYSTEM_NS,
      ROOT_CA_DIR: join(dir, 'no-cacerts'),
      PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS: 'true',
    },
  );
  const { startServer, KubeLeaderElector } = replicaModules();
  const server = await startServer(options, { leaderTiming: TIMING });
  server.ctx.onShutdown(() => rmSync(dir, { recursive: true, force: true }));
  const elector = server.ctx.leader;
  if (!(elector instanceof KubeLeaderElector)) throw new Error('a Kubernetes-mode server leads with KubeLeaderElector');
  return { id, userAgent: `istiod-ts/${id}`, server, elector };
}

type ServerModule = typeof import('../../../src/server/server');
type LeaderModule = typeof import('../../../src/store/kube/leader');

/** A fresh copy of the server's modules, as another process would load them. */
function replicaModules(): { startServer: ServerModule['startServer']; KubeLeaderElector: typeof KubeLeaderElector } {
  let server: ServerModule | undefined;
  let leader: LeaderModule | undefined;
  jest.isolateModules(() => {
    server = jest.requireActual<ServerModule>('../../../src/server/server');
    leader = jest.requireActual<LeaderModule>('../../../src/store/kube/leader');
  });
  if (!server || !leader) throw new Error('jest.isolateModules did not run its callback');
  return { startServer: server.startServer, KubeLeaderElector: leader.KubeLeaderElector };
}

/** The holder identity in a lock as the API server has it ('' when released, undefined when absent). */
export function holderOf(api: TestApiServer, lock: LockName): string | undefined {
  if (lock === LEASE_NAMES.status) {
    const lease = api.get('coordination.k8s.io/v1', 'Lease', SYSTEM_NS, lock);
    return (lease?.['spec'] as { holderIdentity?: string } | undefined)?.holderIdentity;
  }
  const cm = api.get('v1', 'ConfigMap', SYSTEM_NS, lock);
  const raw = (cm?.metadata['annotations'] as Record<string, string> | undefined)?.[LEADER_RECORD_ANNOTATION];
  return raw === undefined ? undefined : (JSON.parse(raw) as { holderIdentity: string }).holderIdentity;
}

/** What a write to the API server was for. */
export type WriteKind = 'lock' | 'root-cert' | 'untaint' | 'ip-allocation' | 'status' | 'other';

export interface Write {
  kind: WriteKind;
  /** The replica's POD_NAME, from its User-Agent. */
  replica: string;
  verb: string;
  /** <resource>/<namespace>/<name>: lock objects by name, the rest by the object written. */
  target: string;
  /** Index in the API server's request log. */
  at: number;
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
const LOCK_NAMES: ReadonlySet<string> = new Set(LOCKS);

/**
 * Writes made by istiod-ts replicas (dry runs are not writes), from request `from` on, each
 * classified: a write to a lock object, or the work of one singleton controller.
 */
export function writes(api: TestApiServer, from = 0): Write[] {
  const out: Write[] = [];
  api.requests.forEach((r, at) => {
    if (at < from || r.dryRun || !WRITE_VERBS.has(r.verb)) return;
    const replica = /^istiod-ts\/(.+)$/.exec(r.userAgent)?.[1];
    if (replica === undefined) return;
    const name = r.name ?? r.createdName ?? '';
    const target = `${r.resource}/${r.namespace ?? ''}/${name}`;
    let kind: WriteKind = 'other';
    if ((r.resource === 'configmaps' || r.resource === 'leases') && r.namespace === SYSTEM_NS && LOCK_NAMES.has(name))
      kind = 'lock';
    else if (r.resource === 'configmaps' && name === ROOT_CONFIGMAP) kind = 'root-cert';
    else if (r.resource === 'nodes' && r.verb === 'patch') kind = 'untaint';
    else if (r.resource === 'serviceentries' && r.subresource === 'status') kind = 'ip-allocation';
    else if (['authorizationpolicies', 'services'].includes(r.resource) && r.subresource === 'status') kind = 'status';
    out.push({ kind, replica, verb: r.verb, target, at });
  });
  return out;
}

/** The lock each singleton controller's writes are made under. */
export const LOCK_OF: Record<Exclude<WriteKind, 'lock' | 'other'>, LockName> = {
  'root-cert': LEASE_NAMES.namespaceController,
  untaint: LEASE_NAMES.nodeUntaint,
  'ip-allocation': LEASE_NAMES.ipAutoallocate,
  status: LEASE_NAMES.status,
};

/** Lock reads (get) per replica from request `from` on: a follower that polls shows here. */
export function lockReads(api: TestApiServer, replica: Replica, lock: LockName, from = 0): number {
  let n = 0;
  api.requests.forEach((r, at) => {
    if (at >= from && r.verb === 'get' && r.name === lock && r.userAgent === replica.userAgent) n++;
  });
  return n;
}
