// istiod's environment switches that change what the index derives. Before issue 34 each was
// ignored in silence: allocated ServiceEntry addresses were used with PILOT_ENABLE_IP_AUTOALLOCATE
// off, ServiceEntries kept selecting pods and Services WorkloadEntries, and no waypoint policy was
// synthesized. The generated mesh's goldens (test/golden/istiod/generated-*.json) hold istiod's
// own answers under the same switches; these cases pin each switch alone.

import { AmbientIndex } from '../../../src/ambient/ambient-index';
import { addressToJson, authorizationToJson } from '../../../src/ambient/codec';
import type { AmbientFeatures } from '../../../src/ambient/settings';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL } from '../../../src/contract/xds-resources';
import type { MemoryStore } from '../../../src/store/memory-store';
import {
  Obj,
  gateway,
  meshSource,
  namespace,
  pod,
  service,
  serviceEntry,
  storeWith,
  workloadEntry,
} from '../../support/ambient/fixtures';

function indexWith(
  objects: readonly Obj[],
  features: Partial<AmbientFeatures> = {},
): {
  index: AmbientIndex;
  store: MemoryStore;
} {
  const store = storeWith(objects);
  const index = new AmbientIndex({
    store,
    mesh: meshSource(),
    clusterId: 'Kubernetes',
    domain: 'cluster.local',
    features,
  });
  return { index, store };
}

const address = (index: AmbientIndex, name: string) => {
  const r = index.get(ADDRESS_TYPE_URL, name);
  return r ? (addressToJson(r.bytes) as Record<string, Record<string, unknown>>) : undefined;
};

describe('PILOT_ENABLE_IP_AUTOALLOCATE', () => {
  const entry = serviceEntry('api', 'default', {
    hosts: ['api.example.com'],
    resolution: 'DNS',
    ports: [{ number: 443, name: 'tls', protocol: 'TLS' }],
  });
  entry.object.status = { addresses: [{ host: 'api.example.com', value: '240.240.0.7' }] };

  test("on (istiod's default): the status address is the service's VIP", () => {
    const { index } = indexWith([entry]);
    expect(address(index, 'default/api.example.com')?.['service']?.['addresses']).toEqual([{ address: '240.240.0.7' }]);
    index.close();
  });

  test('off: an address left in status is not used (istiod neither assigns nor uses them)', () => {
    const { index } = indexWith([entry], { ipAutoallocate: false });
    expect(address(index, 'default/api.example.com')?.['service']).toBeDefined();
    expect(address(index, 'default/api.example.com')?.['service']?.['addresses']).toBeUndefined();
    index.close();
  });
});

describe('PILOT_ENABLE_SERVICEENTRY_SELECT_PODS', () => {
  const objects = [
    pod('web-1', { labels: { app: 'web' } }),
    serviceEntry('web-ext', 'default', {
      hosts: ['web.example.com'],
      resolution: 'STATIC',
      ports: [{ number: 80, name: 'http', protocol: 'HTTP', targetPort: 8080 }],
      workloadSelector: { labels: { app: 'web' } },
    }),
  ];
  const services = (f: Partial<AmbientFeatures>) => {
    const { index } = indexWith(objects, f);
    const w = address(index, 'Kubernetes//Pod/default/web-1')?.['workload'];
    index.close();
    return Object.keys((w?.['services'] as Record<string, unknown> | undefined) ?? {});
  };

  test('on: the pod lists the entry', () => expect(services({})).toEqual(['default/web.example.com']));
  test('off: only Kubernetes Services select pods', () =>
    expect(services({ serviceEntrySelectPods: false })).toEqual([]));
});

describe('PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES', () => {
  const objects = [
    workloadEntry('vm-1', 'default', { address: '10.1.0.1', labels: { app: 'web' } }),
    service('web', { selector: { app: 'web' } }),
  ];
  const services = (f: Partial<AmbientFeatures>) => {
    const { index } = indexWith(objects, f);
    const w = address(index, 'Kubernetes/networking.istio.io/WorkloadEntry/default/vm-1')?.['workload'];
    index.close();
    return Object.keys((w?.['services'] as Record<string, unknown> | undefined) ?? {});
  };

  test('on: the entry lists the Service', () =>
    expect(services({})).toEqual(['default/web.default.svc.cluster.local']));
  test('off: only ServiceEntries select WorkloadEntries', () =>
    expect(services({ k8sSelectWorkloadEntries: false })).toEqual([]));
});

describe('PILOT_AUTO_ALLOW_WAYPOINT_POLICY', () => {
  const waypointPod = (name: string, sa: string) =>
    pod(name, {
      ns: 'apps',
      ip: `10.0.9.${name.length}`,
      labels: { 'gateway.networking.k8s.io/gateway-name': 'wp' },
      spec: { serviceAccountName: sa },
    });
  const objects = [
    namespace('apps'),
    gateway('wp', 'apps', { labels: { 'istio.io/waypoint-for': 'all' } }),
    waypointPod('wp-a', 'waypoint'),
    waypointPod('wp-bb', 'waypoint'),
    pod('app-1', { ns: 'apps', ip: '10.0.1.1', labels: { app: 'app', 'istio.io/use-waypoint': 'wp' } }),
    pod('plain', { ns: 'apps', ip: '10.0.1.2', labels: { app: 'plain' } }),
  ];
  const policies = (index: AmbientIndex, name: string) =>
    address(index, `Kubernetes//Pod/apps/${name}`)?.['workload']?.['authorizationPolicies'];

  test('off (the default): no policy, nothing listed', () => {
    const { index } = indexWith(objects);
    expect([...index.all(AUTHORIZATION_TYPE_URL)]).toEqual([]);
    expect(policies(index, 'app-1')).toBeUndefined();
    index.close();
  });

  test("on: one ALLOW policy per waypoint from its pods' service accounts (one per pod), listed by the workloads behind it", () => {
    const { index, store } = indexWith(objects, { autoAllowWaypointPolicy: true });
    const r = index.get(AUTHORIZATION_TYPE_URL, 'apps/istio_allow_waypoint_apps_wp');
    expect(r && authorizationToJson(r.bytes)).toEqual({
      name: 'istio_allow_waypoint_apps_wp',
      namespace: 'apps',
      scope: 'WORKLOAD_SELECTOR',
      rules: [
        {
          clauses: [
            {
              matches: [
                {
                  principals: [
                    { exact: 'cluster.local/ns/apps/sa/waypoint' },
                    { exact: 'cluster.local/ns/apps/sa/waypoint' },
                  ],
                },
              ],
            },
          ],
        },
      ],
    });
    expect(policies(index, 'app-1')).toEqual(['apps/istio_allow_waypoint_apps_wp']);
    expect(policies(index, 'plain')).toBeUndefined();
    // The waypoint's own pods are not behind it.
    expect(policies(index, 'wp-a')).toBeUndefined();
    // Without pods there is no identity to allow: the policy and every reference to it go.
    store.remove('Pod', [waypointPod('wp-a', 'waypoint').object, waypointPod('wp-bb', 'waypoint').object]);
    expect(index.get(AUTHORIZATION_TYPE_URL, 'apps/istio_allow_waypoint_apps_wp')).toBeUndefined();
    expect(policies(index, 'app-1')).toBeUndefined();
    index.close();
  });
});
