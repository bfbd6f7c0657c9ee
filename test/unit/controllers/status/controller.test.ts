// The status controller without an API server: which events re-check which objects, the JSON
// patch it sends, and local mode's /debug/status.

import { StatusDirtyTracker } from '../../../../src/controllers/status/dirty';
import { statusPatch } from '../../../../src/controllers/status/sinks';
import { STATUS_DEBUG_PAGE, startAmbientStatus } from '../../../../src/controllers/status';
import { DebugRouter } from '../../../../src/server/debug';
import { SoleLeader } from '../../../../src/server/leader';
import type { StoreEvent } from '../../../../src/store/types';
import {
  authz,
  gateway,
  indexOf,
  meshSource,
  namespace,
  service,
  serviceEntry,
  storeWith,
  workloadEntry,
} from '../../../support/ambient/fixtures';

const USE = 'istio.io/use-waypoint';

describe('which objects an event re-checks', () => {
  const store = storeWith([
    namespace('ns1'),
    namespace('ns2', { [USE]: 'wp' }),
    service('bound', { ns: 'ns1', labels: { [USE]: 'wp', 'istio.io/use-waypoint-namespace': 'ns2' } }),
    service('plain', { ns: 'ns1' }),
    service('inherits', { ns: 'ns2' }),
    serviceEntry('se', 'ns2', { hosts: ['a.example'] }),
    gateway('wp', 'ns2', { className: 'istio-waypoint' }),
    authz('p', 'ns1', {}),
  ]);
  const tracker = new StatusDirtyTracker(store);
  const marked = (e: Partial<StoreEvent> & Pick<StoreEvent, 'kind' | 'object'>) => {
    const out = new Set<string>();
    tracker.mark({ type: 'update', ...e }, out);
    return [...out].sort();
  };

  test('a policy, Service or ServiceEntry re-checks itself', () => {
    expect(marked({ kind: 'AuthorizationPolicy', object: store.get('AuthorizationPolicy', 'ns1', 'p')! })).toEqual([
      'AuthorizationPolicy/ns1/p',
    ]);
  });

  test('a waypoint re-checks what names it, directly or through its namespace', () => {
    expect(marked({ kind: 'Gateway', object: store.get('Gateway', 'ns2', 'wp')! })).toEqual([
      'Service/ns1/bound',
      'Service/ns2/inherits',
      'ServiceEntry/ns2/se',
    ]);
  });

  test('a GatewayClass re-checks as each Gateway of that class', () => {
    expect(marked({ kind: 'GatewayClass', object: { metadata: { name: 'istio-waypoint' } } })).toEqual([
      'Service/ns1/bound',
      'Service/ns2/inherits',
      'ServiceEntry/ns2/se',
    ]);
  });

  test('a namespace re-checks its Services and ServiceEntries', () => {
    expect(marked({ kind: 'Namespace', object: store.get('Namespace', undefined, 'ns1')! })).toEqual([
      'Service/ns1/bound',
      'Service/ns1/plain',
    ]);
  });
});

describe('which objects an event re-checks: WorkloadEntries and policy targets', () => {
  const GW = 'gateway.networking.k8s.io';
  const store = storeWith([
    namespace('ns1'),
    namespace('ns2', { [USE]: 'wp' }),
    gateway('wp', 'ns2', { className: 'istio-waypoint' }),
    workloadEntry(
      'vm',
      'ns1',
      { address: '10.0.0.1' },
      { labels: { [USE]: 'wp', 'istio.io/use-waypoint-namespace': 'ns2' } },
    ),
    workloadEntry('inherits', 'ns2', { address: '10.0.0.2' }),
    workloadEntry('instance', 'ns2', {
      address: '10.0.0.3',
      labels: { 'gateway.networking.k8s.io/gateway-name': 'wp' },
    }),
    service('app', { ns: 'ns1' }),
    serviceEntry('se', 'ns2', { hosts: ['a.example'] }),
    authz('on-svc', 'ns1', { targetRefs: [{ group: '', kind: 'Service', name: 'app' }] }),
    authz('on-gw', 'ns1', { targetRefs: [{ group: GW, kind: 'Gateway', name: 'wp', namespace: 'ns2' }] }),
    authz('on-se', 'ns1', {
      targetRef: { group: 'networking.istio.io', kind: 'ServiceEntry', name: 'se', namespace: 'ns2' },
    }),
    authz('on-class', 'istio-system', { targetRefs: [{ group: GW, kind: 'GatewayClass', name: 'istio-waypoint' }] }),
    authz('plain', 'ns1', {}),
  ]);
  const tracker = new StatusDirtyTracker(store);
  const marked = (e: Partial<StoreEvent> & Pick<StoreEvent, 'kind' | 'object'>) => {
    const out = new Set<string>();
    tracker.mark({ type: 'update', ...e }, out);
    return [...out].sort();
  };
  const byWaypoint = [
    'AuthorizationPolicy/ns1/on-gw',
    'AuthorizationPolicy/ns1/on-se',
    'ServiceEntry/ns2/se',
    'WorkloadEntry/ns1/vm',
    'WorkloadEntry/ns2/inherits',
    'WorkloadEntry/ns2/instance',
  ];

  test('a second tracker over the same store shares the target index', () => {
    expect(() => new StatusDirtyTracker(store)).not.toThrow();
  });

  test('a WorkloadEntry re-checks itself', () => {
    expect(marked({ kind: 'WorkloadEntry', object: store.get('WorkloadEntry', 'ns1', 'vm')! })).toEqual([
      'WorkloadEntry/ns1/vm',
    ]);
  });

  test('a Service or ServiceEntry re-checks itself and the policies targeting it', () => {
    expect(marked({ kind: 'Service', object: store.get('Service', 'ns1', 'app')! })).toEqual([
      'AuthorizationPolicy/ns1/on-svc',
      'Service/ns1/app',
    ]);
    expect(marked({ kind: 'ServiceEntry', type: 'delete', object: store.get('ServiceEntry', 'ns2', 'se')! })).toEqual([
      'AuthorizationPolicy/ns1/on-se',
      'ServiceEntry/ns2/se',
    ]);
  });

  test('a waypoint re-checks the entries naming it or its instances, the policies targeting it, and those through its Services', () => {
    expect(marked({ kind: 'Gateway', object: store.get('Gateway', 'ns2', 'wp')! })).toEqual(byWaypoint);
  });

  test('a GatewayClass re-checks the policies targeting it, and as each Gateway of that class', () => {
    expect(marked({ kind: 'GatewayClass', object: { metadata: { name: 'istio-waypoint' } } })).toEqual(
      ['AuthorizationPolicy/istio-system/on-class', ...byWaypoint].sort(),
    );
  });

  test('a namespace re-checks its WorkloadEntries and the policies targeting its Services', () => {
    expect(marked({ kind: 'Namespace', object: store.get('Namespace', undefined, 'ns1')! })).toEqual([
      'AuthorizationPolicy/ns1/on-svc',
      'Service/ns1/app',
      'WorkloadEntry/ns1/vm',
    ]);
  });

  test('a meshConfig change re-checks every ServiceEntry and AuthorizationPolicy', () => {
    const out = new Set<string>();
    tracker.meshChanged(out);
    expect([...out].sort()).toEqual([
      'AuthorizationPolicy/istio-system/on-class',
      'AuthorizationPolicy/ns1/on-gw',
      'AuthorizationPolicy/ns1/on-se',
      'AuthorizationPolicy/ns1/on-svc',
      'AuthorizationPolicy/ns1/plain',
      'ServiceEntry/ns2/se',
    ]);
  });
});

describe('the status patch', () => {
  const meta = { name: 'p', namespace: 'ns1', resourceVersion: '7' };
  const cond = { type: 'ZtunnelAccepted' };

  test('existing conditions are the guard: the patch fails if another writer changed them', () => {
    const existing = [{ type: 'Other' }];
    expect(statusPatch({ metadata: meta, status: { conditions: existing } }, [cond])).toEqual([
      { op: 'test', path: '/status/conditions', value: existing },
      { op: 'replace', path: '/status/conditions', value: [cond] },
    ]);
    expect(statusPatch({ metadata: meta, status: { conditions: [cond] } }, [])).toEqual([
      { op: 'test', path: '/status/conditions', value: [cond] },
      { op: 'remove', path: '/status/conditions' },
    ]);
  });

  test('without conditions the resourceVersion is the guard, and other status fields stay', () => {
    expect(statusPatch({ metadata: meta, status: { addresses: [] } }, [cond])).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'add', path: '/status/conditions', value: [cond] },
    ]);
    expect(statusPatch({ metadata: meta }, [cond])).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'add', path: '/status', value: { conditions: [cond] } },
    ]);
  });
});

describe('local mode', () => {
  test('/debug/status shows the conditions istiod-ts would write, with nothing written anywhere', async () => {
    const store = storeWith([
      namespace('ns1'),
      authz('p', 'ns1', { action: 'AUDIT' }, { generation: 2 }),
      service('app', { ns: 'ns1', labels: { [USE]: 'missing' } }),
      service('plain', { ns: 'ns1' }),
    ]);
    const mesh = meshSource();
    const index = indexOf(store, mesh);
    const debug = new DebugRouter();
    const leader = new SoleLeader();
    const controller = startAmbientStatus(
      { options: { env: { AMBIENT_ENABLE_STATUS: true } }, store, mesh, leader, debug, onShutdown: () => undefined },
      index,
      undefined,
    )!;
    await new Promise((resolve) => setTimeout(resolve, 150));
    await controller.idle();
    const page = await debug.handle(STATUS_DEBUG_PAGE, {
      path: '',
      query: new URLSearchParams(),
      method: 'GET',
      body: '',
    });
    expect(page.body).toEqual([
      {
        kind: 'AuthorizationPolicy',
        namespace: 'ns1',
        name: 'p',
        conditions: [
          expect.objectContaining({
            type: 'ZtunnelAccepted',
            status: 'False',
            reason: 'UnsupportedValue',
            message: 'ztunnel does not support the AUDIT action',
            observedGeneration: 2,
          }),
        ],
      },
      {
        kind: 'Service',
        namespace: 'ns1',
        name: 'app',
        conditions: [
          expect.objectContaining({
            type: 'istio.io/WaypointBound',
            status: 'False',
            reason: 'WaypointIsNotReady',
            message: 'waypoint "ns1/missing" is not ready',
          }),
        ],
      },
    ]);
    expect(store.get('AuthorizationPolicy', 'ns1', 'p')?.status).toBeUndefined();
    await leader.stop();
    index.close();
  });
});
