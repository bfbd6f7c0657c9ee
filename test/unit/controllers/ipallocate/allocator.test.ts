// The allocator with no API server: which address each eligible host of each ServiceEntry gets,
// given the entries and their status, and what becomes of it on conflicts, deletes and edits.

import { ServiceEntryAllocator, type Plan } from '../../../../src/controllers/ipallocate/allocator';
import {
  MAX_AUTOALLOCATED_ADDRESSES_PER_ENTRY,
  MAX_AUTOALLOCATED_HOSTS_PER_ENTRY,
  type ServiceEntryAddress,
} from '../../../../src/controllers/ipallocate/entries';
import { logs } from '../../../../src/log/logger';
import type { KubeObject } from '../../../../src/store/types';

logs.configure('ipallocate:silent');

const PREFIXES = { ipv4: '240.240.0.0/16', ipv6: '2001:2::/48' };

function se(
  name: string,
  spec: Record<string, unknown>,
  opts: { created?: string; status?: unknown; labels?: Record<string, string>; namespace?: string } = {},
): KubeObject {
  return {
    apiVersion: 'networking.istio.io/v1',
    kind: 'ServiceEntry',
    metadata: {
      name,
      namespace: opts.namespace ?? 'default',
      creationTimestamp: opts.created ?? '2026-01-01T00:00:00Z',
      ...(opts.labels ? { labels: opts.labels } : {}),
    },
    spec: { resolution: 'DNS', ...spec },
    ...(opts.status !== undefined ? { status: opts.status } : {}),
  };
}

/** The entry as it reads back after `plan` was written. */
function written(entry: KubeObject, plan: Plan): KubeObject {
  if (plan.kind !== 'write') return entry;
  return { ...entry, status: { ...(entry.status ?? {}), addresses: plan.addresses } };
}

function statusOf(entry: KubeObject): ServiceEntryAddress[] {
  return (entry.status as { addresses: ServiceEntryAddress[] }).addresses;
}

/** The entry with spec fields replaced. */
function edit(entry: KubeObject, spec: Record<string, unknown>): KubeObject {
  return { ...entry, spec: { ...(entry.spec as object), ...spec } };
}

function addresses(plan: Plan): ServiceEntryAddress[] {
  if (plan.kind !== 'write') throw new Error(`expected a write, got ${plan.kind}`);
  return plan.addresses;
}

/** Plans and commits each entry in turn; returns the entries as they read afterwards. */
function allocateAll(a: ServiceEntryAllocator, entries: KubeObject[]): KubeObject[] {
  return entries.map((e) => {
    const plan = a.plan(e);
    a.commit(plan);
    return written(e, plan);
  });
}

describe('eligibility (istiod ShouldV2AutoAllocateIP)', () => {
  test('an entry without spec.addresses gets one IPv4 and one IPv6 address per host, IPv4 first', () => {
    const a = new ServiceEntryAllocator(PREFIXES);
    expect(addresses(a.plan(se('a', { hosts: ['a.example.com', 'b.example.com'] })))).toEqual([
      { value: '240.240.0.1', host: 'a.example.com' },
      { value: '2001:2::1', host: 'a.example.com' },
      { value: '240.240.0.2', host: 'b.example.com' },
      { value: '2001:2::2', host: 'b.example.com' },
    ]);
  });

  test.each([
    ['resolution NONE', se('a', { hosts: ['a.example.com'], resolution: 'NONE' })],
    ['no resolution (NONE is the default)', se('a', { hosts: ['a.example.com'], resolution: undefined })],
    ['spec.addresses of its own', se('a', { hosts: ['a.example.com'], addresses: ['10.1.1.1'] })],
    ['a CIDR in spec.addresses', se('a', { hosts: ['a.example.com'], addresses: ['10.1.0.0/16'] })],
    [
      'the opt-out label (any case)',
      se('a', { hosts: ['a.example.com'] }, { labels: { 'networking.istio.io/enable-autoallocate-ip': 'FALSE' } }),
    ],
  ])('an entry with %s gets nothing', (_, entry) => {
    expect(new ServiceEntryAllocator(PREFIXES).plan(entry).kind).toBe('none');
  });

  test('wildcard hosts get addresses only with DYNAMIC_DNS resolution; duplicates once', () => {
    const a = new ServiceEntryAllocator(PREFIXES);
    const dns = addresses(a.plan(se('a', { hosts: ['*.wild.example.com', 'x.example.com', 'x.example.com'] })));
    expect(dns.map((x) => x.host)).toEqual(['x.example.com', 'x.example.com']);
    const dynamic = addresses(a.plan(se('b', { hosts: ['*.wild.example.com'], resolution: 'DYNAMIC_DNS' })));
    expect(dynamic.map((x) => x.host)).toEqual(['*.wild.example.com', '*.wild.example.com']);
  });

  test('an entry whose status already covers every host is not written', () => {
    const a = new ServiceEntryAllocator(PREFIXES);
    const [done] = allocateAll(a, [se('a', { hosts: ['a.example.com'] })]);
    expect(a.plan(done!).kind).toBe('none');
  });

  test('conditions and other status fields are kept beside the addresses', () => {
    const a = new ServiceEntryAllocator(PREFIXES);
    const entry = se('a', { hosts: ['a.example.com'] }, { status: { conditions: [{ type: 'x', status: 'True' }] } });
    expect(addresses(a.plan(entry))).toHaveLength(2);
  });
});

describe('stable across restarts', () => {
  test('a new allocator that warms from existing status keeps every address and writes nothing', () => {
    const first = new ServiceEntryAllocator(PREFIXES);
    const entries = allocateAll(first, [
      se('a', { hosts: ['a.example.com'] }, { created: '2026-01-01T00:00:00Z' }),
      se('b', { hosts: ['b.example.com', 'c.example.com'] }, { created: '2026-01-02T00:00:00Z' }),
    ]);
    const second = new ServiceEntryAllocator(PREFIXES);
    second.warm(entries);
    for (const e of entries) expect(second.plan(e).kind).toBe('none');
    // And the next entry does not reuse any of them.
    expect(addresses(second.plan(se('d', { hosts: ['d.example.com'] })))).toEqual([
      { value: '240.240.0.4', host: 'd.example.com' },
      { value: '2001:2::4', host: 'd.example.com' },
    ]);
  });

  test('fresh allocation is deterministic: oldest entry first, then namespace/name', () => {
    const run = () => {
      const a = new ServiceEntryAllocator(PREFIXES);
      const entries = [
        se('z', { hosts: ['z.example.com'] }, { created: '2026-01-02T00:00:00Z' }),
        se('b', { hosts: ['b.example.com'] }, { created: '2026-01-01T00:00:00Z' }),
        se('a', { hosts: ['a.example.com'] }, { created: '2026-01-01T00:00:00Z' }),
      ];
      const order = a.warm(entries);
      const byKey = new Map(entries.map((e) => [`default/${e.metadata.name}`, e]));
      return order.map((k) => addresses(a.plan(byKey.get(k)!))[0]!.value + ' ' + k);
    };
    expect(run()).toEqual(['240.240.0.1 default/a', '240.240.0.2 default/b', '240.240.0.3 default/z']);
    expect(run()).toEqual(run());
  });
});

describe('conflicts: two entries never share an address', () => {
  const older = se('older', { hosts: ['o.example.com'] }, { created: '2026-01-01T00:00:00Z' });
  const status = { addresses: [{ value: '240.240.0.7', host: 'o.example.com' }] };

  test('between two auto-allocations the older entry keeps it and the younger one gets a fresh address', () => {
    const o = { ...older, status };
    const young = se('young', { hosts: ['y.example.com'] }, { created: '2026-02-01T00:00:00Z' });
    const y = { ...young, status: { addresses: [{ value: '240.240.0.7', host: 'y.example.com' }] } };
    // Whichever is seen first, the older one wins.
    for (const order of [
      [o, y],
      [y, o],
    ]) {
      const alloc = new ServiceEntryAllocator(PREFIXES);
      alloc.warm(order);
      expect(alloc.plan(o).kind).toBe('none');
      expect(addresses(alloc.plan(y))).toEqual([{ value: '240.240.0.1', host: 'y.example.com' }]);
      expect(alloc.holderOf('240.240.0.7')).toBe('default/older');
    }
  });

  test('an address in another entry’s spec.addresses beats the auto-allocation, even of an older entry', () => {
    const a = new ServiceEntryAllocator(PREFIXES);
    const o = { ...older, status };
    const user = se(
      'user',
      { hosts: ['u.example.com'], addresses: ['240.240.0.7'] },
      { created: '2026-03-01T00:00:00Z' },
    );
    a.warm([o]);
    const userPlan = a.plan(user);
    expect(userPlan.kind).toBe('none');
    expect(userPlan.reassign).toEqual(['default/older']);
    expect(addresses(a.plan(o))).toEqual([{ value: '240.240.0.1', host: 'o.example.com' }]);
    expect(a.holderOf('240.240.0.7')).toBe('default/user');
  });

  test('the loser keeps its other addresses: only the lost one is replaced', () => {
    const a = new ServiceEntryAllocator(PREFIXES);
    const o = { ...older, status };
    const y = se('young', { hosts: ['y.example.com'] }, { created: '2026-02-01T00:00:00Z' });
    const yStatus = {
      addresses: [
        { value: '240.240.0.7', host: 'y.example.com' },
        { value: '2001:2::9', host: 'y.example.com' },
      ],
    };
    a.warm([o, { ...y, status: yStatus }]);
    expect(addresses(a.plan({ ...y, status: yStatus }))).toEqual([
      { value: '240.240.0.1', host: 'y.example.com' },
      { value: '2001:2::9', host: 'y.example.com' },
    ]);
  });
});

describe('freeing', () => {
  test('a deleted entry’s addresses are not the next new entry’s: never-used addresses go first', () => {
    const a = new ServiceEntryAllocator(PREFIXES, { quarantineMs: 0 });
    allocateAll(a, [se('a', { hosts: ['a.example.com'] }), se('b', { hosts: ['b.example.com'] })]);
    a.release('default/a');
    expect(addresses(a.plan(se('c', { hosts: ['c.example.com'] })))).toEqual([
      { value: '240.240.0.3', host: 'c.example.com' },
      { value: '2001:2::3', host: 'c.example.com' },
    ]);
  });

  test('an entry that gains spec.addresses has status.addresses cleared, and the addresses are freed once that lands', () => {
    const a = new ServiceEntryAllocator(PREFIXES);
    const [done] = allocateAll(a, [se('a', { hosts: ['a.example.com'] })]);
    const edited = edit(done!, { addresses: ['10.9.9.9'] });
    const plan = a.plan(edited);
    expect(addresses(plan)).toEqual([]);
    expect(a.inUse()).toEqual({ ipv4: 1, ipv6: 1 });
    a.commit(plan);
    expect(a.inUse()).toEqual({ ipv4: 0, ipv6: 0 });
  });

  test('a host removed from spec.hosts loses its addresses; the others keep theirs', () => {
    const a = new ServiceEntryAllocator(PREFIXES);
    const [done] = allocateAll(a, [se('a', { hosts: ['a.example.com', 'b.example.com'] })]);
    const plan = a.plan(edit(done!, { hosts: ['b.example.com'] }));
    expect(addresses(plan)).toEqual([
      { value: '240.240.0.2', host: 'b.example.com' },
      { value: '2001:2::2', host: 'b.example.com' },
    ]);
    a.commit(plan);
    expect(a.inUse()).toEqual({ ipv4: 1, ipv6: 1 });
  });

  test('a failed write: what the entry, read back, carries stays held; what it took besides is given back to its host, or freed when not needed', () => {
    const a = new ServiceEntryAllocator(PREFIXES);
    const entry = se('a', { hosts: ['a.example.com'] });
    const landed = a.plan(entry);
    expect(a.settle(landed, written(entry, landed))).toEqual([]);
    expect(a.inUse()).toEqual({ ipv4: 1, ipv6: 1 });
    const other = se('b', { hosts: ['b.example.com'] });
    const refused = a.plan(other);
    a.settle(refused, other);
    expect(a.inUse()).toEqual({ ipv4: 2, ipv6: 2 });
    // Planned again, b gets the same addresses: nothing new is taken.
    const again = a.plan(other);
    expect(addresses(again)).toEqual(addresses(refused));
    expect(again.kind === 'write' && again.fresh).toEqual([]);
    // Another writer addressed b meanwhile: what was taken for b is not needed and is freed.
    const theirs = { ...other, status: { addresses: [{ value: '10.1.1.1', host: 'b.example.com' }] } };
    a.settle(again, theirs);
    expect(a.plan(theirs).kind).toBe('none');
    expect(a.inUse()).toEqual({ ipv4: 1, ipv6: 1 });
    // Freed into quarantine: the next entry gets a never-used address.
    expect(addresses(a.plan(se('c', { hosts: ['c.example.com'] })))[0]!.value).toBe('240.240.0.3');
  });

  test('a failed write on an entry that is gone from the API server frees everything it held', () => {
    const a = new ServiceEntryAllocator(PREFIXES);
    const plan = a.plan(se('a', { hosts: ['a.example.com'] }));
    a.settle(plan, undefined);
    expect(a.inUse()).toEqual({ ipv4: 0, ipv6: 0 });
  });
});

describe('limits', () => {
  test(`one entry takes at most MAX_AUTOALLOCATED_HOSTS_PER_ENTRY (${MAX_AUTOALLOCATED_HOSTS_PER_ENTRY}) hosts x 2 families`, () => {
    const a = new ServiceEntryAllocator(PREFIXES);
    const hosts = Array.from({ length: MAX_AUTOALLOCATED_HOSTS_PER_ENTRY + 10 }, (_, i) => `h${i}.example.com`);
    const plan = addresses(a.plan(se('many', { hosts })));
    expect(plan).toHaveLength(MAX_AUTOALLOCATED_ADDRESSES_PER_ENTRY);
    expect(MAX_AUTOALLOCATED_ADDRESSES_PER_ENTRY).toBe(MAX_AUTOALLOCATED_HOSTS_PER_ENTRY * 2);
    expect(plan.at(-1)!.host).toBe(`h${MAX_AUTOALLOCATED_HOSTS_PER_ENTRY - 1}.example.com`);
  });

  test('exhausted ranges are logged (PrefixExhaustedError) and skipped, nothing throws; the hosts wait and a freed address makes room', () => {
    let now = 0;
    const a = new ServiceEntryAllocator(
      { ipv4: '240.240.0.0/30', ipv6: '2001:2::/126' },
      { quarantineMs: 100, now: () => now },
    );
    // A /30 hands out .1, .2 and .3.
    const entries = allocateAll(
      a,
      ['a', 'b', 'c'].map((n) => se(n, { hosts: [`${n}.example.com`] })),
    );
    expect(entries.map((e) => statusOf(e)[0]!.value)).toEqual(['240.240.0.1', '240.240.0.2', '240.240.0.3']);
    expect(a.plan(se('d', { hosts: ['d.example.com', 'd2.example.com'] })).kind).toBe('none');
    expect(a.waitingHosts()).toBe(2);
    expect(a.waitingEntries()).toEqual(['default/d']);
    expect(a.nextReuseAt()).toBeUndefined();
    // Freeing one makes room again once its quarantine is over.
    a.release('default/b');
    expect(a.nextReuseAt()).toBe(100);
    expect(a.plan(se('e', { hosts: ['e.example.com'] })).kind).toBe('none');
    now = 100;
    const plan = a.plan(se('d', { hosts: ['d.example.com', 'd2.example.com'] }));
    expect(addresses(plan)).toEqual([
      { value: '240.240.0.2', host: 'd.example.com' },
      { value: '2001:2::2', host: 'd.example.com' },
    ]);
    // d2.example.com, and e (planned while the range was full) still wait.
    expect(a.waitingHosts()).toBe(2);
    a.release('default/d');
    a.release('default/e');
    expect(a.waitingHosts()).toBe(0);
  });

  test('a host that got an address of one family only takes the other when it comes free', () => {
    const a = new ServiceEntryAllocator({ ipv4: '240.240.0.0/16', ipv6: '2001:2::/127' }, { quarantineMs: 0 });
    const [first] = allocateAll(a, [se('a', { hosts: ['a.example.com'] })]);
    const [partial] = allocateAll(a, [se('b', { hosts: ['b.example.com'] })]);
    expect(statusOf(partial!)).toEqual([{ value: '240.240.0.2', host: 'b.example.com' }]);
    expect(a.waitingHosts()).toBe(1);
    a.release('default/a');
    expect(addresses(a.plan(partial!))).toEqual([
      { value: '240.240.0.2', host: 'b.example.com' },
      { value: '2001:2::1', host: 'b.example.com' },
    ]);
    expect(a.waitingHosts()).toBe(0);
    expect(first).toBeDefined();
  });

  test('an entry whose ranges stay exhausted is not written at all', () => {
    const a = new ServiceEntryAllocator({ ipv4: '240.240.0.0/31', ipv6: '2001:2::/127' });
    allocateAll(a, [se('a', { hosts: ['a.example.com'] })]);
    expect(a.plan(se('b', { hosts: ['b.example.com'] })).kind).toBe('none');
    expect(a.plan(se('c', { hosts: ['c.example.com'] }, { status: { addresses: [] } })).kind).toBe('none');
  });
});
