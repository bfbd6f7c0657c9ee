// ServiceEntry IP auto-allocation against the test API server: the controller reads entries
// through the Kubernetes source and the store, and writes status.addresses through the status
// subresource with a test-guarded JSON patch (KubeWriter, the one write path). Every write is
// counted: a settled mesh costs one write per entry that needs addresses, and nothing after.

import {
  IP_ALLOCATE_QUARANTINE_MS,
  IpAutoallocateController,
  KubeAddressStatusWriter,
  startIpAutoallocate,
  WAITING_HOSTS_METRIC,
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
import type { KubeClient } from '../../../src/store/kube/client';
import { namespace } from '../../support/apiserver/fixtures';
import type { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';
import { eventually, type TestApiServer } from '../../support/apiserver';
import { resourceKey } from '../../support/apiserver/resources';
import { meshSource } from '../../support/ambient/fixtures';
import { startServer, startSource } from '../kube/helpers';
import { logs } from '../../../src/log/logger';
import { Registry } from 'prom-client';

logs.configure('kube:error,ipallocate:error');

const PREFIXES = { ipv4: '240.240.0.0/16', ipv6: '2001:2::/48' };
/** A quarantine short enough to wait out in a test; the order of events, not its length, is checked. */
const WAKE_QUARANTINE_MS = 200;
const API_VERSION = 'networking.istio.io/v1';
const SE_TABLE = resourceKey('networking.istio.io', 'serviceentries');

interface Rig {
  server: TestApiServer;
  store: MemoryStore;
  source: KubeSource;
  client: KubeClient;
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
  rig = { server, store, source, client, writer: new KubeWriter(client), patches: [], controllers: [] };
});

afterEach(async () => {
  for (const c of rig.controllers) await c.stop();
  await rig.source.stop();
  await rig.server.close();
});

/** KubeWriter, recording each patch and letting a test act just before it is sent. */
function recordingWriter(writer: KubeWriter = rig.writer): Pick<KubeWriter, 'patch' | 'get' | 'list'> {
  return {
    patch: <T>(ref: ObjectRef, patch: Patch, opts?: WriteOptions): Promise<T> => {
      if (patch.type === 'json') rig.patches.push({ name: ref.name, ops: patch.ops });
      rig.beforePatch?.(ref.name);
      return writer.patch<T>(ref, patch, opts);
    },
    get: (ref, opts) => writer.get(ref, opts),
    list: (ref, query, opts) => writer.list(ref, query, opts),
  };
}

interface ControllerTuning {
  prefixes?: typeof PREFIXES;
  quarantineMs?: number;
  writer?: KubeWriter;
}

function startController(tuning: ControllerTuning = {}): IpAutoallocateController {
  const c = new IpAutoallocateController({
    store: rig.store,
    writer: new KubeAddressStatusWriter(recordingWriter(tuning.writer)),
    prefixes: tuning.prefixes ?? PREFIXES,
    backoff: { initialMs: 10, maxMs: 50 },
    ...(tuning.quarantineMs !== undefined ? { quarantineMs: tuning.quarantineMs } : {}),
  });
  c.start();
  rig.controllers.push(c);
  return c;
}

function serviceEntry(
  name: string,
  spec: Record<string, unknown>,
  status?: unknown,
  namespace = 'default',
): KubeObject {
  return rig.server.put({
    apiVersion: API_VERSION,
    kind: 'ServiceEntry',
    metadata: { name, namespace },
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

function addressesOf(name: string, namespace = 'default'): { value: string; host: string }[] | undefined {
  const status = rig.server.get(API_VERSION, 'ServiceEntry', namespace, name)?.['status'] as
    { addresses?: { value: string; host: string }[] } | undefined;
  return status?.addresses;
}

/** status.addresses once it has `count` entries. */
async function allocated(name: string, count = 2, namespace = 'default'): Promise<{ value: string; host: string }[]> {
  await eventually(`${name} has ${count} addresses`, () => addressesOf(name, namespace)?.length === count);
  return addressesOf(name, namespace)!;
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

test(`a deleted entry's addresses are quarantined (IP_ALLOCATE_QUARANTINE_MS, ${IP_ALLOCATE_QUARANTINE_MS} ms): an entry for another host created next gets never-used ones`, async () => {
  serviceEntry('old', { hosts: ['old.example.com'] });
  serviceEntry('keep', { hosts: ['keep.example.com'] });
  const c = startController();
  const freed = await allocated('old');
  const kept = await allocated('keep');
  await settle(c);
  rig.server.delete(API_VERSION, 'ServiceEntry', 'default', 'old');
  await eventually('the store saw the delete', () => !rig.store.get('ServiceEntry', 'default', 'old'));
  await settle(c);
  expect(c.allocator.holderOf(freed[0]!.value)).toBeUndefined();
  serviceEntry('new', { hosts: ['new.example.com'] });
  const fresh = (await allocated('new')).map((a) => a.value);
  expect(fresh).toEqual(['240.240.0.3', '2001:2::3']);
  expect(fresh.filter((v) => [...freed, ...kept].some((a) => a.value === v))).toEqual([]);
  await settle(c);
  expect(statusPatches()).toHaveLength(3);
});

test('a full range does not hand out a freed address during its quarantine: the new entry waits', async () => {
  const small = { ipv4: '240.240.0.0/30', ipv6: '2001:2::/126' };
  for (const n of ['a', 'b', 'c']) serviceEntry(n, { hosts: [`${n}.example.com`] });
  const c = startController({ prefixes: small });
  for (const n of ['a', 'b', 'c']) await allocated(n);
  await settle(c);
  rig.server.delete(API_VERSION, 'ServiceEntry', 'default', 'b');
  await eventually('the store saw the delete', () => !rig.store.get('ServiceEntry', 'default', 'b'));
  serviceEntry('d', { hosts: ['d.example.com'] });
  await eventually('d is waiting', () => c.waitingHosts() === 1);
  await settle(c);
  // The default quarantine is an hour: d waits, and b's address is nobody's.
  expect(addressesOf('d')).toBeUndefined();
  expect(c.allocator.holderOf('240.240.0.2')).toBeUndefined();
});

test('an entry deleted and recreated gets addresses again (never-used ones while there are any)', async () => {
  serviceEntry('again', { hosts: ['again.example.com'] });
  const c = startController();
  await allocated('again');
  rig.server.delete(API_VERSION, 'ServiceEntry', 'default', 'again');
  await eventually('the store saw the delete', () => !rig.store.get('ServiceEntry', 'default', 'again'));
  serviceEntry('again', { hosts: ['again.example.com'] });
  expect((await allocated('again')).map((a) => a.value)).toEqual(['240.240.0.2', '2001:2::2']);
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
  expect(had.some((a) => c.allocator.holderOf(a.value) !== undefined)).toBe(false);
  serviceEntry('next', { hosts: ['next.example.com'] });
  expect((await allocated('next')).map((a) => a.value)).toEqual(['240.240.0.2', '2001:2::2']);
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
  // What we had taken for the refused write is freed (the entry, read back, does not carry it).
  expect(c.allocator.holderOf('240.240.0.1')).toBeUndefined();
  serviceEntry('after', { hosts: ['after.example.com'] });
  expect((await allocated('after'))[0]!.value).toBe('240.240.0.2');
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

test('hosts left without an address wait for one: re-queued when a freed address leaves quarantine, without a change of their own, and counted', async () => {
  const small = { ipv4: '240.240.0.0/30', ipv6: '2001:2::/126' };
  const registry = new Registry();
  for (const n of ['a', 'b', 'c']) serviceEntry(n, { hosts: [`${n}.example.com`] });
  const leader = fakeLeader();
  startIpAutoallocate({
    env: { ...ENV, PILOT_IP_AUTOALLOCATE_IPV4_PREFIX: small.ipv4, PILOT_IP_AUTOALLOCATE_IPV6_PREFIX: small.ipv6 },
    store: rig.store,
    leader,
    kubeWriter: recordingWriter(),
    metrics: registry,
    quarantineMs: WAKE_QUARANTINE_MS,
  });
  const waiting = async () => (await registry.getSingleMetric(WAITING_HOSTS_METRIC)?.get())?.values[0]?.value;
  leader.lead();
  for (const n of ['a', 'b', 'c']) await allocated(n);
  serviceEntry('d', { hosts: ['d.example.com', 'd2.example.com'] });
  await eventually('two hosts of d wait', async () => (await waiting()) === 2);
  expect(addressesOf('d')).toBeUndefined();
  const freed = addressesOf('b')!;
  rig.server.delete(API_VERSION, 'ServiceEntry', 'default', 'b');
  // d is not edited: the freed address reaches it when its quarantine ends.
  expect(await allocated('d')).toEqual(freed.map((a) => ({ ...a, host: 'd.example.com' })));
  await eventually('one host of d still waits', async () => (await waiting()) === 1);
  rig.server.delete(API_VERSION, 'ServiceEntry', 'default', 'c');
  await allocated('d', 4);
  await eventually('no host waits', async () => (await waiting()) === 0);
});

test('a status write that landed but answered too late, then met 422 on retry, frees nothing the entry holds: the next entry gets other addresses', async () => {
  serviceEntry('slow', { hosts: ['slow.example.com'] });
  serviceEntry('next', { hosts: ['next.example.com'] });
  backdate('slow', '2025-01-01T00:00:00Z');
  await eventually('the store sees both', () => rig.store.list('ServiceEntry').length === 2);
  // The first status patch of `slow` is stored at once and answered after the client gave up;
  // KubeWriter retries it, and the retry's `test` op fails (422): the addresses are already there.
  rig.server.delays.add({
    verb: 'patch',
    resource: 'serviceentries',
    subresource: 'status',
    name: 'slow',
    ms: 60_000,
    times: 1,
  });
  const c = startController({
    writer: new KubeWriter(rig.client, { timeoutMs: 1_000, backoff: { initialMs: 10, maxMs: 50 } }),
  });
  const slow = await allocated('slow');
  await allocated('next');
  await settle(c);
  expect(rig.server.delays.abandoned).toEqual(['patch serviceentries']);
  const values = (name: string) =>
    rig.patches
      .filter((p) => p.name === name)
      .flatMap((p) => (p.ops.at(-1) as { value: { value: string }[] }).value.map((a) => a.value));
  // No patch of `next` ever carried an address of `slow`.
  expect(values('next').filter((v) => slow.some((a) => a.value === v))).toEqual([]);
  expect(addressesOf('slow')).toEqual(slow);
  expect(c.allocator.holderOf(slow[0]!.value)).toBe('default/slow');
});

test('an entry whose namespace leaves discoverySelectors keeps its addresses: no other entry gets them, and it is not moved when it comes back', async () => {
  await rig.source.stop();
  const selectors = { discoverySelectors: [{ matchLabels: { mesh: 'on' } }] };
  rig.server.put(namespace('default', { mesh: 'on' }));
  rig.server.put(namespace('apps', { mesh: 'on' }));
  const filtered = startSource(rig.client, { mesh: { current: () => selectors, subscribe: () => () => undefined } });
  rig.store = filtered.store;
  rig.source = filtered.source;
  await rig.source.start();
  await rig.store.whenSynced();
  const small = { ipv4: '240.240.0.0/30', ipv6: '2001:2::/126' };
  serviceEntry('held', { hosts: ['held.example.com'] }, undefined, 'apps');
  const c = startController({ prefixes: small, quarantineMs: 0 });
  const held = await allocated('held', 2, 'apps');
  await settle(c);

  rig.server.put(namespace('apps', { mesh: 'off' }));
  await eventually('the store no longer shows the entry', () => !rig.store.get('ServiceEntry', 'apps', 'held'));
  await settle(c);
  for (const n of ['b', 'c', 'd']) serviceEntry(n, { hosts: [`${n}.example.com`] });
  await allocated('b');
  await allocated('c');
  await settle(c);
  const everyAddress = ['b', 'c', 'd'].flatMap((n) => addressesOf(n) ?? []).map((a) => a.value);
  expect(everyAddress.filter((v) => held.some((a) => a.value === v))).toEqual([]);
  // The range is full with the hidden entry's addresses held: d waits.
  expect(addressesOf('d')).toBeUndefined();
  expect(c.waitingHosts()).toBe(1);

  rig.server.put(namespace('apps', { mesh: 'on' }));
  await eventually(
    'the store shows the entry again',
    () => rig.store.get('ServiceEntry', 'apps', 'held') !== undefined,
  );
  await settle(c);
  expect(addressesOf('held', 'apps')).toEqual(held);
  expect(rig.patches.filter((p) => p.name === 'held')).toHaveLength(1);
});

test('a new leader claims the addresses of entries outside discoverySelectors before it allocates anything', async () => {
  serviceEntry(
    'hidden',
    { hosts: ['hidden.example.com'] },
    {
      addresses: [
        { value: '240.240.0.1', host: 'hidden.example.com' },
        { value: '2001:2::1', host: 'hidden.example.com' },
      ],
    },
    'apps',
  );
  await rig.source.stop();
  const selectors = { discoverySelectors: [{ matchLabels: { mesh: 'on' } }] };
  rig.server.put(namespace('default', { mesh: 'on' }));
  rig.server.put(namespace('apps', { mesh: 'off' }));
  const filtered = startSource(rig.client, { mesh: { current: () => selectors, subscribe: () => () => undefined } });
  rig.store = filtered.store;
  rig.source = filtered.source;
  await rig.source.start();
  await rig.store.whenSynced();
  serviceEntry('visible', { hosts: ['visible.example.com'] });
  await eventually(
    'the store shows the visible entry',
    () => rig.store.get('ServiceEntry', 'default', 'visible') !== undefined,
  );
  const c = startController();
  expect((await allocated('visible')).map((a) => a.value)).toEqual(['240.240.0.2', '2001:2::2']);
  expect(c.allocator.holderOf('240.240.0.1')).toBe('apps/hidden');
});
