// Whether each targetRef of an AuthorizationPolicy reaches a waypoint: the facts its
// WaypointAccepted condition is written from (istiod's WaypointPolicyStatusCollection).

import { waypointPolicyFacts } from '../../../src/ambient/waypoint-policy-status';
import { authz, gateway, namespace, service, serviceEntry, viewOf, type Obj } from '../../support/ambient/fixtures';

const USE = 'istio.io/use-waypoint';
const GW = 'gateway.networking.k8s.io';
const gatewayClass = (name: string, controllerName: string): Obj => ({
  kind: 'GatewayClass',
  object: { metadata: { name }, spec: { controllerName } },
});
const ref = (kind: string, name: string, extra: Record<string, string> = {}) => ({
  group: kind === 'Service' ? '' : kind === 'ServiceEntry' ? 'networking.istio.io' : GW,
  kind,
  name,
  ...extra,
});

function targets(objects: Obj[], spec: Record<string, unknown>, ns = 'ns1', settings = {}) {
  const ap = authz('p', ns, spec, { generation: 3 });
  return waypointPolicyFacts(ap.object, viewOf([...objects, ap], settings))?.targets;
}

describe('waypoint policy facts', () => {
  test('a policy without targetRefs is not a waypoint’s: no facts', () => {
    const ap = authz('p', 'ns1', { rules: [{}] });
    expect(waypointPolicyFacts(ap.object, viewOf([ap]))).toBeUndefined();
  });

  test('a Gateway target is bound when it is a waypoint, else not found', () => {
    expect(
      waypointPolicyFacts(
        authz('p', 'ns1', { targetRefs: [ref('Gateway', 'wp')] }, { generation: 3 }).object,
        viewOf([namespace('ns1'), gateway('wp', 'ns1')]),
      ),
    ).toEqual({
      namespace: 'ns1',
      name: 'p',
      generation: 3,
      targets: [{ ancestor: `Gateway.${GW}:ns1/wp`, binding: { kind: 'bound', via: 'ns1/wp' } }],
    });
    expect(targets([namespace('ns1')], { targetRef: ref('Gateway', 'wp') })).toEqual([
      {
        ancestor: `Gateway.${GW}:ns1/wp`,
        binding: { kind: 'targetNotFound', targetKind: 'Gateway', target: 'ns1/wp' },
      },
    ]);
  });

  test('a Service target: bound through its own or its namespace’s label, unbound, or missing', () => {
    const wp = gateway('wp', 'ns1');
    expect(
      targets([namespace('ns1'), wp, service('app', { ns: 'ns1', labels: { [USE]: 'wp' } })], {
        targetRefs: [ref('Service', 'app')],
      }),
    ).toEqual([{ ancestor: 'Service.core:ns1/app', binding: { kind: 'bound', via: 'ns1/wp' } }]);
    expect(
      targets([namespace('ns1', { [USE]: 'wp' }), wp, service('app', { ns: 'ns1' })], {
        targetRefs: [ref('Service', 'app')],
      })?.[0]?.binding,
    ).toEqual({ kind: 'bound', via: 'ns1/wp' });
    expect(
      targets([namespace('ns1'), wp, service('app', { ns: 'ns1' })], { targetRefs: [ref('Service', 'app')] }),
    ).toEqual([
      {
        ancestor: 'Service.core:ns1/app',
        binding: { kind: 'ancestorNotBound', targetKind: 'Service', target: 'ns1/app' },
      },
    ]);
    expect(targets([namespace('ns1')], { targetRefs: [ref('Service', 'gone', { namespace: 'ns2' })] })).toEqual([
      {
        ancestor: 'Service.core:ns2/gone',
        binding: { kind: 'targetNotFound', targetKind: 'Service', target: 'ns2/gone' },
      },
    ]);
  });

  test('a Service bound to a workload-only waypoint is not bound', () => {
    const wp = gateway('wp', 'ns1', { labels: { 'istio.io/waypoint-for': 'workload' } });
    expect(
      targets([namespace('ns1'), wp, service('app', { ns: 'ns1', labels: { [USE]: 'wp' } })], {
        targetRefs: [ref('Service', 'app')],
      })?.[0]?.binding.kind,
    ).toBe('ancestorNotBound');
  });

  test('a ServiceEntry target may not reach another namespace’s waypoint under NAMESPACE visibility', () => {
    const fromAll = gateway('wp', 'other', {
      listeners: [{ name: 'mesh', port: 15008, protocol: 'HBONE', allowedRoutes: { namespaces: { from: 'All' } } }],
    });
    const se = serviceEntry(
      'se',
      'ns1',
      { hosts: ['a.example'] },
      {
        labels: { [USE]: 'wp', 'istio.io/use-waypoint-namespace': 'other' },
      },
    );
    const objects = [namespace('ns1'), namespace('other'), fromAll, se];
    const spec = { targetRefs: [ref('ServiceEntry', 'se')] };
    expect(targets(objects, spec)).toEqual([
      { ancestor: 'ServiceEntry.networking.istio.io:ns1/se', binding: { kind: 'bound', via: 'other/wp' } },
    ]);
    expect(targets(objects, spec, 'ns1', { serviceEntryVisibility: { defaultVisibility: 'NAMESPACE' } })).toEqual([
      {
        ancestor: 'ServiceEntry.networking.istio.io:ns1/se',
        binding: { kind: 'ancestorNotBound', targetKind: 'ServiceEntry', target: 'ns1/se' },
      },
    ]);
  });

  test('a GatewayClass target: only from the root namespace, only a class of waypoints', () => {
    const objects = [
      namespace('istio-system'),
      gatewayClass('istio-waypoint', 'istio.io/mesh-controller'),
      gatewayClass('other', 'example.com/gateway'),
    ];
    const spec = (name: string) => ({ targetRefs: [ref('GatewayClass', name)] });
    expect(targets(objects, spec('istio-waypoint'), 'istio-system')?.[0]?.binding).toEqual({
      kind: 'bound',
      via: 'istio-waypoint',
    });
    expect(targets(objects, spec('other'), 'istio-system')?.[0]?.binding).toEqual({
      kind: 'gatewayClassNotWaypoint',
    });
    expect(targets(objects, spec('missing'), 'istio-system')?.[0]?.binding).toEqual({
      kind: 'targetNotFound',
      targetKind: 'GatewayClass',
      target: 'istio-system/missing',
    });
    expect(targets(objects, spec('istio-waypoint'), 'ns1')).toEqual([
      {
        ancestor: `GatewayClass.${GW}:ns1/istio-waypoint`,
        binding: { kind: 'gatewayClassOutsideRoot', rootNamespace: 'istio-system' },
      },
    ]);
  });

  test('each targetRef in order; a kind no waypoint is reached through is unsupported', () => {
    const got = targets([namespace('ns1'), gateway('wp', 'ns1')], {
      targetRefs: [ref('Gateway', 'wp'), { group: 'apps', kind: 'Deployment', name: 'd' }],
    });
    expect(got).toEqual([
      { ancestor: `Gateway.${GW}:ns1/wp`, binding: { kind: 'bound', via: 'ns1/wp' } },
      { ancestor: 'Deployment.apps:ns1/d', binding: { kind: 'unsupportedKind' } },
    ]);
  });
});
