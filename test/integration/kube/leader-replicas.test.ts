// Two istiod-ts replicas against one API server, each with its elector and its root-certificate
// publisher wired as src/ca wires them: exactly one writes, the other only reads the lock, and
// when the leader dies without releasing, the other takes over within the lease duration.

import { eventually, type TestApiServer } from '../../support/apiserver';
import { namespace } from '../../support/apiserver/fixtures';
import { startServer } from './helpers';
import {
  configMapRecord,
  FAST,
  istiodTsReplica,
  NS,
  ROOT_CONFIGMAP,
  rootCertPublisher,
  rootCertWrites,
  sleep,
  storeWithNamespaces,
  type Replica,
} from './leader-fixtures';
import { LEASE_NAMES } from '../../../src/store/kube/leader';
import { ROOT_CERT_KEY } from '../../../src/ca/roots/root-cert-publisher';
import type { MemoryStore } from '../../../src/store/memory-store';

const LOCK = LEASE_NAMES.namespaceController;
const NAMESPACES = [NS, 'default', 'app-1', 'app-2'];

let server: TestApiServer;
let store: MemoryStore;
let replicas: Replica[];
/** Controller starts and stops of both replicas, in order: "a:start", "b:stop", ... */
let timeline: string[];

function replica(id: string): Replica {
  const publish = rootCertPublisher(server, id, store, 'ROOT');
  const r = istiodTsReplica(server, id, {
    lock: LOCK,
    start: () => {
      timeline.push(`${id}:start`);
      const stop = publish();
      return () => {
        stop();
        timeline.push(`${id}:stop`);
      };
    },
  });
  replicas.push(r);
  return r;
}

const rootIn = (ns: string) =>
  (server.get('v1', 'ConfigMap', ns, ROOT_CONFIGMAP)?.['data'] as Record<string, string> | undefined)?.[ROOT_CERT_KEY];

/** Writes to the lock object by a replica's elector (its own User-Agent). */
const lockWrites = (id: string) =>
  server.requests.filter(
    (r) => r.userAgent === `istiod-ts/${id}` && r.resource === 'configmaps' && r.verb !== 'get' && r.namespace === NS,
  );

beforeEach(async () => {
  ({ server } = await startServer());
  store = storeWithNamespaces(NAMESPACES);
  replicas = [];
  timeline = [];
});

afterEach(async () => {
  server.clearFaults();
  await Promise.all(replicas.map((r) => r.elector.stop()));
  await server.close();
});

test('of two replicas exactly one writes root-cert ConfigMaps, and the other never writes the lock it does not hold', async () => {
  const [a, b] = [replica('a'), replica('b')];
  await eventually('the root reaches every namespace', () => NAMESPACES.every((ns) => rootIn(ns) === 'ROOT'));
  const startedMs = Date.now();
  await sleep(FAST.leaseDurationMs * 1.5);
  const elapsedMs = Date.now() - startedMs;

  expect(timeline).toHaveLength(1);
  const leader = a.running() ? a : b;
  const follower = leader === a ? b : a;
  expect(follower.events).toEqual([]);
  // One create per namespace, all by the leader: nothing to repair, nobody to race.
  expect(Object.fromEntries(rootCertWrites(server))).toEqual({ [leader.id]: NAMESPACES.length });
  expect(configMapRecord(server, LOCK)?.['holderIdentity']).toBe(leader.id);
  // The follower's only possible write is losing the race to create the lock at start (one 409).
  expect(lockWrites(follower.id).filter((r) => r.verb !== 'create')).toEqual([]);
  expect(lockWrites(follower.id).length).toBeLessThanOrEqual(1);
  // The leader renews once per retry period, no faster (no conflict storm).
  expect(lockWrites(leader.id).length).toBeLessThanOrEqual(Math.ceil(elapsedMs / FAST.retryPeriodMs) + 20);
});

test('a leader that dies without releasing is replaced within the lease duration, and the new one writes root certs', async () => {
  const [a, b] = [replica('a'), replica('b')];
  await eventually('a leader', () => a.running() || b.running());
  const [leader, other] = a.running() ? [a, b] : [b, a];
  await sleep(FAST.retryPeriodMs * 5);

  // The leader's process dies: none of its calls reach the API server any more (no renewal, no
  // release), and its controllers stop at the renew deadline, as a dead process's would.
  const diedMs = Date.now();
  server.injectFault({ userAgent: `istiod-ts/${leader.id}`, status: 500, times: Number.POSITIVE_INFINITY });
  await eventually('the other replica leads', () => other.running(), FAST.leaseDurationMs * 3);
  const takeoverMs = Date.now() - diedMs;

  // Within the lease duration after its last renewal, plus one follower poll (retry period x 2.2).
  expect(takeoverMs).toBeLessThanOrEqual(FAST.leaseDurationMs + FAST.retryPeriodMs * 2.2 + 300);
  expect(timeline).toEqual([`${leader.id}:start`, `${leader.id}:stop`, `${other.id}:start`]);
  expect(configMapRecord(server, LOCK)).toMatchObject({ holderIdentity: other.id, leaderTransitions: 1 });

  // A namespace created after the takeover gets its root from the new leader.
  server.put(namespace('late'));
  store.upsert('Namespace', [namespace('late')]);
  await eventually('the root reaches the new namespace', () => rootIn('late') === 'ROOT');
  expect(rootCertWrites(server).get(other.id)).toBe(1);
});

test('a leader that stops (SIGTERM) releases the lock and the other takes over at once', async () => {
  const [a, b] = [replica('a'), replica('b')];
  await eventually('a leader', () => a.running() || b.running());
  const [leader, other] = a.running() ? [a, b] : [b, a];
  const stoppedMs = Date.now();
  await leader.elector.stop();
  expect(configMapRecord(server, LOCK)).toMatchObject({ holderIdentity: '', holderKey: '', leaseDurationSeconds: 1 });
  await eventually('the other replica leads', () => other.running());
  expect(Date.now() - stoppedMs).toBeLessThan(FAST.leaseDurationMs / 2);
  expect(timeline).toEqual([`${leader.id}:start`, `${leader.id}:stop`, `${other.id}:start`]);
});
