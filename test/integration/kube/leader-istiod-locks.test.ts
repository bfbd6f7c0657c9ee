// istiod-ts beside a running istiod: the locks istiod holds (a ConfigMap record, or a Lease for
// the status writer) keep istiod-ts's controllers from running, an expired one is taken over,
// and istiod's revision priority decides between revisions, in both directions.

import { eventually, type TestApiServer } from '../../support/apiserver';
import { startServer } from './helpers';
import {
  configMapRecord,
  FAST,
  IstiodReplica,
  istiodTsReplica,
  NS,
  rootCertPublisher,
  rootCertWrites,
  sleep,
  storeWithNamespaces,
  type Replica,
} from './leader-fixtures';
import { LEASE_NAMES } from '../../../src/store/kube/leader';
import { LEASE_HOLDER_KEY_ANNOTATION } from '../../../src/store/kube/leader-record';
import { DEFAULT_TAG_SERVICE, DEFAULT_TAG_WEBHOOK } from '../../../src/store/kube/leader-default-revision';

let server: TestApiServer;
const replicas: Replica[] = [];
const istiods: IstiodReplica[] = [];

function istiod(lock: { kind: 'ConfigMap' | 'Lease'; name: string }, identity: string, key: string): IstiodReplica {
  const r = new IstiodReplica(server, lock, { identity, key, transitions: 2 });
  istiods.push(r);
  return r;
}

function istiodTs(id: string, lock: string, opts: { revision?: string; start?: () => () => void } = {}): Replica {
  const r = istiodTsReplica(server, id, { lock, ...opts });
  replicas.push(r);
  return r;
}

/** The default tag as `istioctl tag set default --revision <rev>` leaves it. */
function defaultTagPointsAt(revision: string): void {
  server.put({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: DEFAULT_TAG_WEBHOOK, labels: { 'istio.io/rev': revision, 'istio.io/tag': 'default' } },
  });
}

/** The default tag as istiod-ts's chart renders it for ambient (revisionTags): its Service, no webhook. */
function defaultTagServicePointsAt(revision: string): void {
  server.put({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: DEFAULT_TAG_SERVICE,
      namespace: NS,
      labels: { 'istio.io/rev': revision, 'istio.io/tag': 'default' },
    },
    spec: { ports: [{ name: 'grpc-xds', port: 15010 }] },
  });
}

const ROOT_LOCK = { kind: 'ConfigMap', name: LEASE_NAMES.namespaceController } as const;
const STATUS_LOCK = { kind: 'Lease', name: LEASE_NAMES.status } as const;

beforeEach(async () => {
  ({ server } = await startServer());
});

afterEach(async () => {
  for (const i of istiods.splice(0)) i.crash();
  await Promise.all(replicas.splice(0).map((r) => r.elector.stop()));
  await server.close();
});

describe('a ConfigMap lock held by istiod', () => {
  test('keeps istiod-ts from running the controller and from writing root-cert ConfigMaps', async () => {
    istiod(ROOT_LOCK, 'istiod-5d4f7c9b8-x2x7k', 'default').keepRenewing();
    const store = storeWithNamespaces([NS, 'default', 'app']);
    const ts = istiodTs('ts', LEASE_NAMES.namespaceController, {
      start: rootCertPublisher(server, 'ts', store, 'ROOT'),
    });
    await sleep(FAST.leaseDurationMs * 2);
    expect(ts.events).toEqual([]);
    expect(rootCertWrites(server).size).toBe(0);
    expect(configMapRecord(server, LEASE_NAMES.namespaceController)?.['holderIdentity']).toBe('istiod-5d4f7c9b8-x2x7k');
    // A follower reads; it never writes a live lock.
    const lockWrites = server.requests.filter(
      (r) => r.userAgent === 'istiod-ts/ts' && r.resource === 'configmaps' && r.verb !== 'get',
    );
    expect(lockWrites).toEqual([]);
  });

  test('an expired record (istiod gone without releasing) is taken over, in istiod format', async () => {
    const gone = istiod(ROOT_LOCK, 'istiod-5d4f7c9b8-x2x7k', 'default');
    gone.renew();
    const t0 = Date.now();
    const ts = istiodTs('ts', LEASE_NAMES.namespaceController);
    await eventually('istiod-ts leads', () => ts.running(), FAST.leaseDurationMs * 3);
    // Not before a lease duration of no change, measured from when istiod-ts first saw the record.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(FAST.leaseDurationMs);
    const record = configMapRecord(server, LEASE_NAMES.namespaceController)!;
    expect(Object.keys(record)).toEqual([
      'holderIdentity',
      'holderKey',
      'leaseDurationSeconds',
      'acquireTime',
      'renewTime',
      'leaderTransitions',
    ]);
    expect(record).toMatchObject({
      holderIdentity: 'ts',
      holderKey: 'default',
      leaseDurationSeconds: 2,
      leaderTransitions: 3,
    });
    expect(record['renewTime']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  test('istiod of the default revision takes the lock from istiod-ts of another revision, which stops at once', async () => {
    defaultTagPointsAt('default');
    const ts = istiodTs('ts', LEASE_NAMES.nodeUntaint, { revision: 'canary' });
    await eventually('istiod-ts (canary) leads', () => ts.running());
    expect(configMapRecord(server, LEASE_NAMES.nodeUntaint)?.['holderKey']).toBe('canary');
    // istiod's KeyComparison lets the default revision overwrite a live canary record.
    const taken = Date.now();
    istiod({ kind: 'ConfigMap', name: LEASE_NAMES.nodeUntaint }, 'istiod-default-0', 'default').keepRenewing();
    await eventually('istiod-ts stops', () => !ts.running());
    // Seeing another holder stops the controller on the next poll, not at the renew deadline.
    expect(Date.now() - taken).toBeLessThan(FAST.renewDeadlineMs);
    await sleep(FAST.leaseDurationMs * 1.5);
    expect(ts.events).toEqual(['start', 'stop']);
    expect(configMapRecord(server, LEASE_NAMES.nodeUntaint)?.['holderIdentity']).toBe('istiod-default-0');
  });

  test('istiod-ts of the default revision takes a live lock from istiod of another revision', async () => {
    defaultTagPointsAt('default');
    istiod({ kind: 'ConfigMap', name: LEASE_NAMES.ipAutoallocate }, 'istiod-canary-0', 'canary').keepRenewing();
    const t0 = Date.now();
    const ts = istiodTs('ts', LEASE_NAMES.ipAutoallocate);
    await eventually('istiod-ts (default) leads', () => ts.running());
    expect(Date.now() - t0).toBeLessThan(FAST.leaseDurationMs);
    // This canary stand-in keeps rewriting its record blindly; a real istiod would see the default's
    // record and back off. Once it stops, the record is istiod-ts's.
    istiods[0]!.crash();
    await eventually(
      "the record is istiod-ts's",
      () => configMapRecord(server, LEASE_NAMES.ipAutoallocate)?.['holderIdentity'] === 'ts',
    );
    expect(configMapRecord(server, LEASE_NAMES.ipAutoallocate)).toMatchObject({
      holderKey: 'default',
      leaderTransitions: 3,
    });
  });

  test('a default tag rendered as its Service only (no injector webhook in ambient) gives the same priority', async () => {
    defaultTagServicePointsAt('default');
    istiod({ kind: 'ConfigMap', name: LEASE_NAMES.ipAutoallocate }, 'istiod-canary-0', 'canary').keepRenewing();
    const ts = istiodTs('ts', LEASE_NAMES.ipAutoallocate);
    await eventually('istiod-ts (default) leads', () => ts.running());
    expect(server.requests.some((r) => r.resource === 'services' && r.verb === 'get')).toBe(true);
  });

  test('without a default tag no revision outranks another: a live lock of another revision is left alone', async () => {
    istiod({ kind: 'ConfigMap', name: LEASE_NAMES.ipAutoallocate }, 'istiod-canary-0', 'canary').keepRenewing();
    const ts = istiodTs('ts', LEASE_NAMES.ipAutoallocate);
    await sleep(FAST.leaseDurationMs * 1.5);
    expect(ts.events).toEqual([]);
    expect(server.requests.some((r) => r.resource === 'mutatingwebhookconfigurations' && r.verb === 'get')).toBe(true);
  });

  test('a non-default istiod-ts never takes a live lock from the default revision', async () => {
    defaultTagPointsAt('default');
    istiod(ROOT_LOCK, 'istiod-default-0', 'default').keepRenewing();
    const ts = istiodTs('ts', LEASE_NAMES.namespaceController, { revision: 'canary' });
    await sleep(FAST.leaseDurationMs * 1.5);
    expect(ts.events).toEqual([]);
  });

  test('a local replica takes the lock from a remote-cluster istiod of its own revision', async () => {
    istiod(ROOT_LOCK, 'istiod-remote-0', '^default').keepRenewing();
    const ts = istiodTs('ts', LEASE_NAMES.namespaceController);
    await eventually('istiod-ts leads', () => ts.running(), FAST.leaseDurationMs / 2);
  });

  test('a record that cannot be read is never taken over, even after a lease duration', async () => {
    server.put({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: LEASE_NAMES.namespaceController,
        namespace: NS,
        annotations: { 'control-plane.alpha.kubernetes.io/leader': '{"holderIdentity":' },
      },
    });
    const ts = istiodTs('ts', LEASE_NAMES.namespaceController);
    await sleep(FAST.leaseDurationMs * 1.5);
    expect(ts.events).toEqual([]);
  });
});

describe('the status Lease held by istiod (istio-status-leader)', () => {
  test('keeps istiod-ts out while renewed, and is taken over once it expires', async () => {
    const holder = istiod(STATUS_LOCK, 'istiod-5d4f7c9b8-x2x7k', 'default').keepRenewing();
    const ts = istiodTs('ts', LEASE_NAMES.status);
    await sleep(FAST.leaseDurationMs * 1.5);
    expect(ts.events).toEqual([]);
    expect(server.list('v1', 'ConfigMap').map((c) => c.metadata.name)).not.toContain(LEASE_NAMES.status);
    holder.crash();
    await eventually('istiod-ts leads', () => ts.running(), FAST.leaseDurationMs * 3);
    const lease = server.get('coordination.k8s.io/v1', 'Lease', NS, LEASE_NAMES.status)!;
    expect(lease.metadata['annotations']).toEqual({ [LEASE_HOLDER_KEY_ANNOTATION]: 'default' });
    expect(lease['spec']).toMatchObject({ holderIdentity: 'ts', leaseDurationSeconds: 2, leaseTransitions: 3 });
    expect((lease['spec'] as { renewTime: string }).renewTime).toMatch(/\.\d{6}Z$/);
  });

  test('the default revision takes the Lease from another revision by its holder-key annotation', async () => {
    defaultTagPointsAt('default');
    istiod(STATUS_LOCK, 'istiod-canary-0', 'canary').keepRenewing();
    const ts = istiodTs('ts', LEASE_NAMES.status);
    await eventually('istiod-ts leads', () => ts.running(), FAST.leaseDurationMs / 2);
    istiods[0]!.crash();
    const key = () =>
      (
        server.get('coordination.k8s.io/v1', 'Lease', NS, LEASE_NAMES.status)?.metadata['annotations'] as
          Record<string, string> | undefined
      )?.[LEASE_HOLDER_KEY_ANNOTATION];
    await eventually('the Lease carries the default key', () => key() === 'default');
  });

  test('stopping releases the Lease as client-go does: no holder, no key annotation', async () => {
    const ts = istiodTs('ts', LEASE_NAMES.status);
    await eventually('istiod-ts leads', () => ts.running());
    await ts.elector.stop();
    const lease = server.get('coordination.k8s.io/v1', 'Lease', NS, LEASE_NAMES.status)!;
    expect(lease.metadata['annotations']).toBeUndefined();
    expect(lease['spec']).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
  });
});
