import { eventually } from '../../support/apiserver';
import { startServer } from './helpers';
import { KubeClient } from '../../../src/store/kube/client';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { LEASE_NAMES, KubeLeaderElector, type LeaderTiming } from '../../../src/store/kube/leader';
import { LEADER_RECORD_ANNOTATION, parseRecord, type LeaderRecord } from '../../../src/store/kube/leader-record';
import type { TestApiServer } from '../../support/apiserver';

// Short versions of 30 s / 15 s / 7.5 s: the renew deadline is well below the lease duration so a
// partitioned leader stops first. The ConfigMap record's times have whole seconds (istiod's
// format), so a follower sees a renewing leader's record change about once a second: the lease
// must be well above one second.
const TIMING: LeaderTiming = { leaseDurationMs: 3_000, renewDeadlineMs: 1_000, retryPeriodMs: 100 };
const LEASE = LEASE_NAMES.namespaceController;

let server: TestApiServer;
let electors: KubeLeaderElector[] = [];
/** Who runs the controller, in order: "a:start", "a:stop", ... */
let events: string[] = [];
let running = new Set<string>();
let overlap = false;

function replica(id: string, lease = LEASE): KubeLeaderElector {
  const client = new KubeClient(loadKubeConfig(server.writeKubeconfig()), `istiod-ts/${id}`);
  const elector = new KubeLeaderElector({ client, namespace: 'istio-system', identity: id, timing: TIMING });
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

/** The leader-election record in the lock ConfigMap's annotation. */
function record(name = LEASE): LeaderRecord | undefined {
  const cm = server.get('v1', 'ConfigMap', 'istio-system', name);
  const raw = (cm?.metadata['annotations'] as Record<string, string> | undefined)?.[LEADER_RECORD_ANNOTATION];
  return raw === undefined ? undefined : parseRecord(raw);
}

function holder(name = LEASE): string | undefined {
  return record(name)?.holderIdentity;
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

test('of two replicas exactly one leads, and it holds the lock', async () => {
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
    resource: 'configmaps',
    userAgent: 'istiod-ts/a',
    status: 500,
    times: Number.POSITIVE_INFINITY,
  });
  await eventually('b takes over', () => running.has('b'));
  expect(events).toEqual(['a:start', 'a:stop', 'b:start']);
  expect(overlap).toBe(false);
  expect(holder()).toBe('b');
  expect(record()?.leaderTransitions).toBe(1);
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

test('each controller has its own ConfigMap lock in the pod namespace', async () => {
  const a = replica('a');
  a.runWhileLeader(LEASE_NAMES.validationController, () => () => undefined);
  await eventually('both locks held', () => a.isLeader(LEASE) && a.isLeader(LEASE_NAMES.validationController));
  expect(
    server
      .list('v1', 'ConfigMap')
      .map((l) => `${l.metadata.namespace}/${l.metadata.name}`)
      .sort(),
  ).toEqual([`istio-system/${LEASE_NAMES.namespaceController}`, `istio-system/${LEASE_NAMES.validationController}`]);
  await eventually('a renewal', () => server.requests.some((r) => r.resource === 'configmaps' && r.verb === 'update'));
  // What the chart's Role must allow: get, create and update of configmaps in the pod namespace.
  const calls = new Set(
    server.requests.filter((r) => r.resource === 'configmaps').map((r) => `${r.verb} ${r.group} ${r.namespace}`),
  );
  expect(calls).toEqual(new Set(['get  istio-system', 'create  istio-system', 'update  istio-system']));
});

test('a renew deadline that does not leave room before the lease expires is refused', () => {
  const client = new KubeClient(loadKubeConfig(server.writeKubeconfig()));
  expect(
    () => new KubeLeaderElector({ client, namespace: 'x', timing: { leaseDurationMs: 1000, renewDeadlineMs: 1000 } }),
  ).toThrow(/must exceed the renew deadline/);
});
