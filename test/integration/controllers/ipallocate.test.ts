// ServiceEntry IP auto-allocation against the test API server: the controller reads entries
// through the Kubernetes source and the store, and writes status.addresses through the status
// subresource with a test-guarded JSON patch (KubeWriter, the one write path). Every write is
// counted: a settled mesh costs one write per entry that needs addresses, and nothing after.

import {
  IpAutoallocateController,
  KubeAddressStatusWriter,
  startIpAutoallocate,
} from '../../../src/controllers/ipallocate';
import type { LeaderElector } from '../../../src/contract/leader';
import { LEASE_NAMES } from '../../../src/contract/leader';
import { AmbientIndex } from '../../../src/ambient/ambient-index';
import { decodeAddress } from '../../../src/ambient/codec';
import { ipToText } from '../../../src/ambient/ip';
import { ADDRESS_TYPE_URL } from '../../../src/contract/xds-resources';
import {
  KubeWriter,
  type JsonPatchOp,
  type Patch,
  type ObjectRef,
  type WriteOptions,
} from '../../../src/store/kube/writes';
import type { KubeSource } from '../../../src/store/kube/source';
import type { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';
import { eventually, type TestApiServer } from '../../support/apiserver';
import { resourceKey } from '../../support/apiserver/resources';
import { meshSource } from '../../support/ambient/fixtures';
import { startServer, startSource } from '../kube/helpers';
import { logs } from '../../../src/log/logger';

logs.configure('kube:error,ipallocate:error');

const PREFIXES = { ipv4: '240.240.0.0/16', ipv6: '2001:2::/48' };
const API_VERSION = 'networking.istio.io/v1';
const SE_TABLE = resourceKey('networking.istio.io', 'serviceentries');

interface Rig {
  server: TestApiServer;
  store: MemoryStore;
  source: KubeSource;
  writer: KubeWriter;
  /** Every JSON patch the controller sent, with the entry it was for. */
  patches: { name: string; ops: JsonPatchOp[] }[];
  /** Runs before each patch is sent (a concurrent writer's chance). */
  beforePatch?: (name: string) => void;
  controllers: IpAutoallocateController[];
}

let rig: Rig;

beforeEach(async () => {
  const { server, client } = await startServer();
  const { store, source } = startSource(client);
  await source.start();
  await store.whenSynced();
  rig = { server, store, source, writer: new KubeWriter(client), patches: [], controllers: [] };
});

afterEach(async () => {
  for (const c of rig.controllers) await c.stop();
  await rig.source.stop();
  await rig.server.close();
});

/** KubeWriter.patch, recording each patch and letting a test act just before it is sent. */
function recordingWriter(): Pick<KubeWriter, 'patch'> {
  return {
    patch: <T>(ref: ObjectRef, patch: Patch, opts?: WriteOptions): Promise<T> => {
      if (patch.type === 'json') rig.patches.push({ name: ref.name, ops: patch.ops });
      rig.beforePatch?.(ref.name);
      return rig.writer.patch<T>(ref, patch, opts);
    },
  };
}

function startController(): IpAutoallocateController {
  const c = new IpAutoallocateController({
    store: rig.store,
    writer: new KubeAddressStatusWriter(recordingWriter()),
    prefixes: PREFIXES,
    backoff: { initialMs: 10, maxMs: 50 },
  });
  c.start();
  rig.controllers.push(c);
  return c;
}

function serviceEntry(name: string, spec: Record<string, unknown>, status?: unknown): KubeObject {
  return rig.server.put({
    apiVersion: API_VERSION,
    kind: 'ServiceEntry',
    metadata: { name, namespace: 'default' },
    spec: { resolution: 'DNS', ports: [{ number: 443, name: 'https', protocol: 'TLS' }], ...spec },
    ...(status !== undefined ? { status } : {}),
  });
}

/** Rewrites an entry's creationTimestamp on the server (conflicts are decided by age). */
function backdate(name: string, created: string): void {
  const stored = rig.server.get(API_VERSION, 'ServiceEntry', 'default', name)!;
  rig.server.storage.write(
    SE_TABLE,
    { ...stored, metadata: { ...stored.metadata, creationTimestamp: created } },
    'MODIFIED',
  );
}

function addressesOf(name: string): { value: string; host: string }[] | undefined {
  const status = rig.server.get(API_VERSION, 'ServiceEntry', 'default', name)?.['status'] as
    { addresses?: { value: string; host: string }[] } | undefined;
  return status?.addresses;
}

/** status.addresses once it has `count` entries. */
async function allocated(name: string, count = 2): Promise<{ value: string; host: string }[]> {
  await eventually(`${name} has ${count} addresses`, () => addressesOf(name)?.length === count);
  return addressesOf(name)!;
}

const statusPatches = () =>
  rig.server.requests.filter(
    (r) => r.verb === 'patch' && r.resource === 'serviceentries' && r.subresource === 'status',
  );

async function settle(c: IpAutoallocateController): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 150)); // watch events of the last writes
  await c.idle();
}

test('an entry without addresses gets one address per host and family in status.addresses, through the status subresource; conditions stay', async () => {
  serviceEntry('api', { hosts: ['api.example.com'] }, { conditions: [{ type: 'Reconciled', status: 'True' }] });
  const c = startController();
  expect(await allocated('api')).toEqual([
    { value: '240.240.0.1', host: 'api.example.com' },
    { value: '2001:2::1', host: 'api.example.com' },
  ]);
  const stored = rig.server.get(API_VERSION, 'ServiceEntry', 'default', 'api')!;
  expect((stored['status'] as { conditions: unknown[] }).conditions).toEqual([{ type: 'Reconciled', status: 'True' }]);
  expect(rig.patches).toEqual([
    {
      name: 'api',
      ops: [
        { op: 'test', path: '/status/addresses', value: null },
        { op: 'replace', path: '/status/addresses', value: addressesOf('api') },
      ],
    },
  ]);
  await settle(c);
  expect(statusPatches()).toHaveLength(1);
});

test('an entry with no status at all gets one: test /status is null, add it, add the addresses', async () => {
  serviceEntry('bare', { hosts: ['bare.example.com'] });
  startController();
  await allocated('bare');
  expect(rig.patches[0]!.ops.map((o) => `${o.op} ${o.path}`)).toEqual([
    'test /status',
    'add /status',
    'add /status/addresses',
  ]);
});

test('stable across a restart: a second controller reads status back, keeps every address and writes nothing', async () => {
  for (const n of ['a', 'b', 'c']) serviceEntry(n, { hosts: [`${n}.example.com`] });
  const first = startController();
  const before = await Promise.all(['a', 'b', 'c'].map((n) => allocated(n)));
  await settle(first);
  await first.stop();
  const writes = statusPatches().length;
  expect(writes).toBe(3);

  const second = startController();
  await settle(second);
  expect(statusPatches()).toHaveLength(writes);
  expect(['a', 'b', 'c'].map((n) => addressesOf(n))).toEqual(before);
  // What it learned from status counts as taken: the next entry gets a fresh address.
  serviceEntry('d', { hosts: ['d.example.com'] });
  const d = await allocated('d');
  expect(before.flat().map((x) => x.value)).not.toContain(d[0]!.value);
});

test('two entries claiming one address: the older keeps it, the younger gets a fresh one, deterministically', async () => {
  const clash = [{ value: '240.240.0.7', host: 'x.example.com' }];
  serviceEntry(
    'younger',
    { hosts: ['y.example.com'] },
    { addresses: [{ value: '240.240.0.7', host: 'y.example.com' }] },
  );
  serviceEntry('older', { hosts: ['x.example.com'] }, { addresses: clash });
  backdate('older', '2025-01-01T00:00:00Z');
  backdate('younger', '2025-06-01T00:00:00Z');
  await eventually('the store sees both', () => rig.store.list('ServiceEntry').length === 2);
  const c = startController();
  await eventually('younger moved', () => addressesOf('younger')?.[0]?.value !== '240.240.0.7');
  await settle(c);
  expect(addressesOf('older')).toEqual(clash);
  expect(addressesOf('younger')).toEqual([{ value: '240.240.0.1', host: 'y.example.com' }]);
  expect(statusPatches()).toHaveLength(1);
});

test('an address named in another entry’s spec.addresses is taken from the auto-allocated entry', async () => {
  serviceEntry('auto', { hosts: ['auto.example.com'] });
  const c = startController();
  const [v4] = await allocated('auto');
  serviceEntry('user', { hosts: ['user.example.com'], addresses: [v4!.value] });
  await eventually('auto moved off the user address', () => addressesOf('auto')?.[0]?.value !== v4!.value);
  await settle(c);
  expect(addressesOf('auto')).toEqual([
    { value: '240.240.0.2', host: 'auto.example.com' },
    { value: '2001:2::1', host: 'auto.example.com' },
  ]);
  expect(addressesOf('user')).toBeUndefined();
});

test('a deleted entry frees its addresses: the next new entry gets them', async () => {
  serviceEntry('old', { hosts: ['old.example.com'] });
  serviceEntry('keep', { hosts: ['keep.example.com'] });
  const c = startController();
  const freed = await allocated('old');
  await allocated('keep');
  rig.server.delete(API_VERSION, 'ServiceEntry', 'default', 'old');
  await eventually('the store saw the delete', () => !rig.store.get('ServiceEntry', 'default', 'old'));
  serviceEntry('new', { hosts: ['new.example.com'] });
  expect((await allocated('new')).map((a) => a.value)).toEqual(freed.map((a) => a.value));
  await settle(c);
  expect(statusPatches()).toHaveLength(3);
});

test('an entry deleted and recreated gets addresses again', async () => {
  serviceEntry('again', { hosts: ['again.example.com'] });
  const c = startController();
  const first = await allocated('again');
  rig.server.delete(API_VERSION, 'ServiceEntry', 'default', 'again');
  await eventually('the store saw the delete', () => !rig.store.get('ServiceEntry', 'default', 'again'));
  serviceEntry('again', { hosts: ['again.example.com'] });
  expect(await allocated('again')).toEqual(first);
  await settle(c);
  expect(statusPatches()).toHaveLength(2);
});

test('an entry that gains spec.addresses has its status.addresses cleared, and its addresses go to the next entry', async () => {
  serviceEntry('grows', { hosts: ['grows.example.com'] });
  const c = startController();
  const had = await allocated('grows');
  serviceEntry('grows', { hosts: ['grows.example.com'], addresses: ['10.40.0.1'] }, { addresses: had });
  await eventually('status cleared', () => addressesOf('grows')?.length === 0);
  await settle(c);
  expect(rig.patches.at(-1)!.ops).toEqual([
    { op: 'test', path: '/status/addresses', value: had },
    { op: 'replace', path: '/status/addresses', value: [] },
  ]);
  serviceEntry('next', { hosts: ['next.example.com'] });
  expect((await allocated('next')).map((a) => a.value)).toEqual(had.map((a) => a.value));
});

test('a concurrent writer changes status.addresses between read and patch: the test op fails and the entry is decided again from fresh data', async () => {
  serviceEntry('raced', { hosts: ['raced.example.com'] }, { conditions: [] });
  const theirs = [{ value: '240.240.3.3', host: 'raced.example.com' }];
  let raced = false;
  rig.beforePatch = (name) => {
    if (name !== 'raced' || raced) return;
    raced = true;
    rig.server.put({
      ...rig.server.get(API_VERSION, 'ServiceEntry', 'default', 'raced')!,
      apiVersion: API_VERSION,
      kind: 'ServiceEntry',
      status: { conditions: [], addresses: theirs },
    });
  };
  const c = startController();
  await eventually('the race happened', () => raced);
  await settle(c);
  // Our patch was refused by its test op (422) and nothing overwrote the other writer.
  expect(rig.patches).toHaveLength(1);
  expect(addressesOf('raced')).toEqual(theirs);
  // What we had taken for the refused write is free again.
  serviceEntry('after', { hosts: ['after.example.com'] });
  expect((await allocated('after'))[0]!.value).toBe('240.240.0.1');
});

function fakeLeader(): LeaderElector & { lead(): void; leases: string[] } {
  const waiting: (() => unknown)[] = [];
  const leases: string[] = [];
  return {
    leases,
    runWhileLeader(lease, run) {
      leases.push(lease);
      waiting.push(run);
    },
    lead() {
      for (const run of waiting.splice(0)) run();
    },
  };
}

const ENV = {
  PILOT_ENABLE_IP_AUTOALLOCATE: true,
  PILOT_IP_AUTOALLOCATE_IPV4_PREFIX: PREFIXES.ipv4,
  PILOT_IP_AUTOALLOCATE_IPV6_PREFIX: PREFIXES.ipv6,
};

test('not the leader of istio-ip-autoallocate: no writes until leadership is gained', async () => {
  serviceEntry('waits', { hosts: ['waits.example.com'] });
  const leader = fakeLeader();
  startIpAutoallocate({ env: ENV, store: rig.store, leader, kubeWriter: recordingWriter() });
  expect(leader.leases).toEqual([LEASE_NAMES.ipAutoallocate]);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(statusPatches()).toHaveLength(0);
  leader.lead();
  await allocated('waits');
  expect(statusPatches()).toHaveLength(1);
});

test('PILOT_ENABLE_IP_AUTOALLOCATE=false: nothing runs and nothing is written', async () => {
  serviceEntry('off', { hosts: ['off.example.com'] });
  const leader = fakeLeader();
  startIpAutoallocate({
    env: { ...ENV, PILOT_ENABLE_IP_AUTOALLOCATE: false },
    store: rig.store,
    leader,
    kubeWriter: recordingWriter(),
  });
  leader.lead();
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(leader.leases).toEqual([]);
  expect(statusPatches()).toHaveLength(0);
});

test('no write storms: twenty entries cost twenty writes, and edits that keep the hosts cost none', async () => {
  for (let i = 0; i < 20; i++) serviceEntry(`e${i}`, { hosts: [`e${i}.example.com`] });
  const c = startController();
  await eventually('all allocated', () =>
    Array.from({ length: 20 }, (_, i) => addressesOf(`e${i}`)?.length === 2).every(Boolean),
  );
  await settle(c);
  expect(statusPatches()).toHaveLength(20);
  const e0 = rig.server.get(API_VERSION, 'ServiceEntry', 'default', 'e0')!;
  rig.server.put({
    ...e0,
    apiVersion: API_VERSION,
    kind: 'ServiceEntry',
    metadata: { ...e0.metadata, labels: { team: 'a' } },
  });
  await settle(c);
  expect(statusPatches()).toHaveLength(20);
  expect(c.writes).toBe(20);
});

test('the allocated VIP reaches ztunnel: the ambient index serves the entry’s Service with it', async () => {
  serviceEntry('vip', { hosts: ['vip.example.com'] });
  const index = new AmbientIndex({
    store: rig.store,
    mesh: meshSource(),
    clusterId: 'Kubernetes',
    domain: 'cluster.local',
  });
  try {
    const service = () => {
      const r = index.get(ADDRESS_TYPE_URL, 'default/vip.example.com');
      return r ? decodeAddress(r.bytes).service : undefined;
    };
    expect(service()?.addresses ?? []).toEqual([]);
    startController();
    await allocated('vip');
    await eventually('the Service carries the VIPs', () => (service()?.addresses?.length ?? 0) === 2);
    expect(service()!.addresses!.map((a) => ipToText(a.address))).toEqual(['240.240.0.1', '2001:2::1']);
  } finally {
    index.close();
  }
});
