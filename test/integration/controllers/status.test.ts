// The ambient status controller against the test API server: conditions reach the objects through
// the status subresource as the watch brings changes, only when they change, at a bounded rate,
// from the one replica that leads istio-status-leader.

import { AmbientIndex } from '../../../src/ambient/ambient-index';
import { AmbientStatusController, STATUS_LEASE, startAmbientStatus } from '../../../src/controllers/status';
import { KubeStatusSink } from '../../../src/controllers/status/sinks';
import { defaultMeshConfig } from '../../../src/mesh/defaults';
import type { MeshConfigSource } from '../../../src/mesh/types';
import { KubeClient } from '../../../src/store/kube/client';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { KubeLeaderElector } from '../../../src/store/kube/leader';
import type { KubeSource } from '../../../src/store/kube/source';
import { KubeWriter } from '../../../src/store/kube/writes';
import type { MemoryStore } from '../../../src/store/memory-store';
import { eventually, type TestApiServer } from '../../support/apiserver';
import { meshSource } from '../../support/ambient/fixtures';
import { startServer, startSource } from '../kube/helpers';

const NS = 'ns1';
const AP = { group: 'security.istio.io', version: 'v1', plural: 'authorizationpolicies', namespace: NS };
const SVC = { group: '', version: 'v1', plural: 'services', namespace: NS };
const FAST = { qps: 1_000, burst: 1_000 };
const mesh: MeshConfigSource = { current: defaultMeshConfig, subscribe: () => () => undefined };

let server: TestApiServer;
let client: KubeClient;
let store: MemoryStore;
let source: KubeSource;
let index: AmbientIndex;
const stops: (() => Promise<void> | void)[] = [];

type Cond = {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
};

function conditions(apiVersion: string, kind: string, name: string): Cond[] {
  const status = server.get(apiVersion, kind, NS, name)?.['status'] as { conditions?: Cond[] } | undefined;
  return status?.conditions ?? [];
}
const apConditions = (name: string) => conditions('security.istio.io/v1', 'AuthorizationPolicy', name);
const svcConditions = (name: string) => conditions('v1', 'Service', name);
const seConditions = (name: string) => conditions('networking.istio.io/v1', 'ServiceEntry', name);
const weConditions = (name: string) => conditions('networking.istio.io/v1', 'WorkloadEntry', name);
const ofType = (list: Cond[], type: string) => list.find((c) => c.type === type);

/** Status patches made with a User-Agent containing `who` (every test client is named). */
const statusWrites = (who = 'istiod-ts') =>
  server.requests.filter((r) => r.verb === 'patch' && r.subresource === 'status' && r.userAgent.includes(who)).length;

function clientFor(id: string): KubeClient {
  return new KubeClient(loadKubeConfig(server.writeKubeconfig()), `istiod-ts/${id}`);
}

function controller(id = 'a', extra: Partial<ConstructorParameters<typeof AmbientStatusController>[0]> = {}) {
  const c = new AmbientStatusController({
    store,
    facts: index,
    sink: new KubeStatusSink(new KubeWriter(clientFor(id))),
    debounceMs: 10,
    rate: FAST,
    ...extra,
  });
  stops.push(() => c.stop());
  return c;
}

const policy = (name: string, spec: Record<string, unknown>, annotations: Record<string, string> = {}) => ({
  apiVersion: 'security.istio.io/v1',
  kind: 'AuthorizationPolicy',
  metadata: { name, namespace: NS, annotations },
  spec,
});
const waypoint = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name, namespace: NS, labels },
  spec: { gatewayClassName: 'istio-waypoint', listeners: [{ name: 'mesh', port: 15008, protocol: 'HBONE' }] },
  status: { addresses: [{ type: 'Hostname', value: `${name}.${NS}.svc.cluster.local` }] },
});

beforeEach(async () => {
  ({ server, client } = await startServer());
  server.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  server.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'istio-system' } });
  ({ store, source } = startSource(client));
  await source.start();
  await store.whenSynced();
  index = new AmbientIndex({ store, mesh, clusterId: 'Kubernetes', domain: 'cluster.local' });
});

afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  index.close();
  await source.stop();
  await server.close();
});

describe('ZtunnelAccepted on AuthorizationPolicies', () => {
  test('a policy is accepted through the status subresource, at its generation', async () => {
    server.put(policy('allow-l4', { rules: [{ from: [{ source: { namespaces: ['a'] } }] }] }));
    controller().start();
    await eventually('ZtunnelAccepted is written', () => apConditions('allow-l4').length === 1);
    expect(apConditions('allow-l4')).toEqual([
      {
        type: 'ZtunnelAccepted',
        status: 'True',
        lastTransitionTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) as string,
        reason: 'Accepted',
        message: 'attached to ztunnel',
        observedGeneration: 1,
      },
    ]);
    expect(server.requests.filter((r) => r.resource === 'authorizationpolicies' && r.verb === 'patch')).toEqual([
      expect.objectContaining({ subresource: 'status', name: 'allow-l4' }),
    ]);
  });

  test('an edit that adds HTTP attributes changes the condition and its observedGeneration, keeping the transition time', async () => {
    server.put(policy('p', { rules: [{ to: [{ operation: { ports: ['80'] } }] }] }));
    controller().start();
    await eventually('accepted', () => apConditions('p')[0]?.reason === 'Accepted');
    const first = apConditions('p')[0]!;
    const writer = new KubeWriter(client);
    const current = (await writer.get({ ...AP, name: 'p' }))!;
    await writer.update(
      { ...AP, name: 'p' },
      {
        ...current,
        spec: { rules: [{ to: [{ operation: { ports: ['80'], methods: ['GET'], paths: ['/admin'] } }] }] },
      },
    );
    await eventually('the edit is reported', () => apConditions('p')[0]?.observedGeneration === 2);
    expect(apConditions('p')).toEqual([
      {
        type: 'ZtunnelAccepted',
        status: 'True',
        lastTransitionTime: first.lastTransitionTime,
        reason: 'UnsupportedValue',
        message:
          'ztunnel does not support HTTP attributes (found: methods, paths). In ambient mode you must use a waypoint ' +
          'proxy to enforce HTTP rules. Within an ALLOW policy, rules matching HTTP attributes are omitted. This will ' +
          'be more restrictive than requested.',
        observedGeneration: 2,
      },
    ]);
  });

  test('a dry-run policy is not accepted while ztunnel dry-run support is off', async () => {
    server.put(policy('dry', { action: 'DENY', rules: [{}] }, { 'istio.io/dry-run': 'true' }));
    controller().start();
    await eventually('refused', () => apConditions('dry').length === 1);
    expect(apConditions('dry')[0]).toMatchObject({
      status: 'False',
      reason: 'UnsupportedValue',
      message:
        'found policy "ns1/dry" using dry-run annotation, but support for ambient dry-run authorizationPolicies isn\'t enabled',
    });
  });
});

describe('istio.io/WaypointBound on Services', () => {
  const service = (labels: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'app', namespace: NS, labels },
    spec: { clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], selector: { app: 'app' }, ports: [{ port: 80 }] },
    // Another controller's condition: ours never touch it.
    status: {
      loadBalancer: {},
      conditions: [
        {
          type: 'example.com/Other',
          status: 'True',
          reason: 'Fine',
          message: '',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    },
  });

  test('missing waypoint -> False WaypointIsNotReady; created -> True; label removed -> pruned, others kept', async () => {
    server.put(service({ 'istio.io/use-waypoint': 'wp' }));
    controller().start();
    await eventually('not ready reported', () => svcConditions('app').length === 2);
    expect(svcConditions('app')[1]).toMatchObject({
      type: 'istio.io/WaypointBound',
      status: 'False',
      reason: 'WaypointIsNotReady',
      message: 'waypoint "ns1/wp" is not ready',
    });

    server.put(waypoint('wp'));
    await eventually('bound', () => svcConditions('app')[1]?.status === 'True');
    expect(svcConditions('app')[1]).toMatchObject({
      reason: 'WaypointAccepted',
      message: 'Successfully attached to waypoint ns1/wp',
    });

    const writer = new KubeWriter(client);
    const current = (await writer.get({ ...SVC, name: 'app' }))!;
    await writer.update({ ...SVC, name: 'app' }, { ...current, metadata: { ...current.metadata, labels: {} } });
    await eventually('pruned', () => svcConditions('app').length === 1);
    expect(svcConditions('app').map((c) => c.type)).toEqual(['example.com/Other']);
  });
});

describe('WaypointAccepted on AuthorizationPolicies with targetRefs', () => {
  const GW = 'gateway.networking.k8s.io';

  test('missing waypoint -> False TargetNotFound; created -> True Accepted; targetRefs removed -> pruned', async () => {
    server.put(policy('on-gw', { targetRefs: [{ group: GW, kind: 'Gateway', name: 'wp' }] }));
    controller().start();
    await eventually('not found reported', () => apConditions('on-gw').length === 1);
    expect(apConditions('on-gw')).toEqual([
      {
        type: 'WaypointAccepted',
        status: 'False',
        lastTransitionTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) as string,
        reason: 'TargetNotFound',
        message: 'not bound',
        observedGeneration: 1,
      },
    ]);

    server.put(waypoint('wp'));
    await eventually('bound', () => apConditions('on-gw')[0]?.status === 'True');
    expect(apConditions('on-gw')[0]).toMatchObject({ reason: 'Accepted', message: 'bound to ns1/wp' });

    // Without targetRefs the policy is ztunnel's: WaypointAccepted goes, ZtunnelAccepted comes.
    const writer = new KubeWriter(client);
    const current = (await writer.get({ ...AP, name: 'on-gw' }))!;
    await writer.update({ ...AP, name: 'on-gw' }, { ...current, spec: {} });
    await eventually('pruned', () => apConditions('on-gw').every((c) => c.type !== 'WaypointAccepted'));
    await eventually('ztunnel’s', () => apConditions('on-gw').length === 1);
    expect(apConditions('on-gw').map((c) => c.type)).toEqual(['ZtunnelAccepted']);
  });

  test('a Service without a waypoint -> False AncestorNotBound; its namespace labelled -> True Accepted', async () => {
    server.put({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'app', namespace: NS },
      spec: { clusterIP: '10.96.0.11', clusterIPs: ['10.96.0.11'], selector: { app: 'app' }, ports: [{ port: 80 }] },
    });
    server.put(waypoint('wp'));
    server.put(policy('on-svc', { targetRefs: [{ group: '', kind: 'Service', name: 'app' }] }));
    controller().start();
    await eventually('not bound reported', () => apConditions('on-svc').length === 1);
    expect(apConditions('on-svc')[0]).toMatchObject({
      type: 'WaypointAccepted',
      status: 'False',
      reason: 'AncestorNotBound',
      message: 'Service ns1/app is not bound to a waypoint',
    });
    server.put({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: NS, labels: { 'istio.io/use-waypoint': 'wp' } },
    });
    await eventually('bound through the namespace', () => apConditions('on-svc')[0]?.status === 'True');
    expect(apConditions('on-svc')[0]).toMatchObject({ reason: 'Accepted', message: 'bound to ns1/wp' });
  });

  test('a GatewayClass target outside the root namespace is Invalid', async () => {
    server.put(policy('on-class', { targetRefs: [{ group: GW, kind: 'GatewayClass', name: 'istio-waypoint' }] }));
    controller().start();
    await eventually('invalid reported', () => apConditions('on-class').length === 1);
    expect(apConditions('on-class')[0]).toMatchObject({
      type: 'WaypointAccepted',
      status: 'False',
      reason: 'Invalid',
      message: 'AuthorizationPolicy must be in the root namespace `istio-system` when referencing a GatewayClass',
      observedGeneration: 1,
    });
  });
});

describe('istio.io/WaypointBound on WorkloadEntries', () => {
  const WE = { group: 'networking.istio.io', version: 'v1', plural: 'workloadentries', namespace: NS };

  test('missing waypoint -> False WaypointIsNotReady; a workload waypoint created -> True; label removed -> pruned', async () => {
    server.put({
      apiVersion: 'networking.istio.io/v1',
      kind: 'WorkloadEntry',
      metadata: { name: 'vm', namespace: NS, labels: { 'istio.io/use-waypoint': 'wp' } },
      spec: { address: '10.0.0.9' },
    });
    controller().start();
    await eventually('not ready reported', () => weConditions('vm').length === 1);
    expect(weConditions('vm')[0]).toMatchObject({
      type: 'istio.io/WaypointBound',
      status: 'False',
      reason: 'WaypointIsNotReady',
      message: 'waypoint "ns1/wp" is not ready',
    });

    server.put(waypoint('wp', { 'istio.io/waypoint-for': 'workload' }));
    await eventually('bound', () => weConditions('vm')[0]?.status === 'True');
    expect(weConditions('vm')[0]).toMatchObject({
      reason: 'WaypointAccepted',
      message: 'Successfully attached to waypoint ns1/wp',
    });

    const writer = new KubeWriter(client);
    const current = (await writer.get({ ...WE, name: 'vm' }))!;
    await writer.update({ ...WE, name: 'vm' }, { ...current, metadata: { ...current.metadata, labels: {} } });
    await eventually('pruned', () => weConditions('vm').length === 0);
  });
});

describe('ServiceEntries: istio.io/WaypointMissing and istio.io/VisibilityApplied', () => {
  const SE = { group: 'networking.istio.io', version: 'v1', plural: 'serviceentries', namespace: NS };
  const entry = (hosts: string[], labels: Record<string, string> = {}) => ({
    apiVersion: 'networking.istio.io/v1',
    kind: 'ServiceEntry',
    metadata: { name: 'se', namespace: NS, labels },
    spec: { hosts, ports: [{ number: 443, name: 'tls', protocol: 'TLS' }], resolution: 'DYNAMIC_DNS' },
  });

  test('a wildcard ServiceEntry without a waypoint is missing one until it is bound', async () => {
    server.put(entry(['*.example.com']));
    server.put(waypoint('wp'));
    controller().start();
    await eventually('missing reported', () => seConditions('se').length === 1);
    expect(seConditions('se')[0]).toMatchObject({
      type: 'istio.io/WaypointMissing',
      status: 'True',
      reason: 'NoWaypointForWildcardService',
      message: 'ServiceEntry will not apply until it is bound to a valid waypoint.',
    });
    const writer = new KubeWriter(client);
    const current = (await writer.get({ ...SE, name: 'se' }))!;
    await writer.update(
      { ...SE, name: 'se' },
      { ...current, metadata: { ...current.metadata, labels: { 'istio.io/use-waypoint': 'wp' } } },
    );
    await eventually('bound', () => ofType(seConditions('se'), 'istio.io/WaypointBound')?.status === 'True');
    expect(seConditions('se').map((c) => c.type)).toEqual(['istio.io/WaypointBound']);
  });

  test('VisibilityApplied follows meshConfig serviceEntryVisibility, and goes when it is unset', async () => {
    const mutable = meshSource({ serviceEntryVisibility: { defaultVisibility: 'PUBLIC' } });
    const own = new AmbientIndex({ store, mesh: mutable, clusterId: 'Kubernetes', domain: 'cluster.local' });
    stops.push(() => own.close());
    server.put(entry(['a.example.com']));
    controller('a', { facts: own, onMeshChange: (l) => mutable.subscribe(() => l()) }).start();
    await eventually('public reported', () => seConditions('se').length === 1);
    expect(seConditions('se')[0]).toMatchObject({
      type: 'istio.io/VisibilityApplied',
      status: 'True',
      reason: 'Public',
      message: 'ServiceEntry is visible to the entire mesh (PUBLIC).',
    });
    mutable.set({ serviceEntryVisibility: { defaultVisibility: 'NAMESPACE' } });
    await eventually('namespace reported', () => seConditions('se')[0]?.reason === 'Namespace');
    expect(seConditions('se')[0]?.message).toBe(
      'ServiceEntry is visible only within its own namespace (NAMESPACE), per mesh serviceEntryVisibility.',
    );
    mutable.set({ serviceEntryVisibility: undefined });
    await eventually('pruned', () => seConditions('se').length === 0);
  });
});

describe('writing', () => {
  test('only on change: converged objects are not written again, not on unrelated events nor on a restart', async () => {
    server.put(policy('p', {}));
    server.put(waypoint('wp'));
    server.put({ ...policy('q', {}), metadata: { name: 'q', namespace: NS } });
    const c = controller();
    c.start();
    await eventually('both written', () => apConditions('p').length === 1 && apConditions('q').length === 1);
    await c.idle();
    const settled = statusWrites();
    expect(settled).toBe(2);
    // Unrelated changes: a namespace label, the waypoint, a policy label (no new generation).
    server.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { team: 'x' } } });
    server.put({ ...waypoint('wp'), metadata: { name: 'wp', namespace: NS, labels: { a: 'b' } } });
    const writer = new KubeWriter(client);
    const p = (await writer.get({ ...AP, name: 'p' }))!;
    await writer.update({ ...AP, name: 'p' }, { ...p, metadata: { ...p.metadata, labels: { x: 'y' } } });
    await eventually(
      'the label is seen',
      () => store.get('AuthorizationPolicy', NS, 'p')?.metadata.labels?.['x'] === 'y',
    );
    await c.stop();
    c.start(); // a new leadership term merges everything again
    await new Promise((resolve) => setTimeout(resolve, 200));
    await c.idle();
    expect(statusWrites()).toBe(settled);
  });

  test('a burst of edits to one object is coalesced into at most two writes, ending at the last generation', async () => {
    server.put(policy('p', {}));
    const c = controller('a', { debounceMs: 100 });
    c.start();
    await eventually('written', () => apConditions('p').length === 1);
    await c.idle();
    const before = statusWrites();
    // Ten edits within a millisecond, as a script applying a policy in a loop would make them.
    const stored = server.get('security.istio.io/v1', 'AuthorizationPolicy', NS, 'p')!;
    for (let i = 0; i < 10; i++) {
      const spec = { rules: [{ from: [{ source: { namespaces: [`n${i}`] } }] }] };
      server.put({
        ...stored,
        apiVersion: 'security.istio.io/v1',
        kind: 'AuthorizationPolicy',
        metadata: { ...stored.metadata, generation: 2 + i },
        spec,
      });
    }
    await eventually('the last generation is reported', () => apConditions('p')[0]?.observedGeneration === 11);
    await c.idle();
    expect(statusWrites() - before).toBeLessThanOrEqual(2);
  });

  test('the rate limit holds under a burst: never more than burst + qps x elapsed writes', async () => {
    const rate = { qps: 5, burst: 3 };
    for (let i = 0; i < 15; i++) server.put(policy(`p${i}`, {}));
    const c = controller('a', { rate });
    const started = Date.now();
    c.start();
    for (;;) {
      const written = statusWrites();
      const elapsed = (Date.now() - started) / 1000;
      expect(written).toBeLessThanOrEqual(rate.burst + Math.ceil(rate.qps * elapsed));
      if (written === 15) break;
      if (elapsed > 10) throw new Error(`only ${written} of 15 written in 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    // 12 writes beyond the burst at 5 a second take at least 2.4 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_200);
  });

  test('two replicas: only the leader of istio-status-leader writes, and the other takes over when it stops', async () => {
    const timing = { leaseDurationMs: 3_000, renewDeadlineMs: 1_000, retryPeriodMs: 100 };
    const electors = ['a', 'b'].map(
      (id) =>
        new KubeLeaderElector({ client: clientFor(`elect-${id}`), namespace: 'istio-system', identity: id, timing }),
    );
    electors.forEach((elector, i) => {
      const id = i === 0 ? 'a' : 'b';
      const c = controller(id);
      elector.runWhileLeader(STATUS_LEASE, () => {
        c.start();
        return () => c.stop();
      });
      stops.push(() => elector.stop());
    });
    server.put(policy('first', {}));
    await eventually('written by the leader', () => apConditions('first').length === 1);
    const leader = statusWrites('istiod-ts/a') > 0 ? 'a' : 'b';
    const follower = leader === 'a' ? 'b' : 'a';
    expect(statusWrites(`istiod-ts/${follower}`)).toBe(0);
    expect(server.get('coordination.k8s.io/v1', 'Lease', 'istio-system', STATUS_LEASE)).toBeDefined();

    await electors[leader === 'a' ? 0 : 1]!.stop();
    server.put(policy('second', {}));
    await eventually('written by the new leader', () => apConditions('second').length === 1, 10_000);
    expect(server.requests.filter((r) => r.verb === 'patch' && r.name === 'second').map((r) => r.userAgent)).toEqual([
      expect.stringContaining(`istiod-ts/${follower}`),
    ]);
  });

  test('AMBIENT_ENABLE_STATUS=false: no controller, no page, no writes', async () => {
    server.put(policy('p', {}));
    const pages: string[] = [];
    const started = startAmbientStatus(
      {
        options: { env: { AMBIENT_ENABLE_STATUS: false } },
        store,
        mesh,
        leader: { runWhileLeader: (_lease, run) => void stops.push(run()) },
        debug: { add: (name) => void pages.push(name) },
        onShutdown: () => undefined,
      },
      index,
      new KubeWriter(clientFor('disabled')),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect({ started, pages, writes: statusWrites() }).toEqual({ started: undefined, pages: [], writes: 0 });
  });
});
