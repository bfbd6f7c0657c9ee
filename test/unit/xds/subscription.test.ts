import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL } from '../../../src/contract/xds-resources';
import { DeltaDiscoveryRequest, HeldVersions, heldVersions } from '../../../src/xds/grpc/proto';
import { CacheDigests } from '../../../src/xds/wire/version-digest';
import { PushBatch } from '../../../src/xds/protocol/push';
import { LARGE_DELTA_NAMES, TypeSubscription } from '../../../src/xds/protocol/subscription';
import { FakeCache, demoCache } from '../../support/xds/fake-cache';

const A = 'Kubernetes//Pod/default/a';
const B = 'Kubernetes//Pod/default/b';
const C = 'Kubernetes//Pod/default/c';
const ECHO = 'default/echo.default.svc.cluster.local';

type RequestInit = Partial<Omit<DeltaDiscoveryRequest, 'initial_resource_versions'>> & {
  initial_resource_versions?: Record<string, string>;
};

function req(r: RequestInit): DeltaDiscoveryRequest {
  return {
    node: null,
    type_url: ADDRESS_TYPE_URL,
    resource_names_subscribe: [],
    resource_names_unsubscribe: [],
    response_nonce: '',
    error_detail: null,
    ...r,
    initial_resource_versions: heldVersions(r.initial_resource_versions),
  };
}

function sub(r: RequestInit = {}, type = ADDRESS_TYPE_URL, cache = demoCache()): TypeSubscription {
  const s = new TypeSubscription(type, true);
  s.initialize(req({ type_url: type, ...r }), cache);
  return s;
}

const names = (d: { resources: { name: string }[] } | undefined) => (d?.resources ?? []).map((r) => r.name).sort();
const push = (cache: ReturnType<typeof demoCache>, changed: string[], full = false, type = ADDRESS_TYPE_URL) =>
  new PushBatch({ changes: new Map([[type, new Set(changed)]]), full, eventAt: 0 }, cache);

describe('wildcard', () => {
  test('an empty subscribe list is a wildcard subscription to everything', () => {
    const s = sub();
    expect(s.wildcard).toBe(true);
    expect(names(s.take({ cache: demoCache(), nodeName: 'node-1' }))).toEqual([A, B, C, ECHO].sort());
  });

  test('"*" in the subscribe list is a wildcard subscription', () => {
    expect(sub({ resource_names_subscribe: ['*'] }).wildcard).toBe(true);
  });

  test('subscribe ["*"] with unsubscribe ["*"] is an explicit subscription to nothing', () => {
    const s = sub({ resource_names_subscribe: ['*'], resource_names_unsubscribe: ['*'] });
    expect(s.wildcard).toBe(false);
    expect(names(s.take({ cache: demoCache(), nodeName: '' }))).toEqual([]);
  });

  test('the first response is sent even when empty, later empty deltas are not', () => {
    const cache = demoCache();
    const s = sub({}, 'type.googleapis.com/other');
    expect(s.take({ cache: cache, nodeName: '' })).toBeDefined();
    expect(s.take({ cache: cache, nodeName: '' })).toBeUndefined();
  });

  test('initial_resource_versions: unchanged names are skipped, vanished names removed', () => {
    const cache = demoCache();
    const versionA = cache.get(ADDRESS_TYPE_URL, A)!.version;
    const s = sub(
      { initial_resource_versions: { [A]: versionA, [B]: 'old', 'Kubernetes//Pod/default/gone': 'x' } },
      ADDRESS_TYPE_URL,
      cache,
    );
    const d = s.take({ cache: cache, nodeName: '' })!;
    expect(names(d)).toEqual([B, C, ECHO].sort());
    expect(d.removed).toEqual(['Kubernetes//Pod/default/gone']);
  });

  test('an unchanged reconnect owes only an empty response and needs no full-sync slot', () => {
    const cache = demoCache();
    const held = Object.fromEntries([...cache.all(ADDRESS_TYPE_URL)].map((r) => [r.name, r.version]));
    const s = sub({ initial_resource_versions: held }, ADDRESS_TYPE_URL, cache);
    expect(s.needsFullSync()).toBe(false);
    expect(s.take({ cache, nodeName: '' })).toMatchObject({ resources: [], removed: [] });
  });

  describe('with the cache digest', () => {
    const digestOf = (cache: FakeCache) => new CacheDigests(cache, [ADDRESS_TYPE_URL]).get(ADDRESS_TYPE_URL)!;
    const initialize = (cache: FakeCache, held: HeldVersions) => {
      const s = new TypeSubscription(ADDRESS_TYPE_URL, true);
      s.initialize({ ...req({}), initial_resource_versions: held }, cache, digestOf(cache));
      return s;
    };
    const current = (cache: FakeCache) => new Map([...cache.all(ADDRESS_TYPE_URL)].map((r) => [r.name, r.version]));

    test('an unchanged reconnect is settled by the digest alone: the names are never decoded', () => {
      const cache = demoCache();
      const exact = heldVersions(current(cache));
      const digestOnly: HeldVersions = {
        size: exact.size,
        digest: exact.digest,
        map: () => {
          throw new Error('decoded');
        },
      };
      const s = initialize(cache, digestOnly);
      expect(s.take({ cache, nodeName: '' })).toMatchObject({ resources: [], removed: [] });
    });

    test('a digest that differs falls back to the exact per-name comparison', () => {
      const cache = demoCache();
      const held = current(cache);
      held.set(B, 'old');
      held.set('Kubernetes//Pod/default/gone', 'x');
      let decoded = 0;
      const exact = heldVersions(held);
      const s = initialize(cache, { ...exact, map: () => (decoded++, exact.map()) });
      const d = s.take({ cache, nodeName: '' })!;
      expect(decoded).toBe(1);
      expect(names(d)).toEqual([B]);
      expect(d.removed).toEqual(['Kubernetes//Pod/default/gone']);
    });

    test('a change after the digest was taken is not hidden: the client still gets it', () => {
      const cache = demoCache();
      const digests = new CacheDigests(cache, [ADDRESS_TYPE_URL]);
      cache.subscribe((changes) => digests.apply(changes));
      const held = heldVersions(current(cache));
      cache.setWorkload({ uid: A, ip: '10.0.0.1', node: 'node-1', label: 'moved on' }).commit();
      const s = new TypeSubscription(ADDRESS_TYPE_URL, true);
      s.initialize({ ...req({}), initial_resource_versions: held }, cache, digests.get(ADDRESS_TYPE_URL));
      expect(names(s.take({ cache, nodeName: '' }))).toEqual([A]);
    });
  });

  test(`a reconnect owing LARGE_DELTA_NAMES (${LARGE_DELTA_NAMES}) names or more is treated as a full sync`, () => {
    const cache = new FakeCache();
    for (let i = 0; i < LARGE_DELTA_NAMES; i++)
      cache.setWorkload({ uid: `w${i}`, ip: `10.2.${i >> 8}.${i & 255}`, node: 'n' });
    const stale = (n: number) =>
      Object.fromEntries([...cache.all(ADDRESS_TYPE_URL)].slice(0, n).map((r) => [r.name, 'stale']));
    expect(sub({ initial_resource_versions: stale(1) }, ADDRESS_TYPE_URL, cache).needsFullSync()).toBe(true);
    const mostlyCurrent = Object.fromEntries(
      [...cache.all(ADDRESS_TYPE_URL)].map((r, i) => [r.name, i === 0 ? 'stale' : r.version]),
    );
    expect(sub({ initial_resource_versions: mostlyCurrent }, ADDRESS_TYPE_URL, cache).needsFullSync()).toBe(false);
  });

  test('pending changes are a set of names: many pushes of one name send its latest version once', () => {
    const cache = demoCache();
    const s = sub();
    s.take({ cache: cache, nodeName: '' });
    for (let i = 0; i < 5; i++) {
      cache.setWorkload({ uid: A, ip: '10.0.0.1', node: 'node-1', label: `v${i}` });
      s.addPush(push(cache, [A]));
    }
    expect(s.pendingCount()).toBe(1);
    const d = s.take({ cache: cache, nodeName: '' })!;
    expect(d.resources).toHaveLength(1);
    expect(d.resources[0]!.version).toBe(cache.get(ADDRESS_TYPE_URL, A)!.version);
  });

  test('a changed name that no longer exists is sent as removed', () => {
    const cache = demoCache();
    const s = sub();
    s.take({ cache: cache, nodeName: '' });
    cache.delete(ADDRESS_TYPE_URL, A);
    s.addPush(push(cache, [A]));
    expect(s.take({ cache: cache, nodeName: '' })).toMatchObject({ resources: [], removed: [A] });
  });

  test('an idle wildcard stream uses the body shared by the push; a busy one builds its own', () => {
    const cache = demoCache();
    const idle = sub();
    const busy = sub();
    idle.take({ cache: cache, nodeName: '' });
    const batch = push(cache, [A]);
    busy.addPush(batch); // busy still owes its first response
    idle.addPush(batch);
    expect(idle.take({ cache: cache, nodeName: '' })!.shared).toBe(batch.sharedDelta(ADDRESS_TYPE_URL)!.body);
    expect(busy.take({ cache: cache, nodeName: '' })!.shared).toBeUndefined();
  });

  test('a full push resends every resource of the type', () => {
    const cache = demoCache();
    const s = sub();
    s.take({ cache: cache, nodeName: '' });
    s.addPush(new PushBatch({ changes: new Map(), full: true, eventAt: 0 }, cache));
    expect(names(s.take({ cache: cache, nodeName: '' }))).toEqual([A, B, C, ECHO].sort());
  });

  test('the oldest change time behind a response is kept for convergence', () => {
    const cache = demoCache();
    const s = sub();
    s.take({ cache: cache, nodeName: '' });
    s.addPush(new PushBatch({ changes: new Map([[ADDRESS_TYPE_URL, new Set([A])]]), full: false, eventAt: 50 }, cache));
    s.addPush(new PushBatch({ changes: new Map([[ADDRESS_TYPE_URL, new Set([B])]]), full: false, eventAt: 70 }, cache));
    expect(s.take({ cache: cache, nodeName: '' })!.eventAt).toBe(50);
  });
});

describe('explicit (on-demand)', () => {
  function onDemand(cache = demoCache(), node = ''): TypeSubscription {
    const s = sub({ resource_names_subscribe: ['*'], resource_names_unsubscribe: ['*'] });
    s.take({ cache: cache, nodeName: node });
    return s;
  }

  test('the first response carries every workload on the client node', () => {
    const s = sub({ resource_names_subscribe: ['*'], resource_names_unsubscribe: ['*'] });
    expect(names(s.take({ cache: demoCache(), nodeName: 'node-1' }))).toEqual([A, C]);
  });

  test('a requested key that is not a resource name is listed in removed after its matches', () => {
    const s = onDemand();
    s.resubscribe(req({ resource_names_subscribe: ['/10.0.0.2'] }));
    const d = s.take({ cache: demoCache(), nodeName: '' })!;
    expect(names(d)).toEqual([B]);
    expect(d.removed).toEqual(['/10.0.0.2']);
  });

  test('a service key brings the service and its workloads and is not removed', () => {
    const s = onDemand();
    s.resubscribe(req({ resource_names_subscribe: [ECHO] }));
    const d = s.take({ cache: demoCache(), nodeName: '' })!;
    expect(names(d)).toEqual([A, B, ECHO].sort());
    expect(d.removed).toEqual([]);
  });

  test('an unknown key is answered with only its removal', () => {
    const s = onDemand();
    s.resubscribe(req({ resource_names_subscribe: ['nowhere/x'] }));
    expect(s.take({ cache: demoCache(), nodeName: '' })).toMatchObject({ resources: [], removed: ['nowhere/x'] });
  });

  test('a repeated request for a key is answered again', () => {
    const cache = demoCache();
    const s = onDemand(cache);
    s.resubscribe(req({ resource_names_subscribe: [A] }));
    s.take({ cache: cache, nodeName: '' });
    s.resubscribe(req({ resource_names_subscribe: [A] }));
    expect(names(s.take({ cache: cache, nodeName: '' }))).toEqual([A]);
  });

  test('pushes include only watched names, and a watched name that vanishes is removed', () => {
    const cache = demoCache();
    const s = onDemand(cache);
    s.resubscribe(req({ resource_names_subscribe: [A] }));
    s.take({ cache: cache, nodeName: '' });
    cache.delete(ADDRESS_TYPE_URL, A);
    cache.setWorkload({ uid: C, ip: '10.0.0.3', node: 'node-1', label: 'z' });
    s.addPush(push(cache, [A, C]));
    expect(s.take({ cache: cache, nodeName: '' })).toMatchObject({ resources: [], removed: [A] });
    expect(s.watched.has(A)).toBe(false);
  });

  test('on reconnect, names held at their current version are not resent', () => {
    const cache = demoCache();
    const s = sub({
      resource_names_subscribe: ['*'],
      resource_names_unsubscribe: ['*'],
      initial_resource_versions: { [A]: cache.get(ADDRESS_TYPE_URL, A)!.version, [B]: 'stale' },
    });
    expect(s.wildcard).toBe(false);
    expect(names(s.take({ cache: cache, nodeName: '' }))).toEqual([B]);
  });

  test('explicit Authorization names resolve only to themselves', () => {
    const cache = demoCache();
    const s = sub({ resource_names_subscribe: ['default/allow-echo', 'default/none'] }, AUTHORIZATION_TYPE_URL);
    const d = s.take({ cache: cache, nodeName: 'node-1' })!;
    expect(names(d)).toEqual(['default/allow-echo']);
    expect(d.removed).toEqual(['default/none']);
  });
});
