// Two whole istiod-ts servers in Kubernetes mode against one API server, as two pods of the
// istiod Deployment: each singleton writer (root-cert ConfigMaps, node untaint, ServiceEntry IP
// allocation, ambient status) does its work once, from the replica holding its lock, and the other
// replica writes nothing but a lost lock create. The locks are split between the replicas, so
// "one writer" is checked per lock, not per process. A replica cut off from the API server (every
// call it makes fails, as for a dead process) stops its controllers before its locks expire, loses
// every lock it held to the other within the lease duration, and tries no write after; the
// survivor alone does the work that arrives, without rewriting what the other wrote.

import { ensureSelfSignedCa } from '../../../src/ca/roots/self-signed';
import { KubeCaSecretStore } from '../../../src/ca/roots/kube-ca-secret-store';
import { KubeClient } from '../../../src/store/kube/client';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { ACQUIRE_JITTER, LEASE_NAMES } from '../../../src/store/kube/leader';
import { KubeWriter } from '../../../src/store/kube/writes';
import { eventually, TestApiServer } from '../../support/apiserver';
import { configMapRecord, IstiodReplica } from '../kube/leader-fixtures';
import { namespace } from '../../support/apiserver/fixtures';
import {
  holderOf,
  LOCK_OF,
  lockReads,
  LOCKS,
  ROOT_CONFIGMAP,
  startReplica,
  SYSTEM_NS,
  TIMING,
  writes,
  type LockName,
  type Replica,
  type Write,
} from './replica-fixtures';

const TAINT = 'cni.istio.io/not-ready';
const OTHER_TAINT = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
const NAMESPACES = [SYSTEM_NS, 'default', 'app-1', 'app-2'];
/**
 * Time beyond the lease and one follower poll for the API calls and controller work under way
 * (two servers in one process, on a machine shared with other suites).
 */
const SLACK_MS = 1_500;
/** The longest a lock can stay with a replica that stopped renewing: the lease, then one jittered poll. */
const TAKEOVER_BOUND_MS = TIMING.leaseDurationMs + TIMING.retryPeriodMs * (1 + ACQUIRE_JITTER) + SLACK_MS;

let api: TestApiServer;
let replicas: Replica[] = [];
/** When the replicas were started: the leader's lock writes are bounded by the time since. */
let startedMs = 0;

const node = (name: string, taints: object[]) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  spec: { taints },
});
const cniPod = (name: string, nodeName: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: SYSTEM_NS, labels: { 'k8s-app': 'istio-cni-node' } },
  spec: { nodeName, hostNetwork: true, containers: [{ name: 'install-cni', image: 'istio/install-cni' }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});
const serviceEntry = (name: string, host: string) => ({
  apiVersion: 'networking.istio.io/v1',
  kind: 'ServiceEntry',
  metadata: { name, namespace: 'app-1' },
  spec: { hosts: [host], resolution: 'DNS', ports: [{ number: 443, name: 'https', protocol: 'TLS' }] },
});
const policy = (name: string) => ({
  apiVersion: 'security.istio.io/v1',
  kind: 'AuthorizationPolicy',
  metadata: { name, namespace: 'app-2' },
  spec: { rules: [{ from: [{ source: { namespaces: ['app-1'] } }] }] },
});
const waypointBoundService = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'reviews', namespace: 'app-1', labels: { 'istio.io/use-waypoint': 'waypoint' } },
  spec: { clusterIP: '10.96.0.20', clusterIPs: ['10.96.0.20'], selector: { app: 'reviews' }, ports: [{ port: 80 }] },
};

const hasRoot = (ns: string) =>
  (api.get('v1', 'ConfigMap', ns, ROOT_CONFIGMAP)?.['data'] as Record<string, string> | undefined)?.[
    'root-cert.pem'
  ] !== undefined;
const taintKeys = (name: string) =>
  ((api.get('v1', 'Node', undefined, name)?.['spec'] as { taints?: { key: string }[] } | undefined)?.taints ?? []).map(
    (t) => t.key,
  );
const addresses = (name: string) =>
  (
    api.get('networking.istio.io/v1', 'ServiceEntry', 'app-1', name)?.['status'] as
      { addresses?: { value: string }[] } | undefined
  )?.addresses?.map((a) => a.value) ?? [];
const conditionTypes = (apiVersion: string, kind: string, ns: string, name: string) =>
  (
    (api.get(apiVersion, kind, ns, name)?.['status'] as { conditions?: { type: string }[] } | undefined)?.conditions ??
    []
  ).map((c) => c.type);
const accepted = (name: string) =>
  conditionTypes('security.istio.io/v1', 'AuthorizationPolicy', 'app-2', name).includes('ZtunnelAccepted');

const replicaNamed = (id: string | undefined): Replica => {
  const r = replicas.find((x) => x.id === id);
  if (!r) throw new Error(`no replica holds the lock (holder: ${String(id)})`);
  return r;
};
/** leaderTransitions of a lock's record (ConfigMap annotation or Lease spec). */
const transitionsOf = (lock: LockName): unknown =>
  lock === LEASE_NAMES.status
    ? (api.get('coordination.k8s.io/v1', 'Lease', SYSTEM_NS, lock)?.['spec'] as { leaseTransitions?: number })
        .leaseTransitions
    : configMapRecord(api, lock)?.['leaderTransitions'];
const holders = (): Record<LockName, string | undefined> =>
  Object.fromEntries(LOCKS.map((l) => [l, holderOf(api, l)])) as Record<LockName, string | undefined>;

/** Each controller's writes as "<replica> <verb> <resource>/<namespace>/<name>", sorted. */
function work(ws: Write[]): Record<keyof typeof LOCK_OF, string[]> {
  const of = (kind: keyof typeof LOCK_OF) =>
    ws
      .filter((w) => w.kind === kind)
      .map((w) => `${w.replica} ${w.verb} ${w.target}`)
      .sort();
  return {
    'root-cert': of('root-cert'),
    untaint: of('untaint'),
    'ip-allocation': of('ip-allocation'),
    status: of('status'),
  };
}

beforeAll(async () => {
  api = await TestApiServer.start();
  for (const ns of NAMESPACES) api.put(namespace(ns));
  // The root exists, as after the first install: the replicas only read it (the race to create it
  // is the CA's own test), so every write left to count is a singleton writer's or a lock's.
  const setup = new KubeWriter(new KubeClient(loadKubeConfig(api.writeKubeconfig()), 'test-setup'));
  await ensureSelfSignedCa(new KubeCaSecretStore(setup, SYSTEM_NS), {
    trustDomain: 'cluster.local',
    keyType: 'ECDSA',
    rsaBits: 2048,
    ttlMs: 365 * 24 * 3600_000,
  });
  api.put(node('node-1', [{ key: TAINT, effect: 'NoSchedule' }, OTHER_TAINT]));
  api.put(cniPod('istio-cni-node-1', 'node-1'));
  api.put(serviceEntry('first', 'first.example.com'));
  api.put(policy('first'));
  api.put(waypointBoundService);
  // The locks split between the replicas, as a previous run of these two pods left them: each
  // starts holding two (renewing its own record), the fifth is raced.
  const heldBefore: [LockName, string][] = [
    [LEASE_NAMES.namespaceController, 'replica-a'],
    [LEASE_NAMES.ipAutoallocate, 'replica-a'],
    [LEASE_NAMES.nodeUntaint, 'replica-b'],
    [LEASE_NAMES.status, 'replica-b'],
  ];
  for (const [lock, identity] of heldBefore)
    new IstiodReplica(
      api,
      { kind: lock === LEASE_NAMES.status ? 'Lease' : 'ConfigMap', name: lock },
      {
        identity,
        key: 'default',
      },
    ).renew();
  startedMs = Date.now();
  replicas = await Promise.all(['replica-a', 'replica-b'].map((id) => startReplica(api, id)));
});

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.server.stop()));
  api.clearFaults();
  await api.close();
});

test('of two replicas, each singleton writer does its work once, from the holder of its lock; the other writes no more than a lost lock create', async () => {
  await eventually(
    'the seeded work is done',
    () =>
      NAMESPACES.every(hasRoot) &&
      taintKeys('node-1').join() === OTHER_TAINT.key &&
      addresses('first').length > 0 &&
      accepted('first') &&
      conditionTypes('v1', 'Service', 'app-1', 'reviews').includes('istio.io/WaypointBound'),
    20_000,
  );
  // Both replicas keep polling every lock for more than a lease duration after the work is done:
  // the follower is alive and watching, and still takes nothing and writes nothing.
  const done = api.requests.length;
  const doneMs = Date.now();
  await eventually(
    'a lease duration passes with every replica reading every lock',
    () =>
      Date.now() - doneMs > TIMING.leaseDurationMs &&
      replicas.every((r) => LOCKS.every((l) => lockReads(api, r, l, done) >= 4)),
    20_000,
  );

  const held = holders();
  expect(held).toMatchObject({
    [LEASE_NAMES.namespaceController]: 'replica-a',
    [LEASE_NAMES.ipAutoallocate]: 'replica-a',
    [LEASE_NAMES.nodeUntaint]: 'replica-b',
    [LEASE_NAMES.status]: 'replica-b',
  });
  for (const lock of LOCKS) {
    expect(replicas.map((r) => r.id)).toContain(held[lock]);
    // Exactly one replica believes it leads, and it is the one the lock names.
    expect(replicas.filter((r) => r.elector.isLeader(lock)).map((r) => r.id)).toEqual([held[lock]]);
  }
  const all = writes(api);
  expect(all.filter((w) => w.kind === 'other')).toEqual([]);
  const by = (lock: LockName) => held[lock] ?? '';
  expect(work(all)).toEqual({
    'root-cert': NAMESPACES.map(
      (ns) => `${by(LEASE_NAMES.namespaceController)} create configmaps/${ns}/${ROOT_CONFIGMAP}`,
    ).sort(),
    untaint: [`${by(LEASE_NAMES.nodeUntaint)} patch nodes//node-1`],
    'ip-allocation': [`${by(LEASE_NAMES.ipAutoallocate)} patch serviceentries/app-1/first`],
    status: [
      `${by(LEASE_NAMES.status)} patch authorizationpolicies/app-2/first`,
      `${by(LEASE_NAMES.status)} patch services/app-1/reviews`,
    ],
  });
  const elapsedMs = Date.now() - startedMs;
  for (const lock of LOCKS) {
    const lockWrites = (id: string) =>
      all.filter((w) => w.kind === 'lock' && w.target.endsWith(`/${lock}`) && w.replica === id);
    for (const r of replicas) {
      if (r.id === held[lock]) {
        // One renewal per retry period, no faster: no conflict storm.
        expect(lockWrites(r.id).length).toBeLessThanOrEqual(Math.ceil(elapsedMs / TIMING.retryPeriodMs) + 5);
      } else {
        // The follower's only possible write: losing the race to create the lock at start (a 409).
        expect(
          lockWrites(r.id)
            .map((w) => w.verb)
            .join(),
        ).toMatch(/^(create)?$/);
      }
    }
  }
});

test('a replica cut off from the API server stops its controllers before its locks expire, loses them to the other within the lease duration and tries no write after; the survivor alone does the new work', async () => {
  const dead = replicaNamed(holderOf(api, LEASE_NAMES.namespaceController));
  const survivor = replicaNamed(replicas.find((r) => r !== dead)?.id);
  const movedLocks = LOCKS.filter((l) => holderOf(api, l) === dead.id);
  const keptLocks = LOCKS.filter((l) => holderOf(api, l) === survivor.id);
  const keptRecords = keptLocks.map((l) => transitionsOf(l));
  // Both replicas believing they lead one lock at the same moment is the failure this guards against.
  const overlaps = new Set<string>();
  const watch = setInterval(() => {
    for (const l of LOCKS) if (dead.elector.isLeader(l) && survivor.elector.isLeader(l)) overlaps.add(l);
  }, 5);
  try {
    const from = api.requests.length;
    const cutMs = Date.now();
    // Every call the replica makes fails from now on: no renewal, no release, as for a dead process.
    api.injectFault({ userAgent: dead.userAgent, status: 500, times: Number.POSITIVE_INFINITY });
    // New work for every controller, arriving during the failover.
    api.put(namespace('late'));
    api.put(node('node-2', [{ key: TAINT, effect: 'NoSchedule' }]));
    api.put(cniPod('istio-cni-node-2', 'node-2'));
    api.put(serviceEntry('second', 'second.example.com'));
    api.put(policy('second'));

    await eventually(
      'the survivor holds every lock',
      () => LOCKS.every((l) => holderOf(api, l) === survivor.id && survivor.elector.isLeader(l)),
      TAKEOVER_BOUND_MS * 3,
    );
    expect(Date.now() - cutMs).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
    const tookOver = api.requests.length;
    // The cut-off replica stopped its controllers at its renew deadline, before its lease ran out.
    expect(LOCKS.filter((l) => dead.elector.isLeader(l))).toEqual([]);
    expect([...overlaps]).toEqual([]);
    // Only its locks moved; the survivor's own were renewed, never handed over.
    expect(movedLocks.length).toBeGreaterThan(0);
    expect(keptLocks.map((l) => transitionsOf(l))).toEqual(keptRecords);

    await eventually(
      'the new work is done',
      () => hasRoot('late') && taintKeys('node-2').length === 0 && addresses('second').length > 0 && accepted('second'),
      TAKEOVER_BOUND_MS * 3,
    );
    expect(Date.now() - cutMs).toBeLessThanOrEqual(TAKEOVER_BOUND_MS + SLACK_MS);
    expect(addresses('second')).not.toEqual(expect.arrayContaining(addresses('first')));

    // The survivor wrote each new object once and rewrote nothing the other had written. (The
    // cut-off replica's attempts before its renew deadline all failed: none reached storage.)
    const survivorWrites = writes(api, from).filter((w) => w.replica === survivor.id);
    expect(survivorWrites.filter((w) => w.kind === 'other')).toEqual([]);
    expect(work(survivorWrites)).toEqual({
      'root-cert': [`${survivor.id} create configmaps/late/${ROOT_CONFIGMAP}`],
      untaint: [`${survivor.id} patch nodes//node-2`],
      'ip-allocation': [`${survivor.id} patch serviceentries/app-1/second`],
      status: [`${survivor.id} patch authorizationpolicies/app-2/second`],
    });

    // From the takeover on (a second past the cut-off replica's renew deadline) it tries no
    // controller write, not even a retry of one begun while it led: only lock reads and renewals.
    const done = api.requests.length;
    await eventually('the survivor renews every lock 4 more times', () =>
      LOCKS.every((l) => lockReads(api, survivor, l, done) >= 4),
    );
    expect(writes(api, tookOver).filter((w) => w.replica === dead.id && w.kind !== 'lock')).toEqual([]);
  } finally {
    clearInterval(watch);
  }
  await dead.server.stop();
  replicas = replicas.filter((r) => r !== dead);
});
