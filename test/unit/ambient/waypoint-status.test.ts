// Which waypoint a Service or ServiceEntry is bound to, and why not: the facts its
// istio.io/WaypointBound condition is written from. They agree with what ztunnel is sent.

import { waypointStatusFacts } from '../../../src/ambient/waypoint-status';
import { serviceWaypoint } from '../../../src/ambient/waypoints';
import type { StoreView } from '../../../src/ambient/store-view';
import { gateway, namespace, service, serviceEntry, viewOf, type Obj } from '../../support/ambient/fixtures';

const USE = 'istio.io/use-waypoint';
const svc = (labels: Record<string, string> = {}, spec: Record<string, unknown> = {}) =>
  service('app', { ns: 'ns1', labels, spec });
const ns1 = (labels: Record<string, string> = {}) => namespace('ns1', labels);

function facts(objects: Obj[], target: Obj, settings = {}) {
  const view = viewOf([...objects, target], settings);
  return waypointStatusFacts(target.kind as 'Service' | 'ServiceEntry', target.object, view);
}

describe('waypoint status facts', () => {
  test('a Service bound through its own label names its waypoint', () => {
    expect(facts([ns1(), gateway('wp', 'ns1')], svc({ [USE]: 'wp' }))).toEqual({
      kind: 'Service',
      namespace: 'ns1',
      name: 'app',
      bound: { waypoint: 'ns1/wp', ingressLabelPresent: false, ingressUseWaypoint: false },
    });
  });

  test('a Service naming no waypoint has nothing to report', () => {
    expect(facts([ns1()], svc())).toEqual({ kind: 'Service', namespace: 'ns1', name: 'app' });
    expect(facts([ns1({ [USE]: 'wp' }), gateway('wp', 'ns1')], svc({ [USE]: 'none' }))).toEqual({
      kind: 'Service',
      namespace: 'ns1',
      name: 'app',
    });
  });

  test('a waypoint that does not exist, or has no address yet, is not ready', () => {
    expect(facts([ns1()], svc({ [USE]: 'wp' }))?.problem).toEqual({ kind: 'notReady', waypoint: 'ns1/wp' });
    expect(facts([ns1(), gateway('wp', 'ns1', { addresses: [] })], svc({ [USE]: 'wp' }))?.problem).toEqual({
      kind: 'notReady',
      waypoint: 'ns1/wp',
    });
    expect(facts([ns1()], svc({ [USE]: 'wp', 'istio.io/use-waypoint-namespace': 'other' }))?.problem).toEqual({
      kind: 'notReady',
      waypoint: 'other/wp',
    });
  });

  test('the namespace label binds too, and its problems are reported the same way', () => {
    expect(facts([ns1({ [USE]: 'wp' }), gateway('wp', 'ns1')], svc())?.bound?.waypoint).toBe('ns1/wp');
    expect(facts([ns1({ [USE]: 'wp' })], svc())?.problem).toEqual({ kind: 'notReady', waypoint: 'ns1/wp' });
  });

  test('a waypoint of another namespace that admits only its own denies attachment', () => {
    const target = svc({ [USE]: 'wp', 'istio.io/use-waypoint-namespace': 'other' });
    expect(facts([ns1(), namespace('other'), gateway('wp', 'other')], target)?.problem).toEqual({
      kind: 'attachmentDenied',
      waypoint: 'other/wp',
    });
    const fromAll = gateway('wp', 'other', {
      listeners: [{ name: 'mesh', port: 15008, protocol: 'HBONE', allowedRoutes: { namespaces: { from: 'All' } } }],
    });
    expect(facts([ns1(), namespace('other'), fromAll], target)?.bound?.waypoint).toBe('other/wp');
  });

  test('a workload-only waypoint does not carry service traffic', () => {
    const wp = gateway('wp', 'ns1', { labels: { 'istio.io/waypoint-for': 'workload' } });
    expect(facts([ns1(), wp], svc({ [USE]: 'wp' }))?.problem).toEqual({
      kind: 'unsupportedTrafficType',
      waypoint: 'ns1/wp',
      trafficType: 'service',
    });
  });

  test('a waypoint’s own Service binds nothing', () => {
    const own = svc({ [USE]: 'wp', 'gateway.istio.io/managed': 'istio.io-mesh-controller' });
    expect(facts([ns1(), gateway('wp', 'ns1')], own)).toEqual({ kind: 'Service', namespace: 'ns1', name: 'app' });
  });

  test('the ingress-use-waypoint label is read from the Service, else its namespace', () => {
    const wp = gateway('wp', 'ns1');
    expect(facts([ns1(), wp], svc({ [USE]: 'wp', 'istio.io/ingress-use-waypoint': 'true' }))?.bound).toMatchObject({
      ingressLabelPresent: true,
      ingressUseWaypoint: true,
    });
    expect(facts([ns1({ 'istio.io/ingress-use-waypoint': 'no' }), wp], svc({ [USE]: 'wp' }))?.bound).toMatchObject({
      ingressLabelPresent: true,
      ingressUseWaypoint: false,
    });
  });

  test('a canary that cannot be used keeps the primary bound and says why', () => {
    const wp = gateway('wp', 'ns1');
    const canary = (labels: Record<string, string>, annotations: Record<string, string> = {}) => {
      const o = svc({ [USE]: 'wp', ...labels });
      o.object.metadata.annotations = annotations;
      return o;
    };
    const same = facts([ns1(), wp], canary({ 'istio.io/use-waypoint-canary': 'wp' }));
    expect(same?.bound?.waypoint).toBe('ns1/wp');
    expect(same?.problem).toEqual({ kind: 'canarySameAsPrimary', waypoint: 'ns1/wp' });
    const weight = { 'istio.io/use-waypoint-canary-weight': '101' };
    expect(
      facts([ns1(), wp, gateway('wp2', 'ns1')], canary({ 'istio.io/use-waypoint-canary': 'wp2' }, weight))?.problem,
    ).toEqual({ kind: 'canaryInvalidWeight', waypoint: 'ns1/wp2' });
    expect(facts([ns1(), wp], canary({ 'istio.io/use-waypoint-canary': 'wp2' }))?.problem).toEqual({
      kind: 'notReady',
      waypoint: 'ns1/wp2',
    });
    expect(
      facts([ns1(), wp, gateway('wp2', 'ns1')], canary({ 'istio.io/use-waypoint-canary': 'wp2' }))?.problem,
    ).toBeUndefined();
  });

  test('ztunnel gets no Service from an ExternalName Service: no facts', () => {
    expect(facts([ns1()], svc({ [USE]: 'wp' }, { type: 'ExternalName', externalName: 'x.example' }))).toBeUndefined();
  });

  test('a namespace-private ServiceEntry may not bind a waypoint of another namespace; a hidden one has no facts', () => {
    const se = serviceEntry(
      'se',
      'ns1',
      { hosts: ['a.example'], resolution: 'DNS' },
      {
        labels: { [USE]: 'wp', 'istio.io/use-waypoint-namespace': 'other' },
      },
    );
    const fromAll = gateway('wp', 'other', {
      listeners: [{ name: 'mesh', port: 15008, protocol: 'HBONE', allowedRoutes: { namespaces: { from: 'All' } } }],
    });
    const objects = [ns1(), namespace('other'), fromAll];
    expect(facts(objects, se)?.bound?.waypoint).toBe('other/wp');
    expect(facts(objects, se, { serviceEntryVisibility: { defaultVisibility: 'NAMESPACE' } })?.problem).toEqual({
      kind: 'crossNamespaceForbidden',
      waypoint: 'other/wp',
    });
    expect(facts(objects, se, { serviceEntryVisibility: { defaultVisibility: 'NONE' } })).toBeUndefined();
  });

  test('bound exactly when serviceWaypoint gives ztunnel a waypoint', () => {
    const cases: { objects: Obj[]; target: Obj }[] = [
      { objects: [ns1(), gateway('wp', 'ns1')], target: svc({ [USE]: 'wp' }) },
      { objects: [ns1()], target: svc({ [USE]: 'wp' }) },
      { objects: [ns1({ [USE]: 'wp' }), gateway('wp', 'ns1')], target: svc() },
      {
        objects: [ns1(), gateway('wp', 'ns1', { labels: { 'istio.io/waypoint-for': 'all' } })],
        target: svc({ [USE]: 'wp' }),
      },
      {
        objects: [ns1(), gateway('wp', 'ns1', { labels: { 'istio.io/waypoint-for': 'none' } })],
        target: svc({ [USE]: 'wp' }),
      },
      {
        objects: [ns1(), namespace('o'), gateway('wp', 'o')],
        target: svc({ [USE]: 'wp', 'istio.io/use-waypoint-namespace': 'o' }),
      },
    ];
    for (const { objects, target } of cases) {
      const view: StoreView = viewOf([...objects, target]);
      const sent = serviceWaypoint('ns1', target.object.metadata.labels, view);
      const f = waypointStatusFacts('Service', target.object, view);
      expect(f?.bound?.waypoint).toBe(sent ? `${sent.namespace}/${sent.name}` : undefined);
    }
  });

  test('a ServiceEntry says whether a host is a wildcard and whether it races connections', () => {
    const se = (hosts: string[], annotations: Record<string, string> = {}) =>
      serviceEntry('se', 'ns1', { hosts, resolution: 'DNS' }, { annotations });
    expect(facts([ns1()], se(['a.example']))?.entry).toEqual({ wildcardHost: false, racingConnectStrategy: false });
    expect(facts([ns1()], se(['a.example', '*.b.example']))?.entry).toEqual({
      wildcardHost: true,
      racingConnectStrategy: false,
    });
    expect(facts([ns1()], se(['a.example'], { 'istio.io/connect-strategy': 'race_first_tcp_connect' }))?.entry).toEqual(
      { wildcardHost: false, racingConnectStrategy: true },
    );
    expect(
      facts([ns1()], se(['a.example'], { 'istio.io/connect-strategy': 'RACE_FIRST' }))?.entry?.racingConnectStrategy,
    ).toBe(false);
    // A Service has no such facts.
    expect(facts([ns1()], svc())?.entry).toBeUndefined();
  });

  test('a ServiceEntry carries its resolved visibility only while meshConfig sets serviceEntryVisibility', () => {
    const se = serviceEntry('se', 'ns1', { hosts: ['a.example'] });
    const team = ns1({ team: 'a' });
    expect(facts([team], se)?.entry?.visibility).toBeUndefined();
    expect(facts([team], se, { serviceEntryVisibility: {} })?.entry?.visibility).toBe('PUBLIC');
    const policies = {
      defaultVisibility: 'PUBLIC',
      policies: [{ visibility: 'NAMESPACE', matchingRules: [{ namespaceSelector: { matchLabels: { team: 'a' } } }] }],
    };
    expect(facts([team], se, { serviceEntryVisibility: policies })?.entry?.visibility).toBe('NAMESPACE');
    expect(facts([ns1()], se, { serviceEntryVisibility: policies })?.entry?.visibility).toBe('PUBLIC');
  });
});
