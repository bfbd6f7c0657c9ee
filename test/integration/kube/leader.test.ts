import { eventually } from '../../support/apiserver';
import { startServer } from './helpers';
import { KubeClient } from '../../../src/store/kube/client';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { LEASE_NAMES, LeaseLeaderElector, type LeaderTiming } from '../../../src/store/kube/leader';
import type { TestApiServer } from '../../support/apiserver';

// Millisecond-scale versions of 30 s / 15 s / 5 s, in the same proportions' spirit: the renew
// deadline is well below the lease duration so a partitioned leader stops first.
const TIMING: LeaderTiming = { leaseDurationMs: 1_500, renewDeadlineMs: 500, retryPeriodMs: 100 };
const LEASE = LEASE_NAMES.namespaceController;

let server: TestApiServer;
let electors: LeaseLeaderElector[] = [];
/** Who runs the controller, in order: "a:start", "a:stop", ... */
let events: string[] = [];
let running = new Set<string>();
let overlap = false;

function replica(id: string, lease = LEASE): LeaseLeaderElector {
  const client = new KubeClient(loadKubeConfig(server.writeKubeconfig()), `istiod-ts/${id}`);
  const elector = new LeaseLeaderElector({ client, namespace: 'istio-system', identity: id, timing: TIMING });
  elector.runWhileLeader(lease, () => {
    events.push(`${id}:start`);
    running.add(id);
    if (running.size > 1) overlap = true;
    return () => {
      events.push(`${id}:stop`);
      running.delete(id);
    };
  });
  electors.push(elector);
  return elector;
}

function holder(name = LEASE): string | undefined {
  return (
    server.get('coordination.k8s.io/v1', 'Lease', 'istio-system', name)?.['spec'] as
      { holderIdentity?: string } | undefined
  )?.holderIdentity;
}

/** Lets a number of retry periods pass, so a wrong second leader would have time to appear. */
const settle = (periods: number) => new Promise((resolve) => setTimeout(resolve, TIMING.retryPeriodMs * periods));

beforeEach(async () => {
  ({ server } = await startServer());
  electors = [];
  events = [];
  running = new Set();
  overlap = false;
});

afterEach(async () => {
  await Promise.all(electors.map((e) => e.stop()));
  await server.close();
});

test('of two replicas exactly one leads, and it holds the Lease', async () => {
  const a = replica('a');
  const b = replica('b');
  await eventually('a leader', () => running.size === 1);
  await settle(10);
  expect(running.size).toBe(1);
  const leader = a.isLeader(LEASE) ? 'a' : 'b';
  expect([a.isLeader(LEASE), b.isLeader(LEASE)].filter(Boolean)).toHaveLength(1);
  expect(holder()).toBe(leader);
  expect(overlap).toBe(false);
});

test('a leader that cannot renew stops its controllers, then the other replica takes over', async () => {
  replica('a');
  await eventually('a leads', () => running.has('a'));
  replica('b');
  await settle(5);
  server.injectFault({
    verb: 'update',
    resource: 'leases',
    userAgent: 'istiod-ts/a',
    status: 500,
    times: Number.POSITIVE_INFINITY,
  });
  await eventually('b takes over', () => running.has('b'));
  expect(events).toEqual(['a:start', 'a:stop', 'b:start']);
  expect(overlap).toBe(false);
  expect(holder()).toBe('b');
  const lease = server.get('coordination.k8s.io/v1', 'Lease', 'istio-system', LEASE)!;
  expect((lease['spec'] as { leaseTransitions: number }).leaseTransitions).toBe(1);
});

test('stopping the leader (SIGTERM) releases the lease and the other replica takes over', async () => {
  const a = replica('a');
  await eventually('a leads', () => running.has('a'));
  replica('b');
  await a.stop();
  expect(events).toEqual(['a:start', 'a:stop']);
  expect(holder()).toBe('');
  await eventually('b takes over', () => running.has('b'));
  expect(holder()).toBe('b');
});

test('each controller has its own Lease in the pod namespace', async () => {
  const a = replica('a');
  a.runWhileLeader(LEASE_NAMES.validationController, () => () => undefined);
  await eventually('both leases held', () => a.isLeader(LEASE) && a.isLeader(LEASE_NAMES.validationController));
  expect(
    server
      .list('coordination.k8s.io/v1', 'Lease')
      .map((l) => `${l.metadata.namespace}/${l.metadata.name}`)
      .sort(),
  ).toEqual([`istio-system/${LEASE_NAMES.namespaceController}`, `istio-system/${LEASE_NAMES.validationController}`]);
  await eventually('a renewal', () => server.requests.some((r) => r.resource === 'leases' && r.verb === 'update'));
  // What the chart's Role must allow: get, create and update of leases in the pod namespace.
  const calls = new Set(
    server.requests.filter((r) => r.resource === 'leases').map((r) => `${r.verb} ${r.group} ${r.namespace}`),
  );
  expect(calls).toEqual(
    new Set([
      'get coordination.k8s.io istio-system',
      'create coordination.k8s.io istio-system',
      'update coordination.k8s.io istio-system',
    ]),
  );
});

test('a renew deadline that does not leave room before the lease expires is refused', () => {
  const client = new KubeClient(loadKubeConfig(server.writeKubeconfig()));
  expect(
    () => new LeaseLeaderElector({ client, namespace: 'x', timing: { leaseDurationMs: 1000, renewDeadlineMs: 1000 } }),
  ).toThrow(/must exceed the renew deadline/);
});
