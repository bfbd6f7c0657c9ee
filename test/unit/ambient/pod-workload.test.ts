import { podWorkload } from '../../../src/ambient/workloads';
import { NetworkMode, TunnelProtocol, WorkloadStatus, WorkloadType } from '../../../src/ambient/messages';
import { ipToText } from '../../../src/ambient/ip';
import { gateway, namespace, node, pod, service, viewOf, Obj, endpointSlice } from '../../support/ambient/fixtures';

const derive = (p: Obj, others: Obj[] = [], settings = {}) => podWorkload(p.object, viewOf([p, ...others], settings));

describe('Workload from Pod: inclusion', () => {
  it('uid is <cluster>//Pod/<ns>/<name> with a double slash', () => {
    expect(derive(pod('a'))!.uid).toBe('Kubernetes//Pod/default/a');
  });
  it.each(['Failed', 'Succeeded'])('pod in phase %s is not a workload', (phase) => {
    expect(derive(pod('a', { status: { phase } }))).toBeUndefined();
  });
  it('pod without an IP is not a workload', () => {
    expect(derive(pod('a', { status: { podIP: undefined } }))).toBeUndefined();
  });
  it('pod with an unparsable IP is not a workload', () => {
    expect(derive(pod('a', { ip: 'not-an-ip' }))).toBeUndefined();
  });
  it('pending pod with an IP is a workload', () => {
    expect(derive(pod('a', { status: { phase: 'Pending' } }))).toBeDefined();
  });
  it('addresses come from status.podIPs, falling back to podIP', () => {
    const w = derive(pod('a', { status: { podIPs: [{ ip: '10.0.0.5' }, { ip: 'fd00::5' }] } }))!;
    expect(w.addresses!.map(ipToText)).toEqual(['10.0.0.5', 'fd00::5']);
    expect(derive(pod('b', { ip: '10.0.0.6' }))!.addresses!.map(ipToText)).toEqual(['10.0.0.6']);
  });
  it('hostNetwork pod gets network_mode HOST_NETWORK', () => {
    expect(derive(pod('a', { spec: { hostNetwork: true } }))!.networkMode).toBe(NetworkMode.HOST_NETWORK);
    expect(derive(pod('b'))!.networkMode).toBeUndefined();
  });
});

describe('Workload from Pod: identity and status', () => {
  it('carries name, namespace, service account, node, cluster id and workload_type POD', () => {
    const w = derive(pod('a'))!;
    expect(w).toMatchObject({
      name: 'a',
      namespace: 'default',
      serviceAccount: 'sa',
      node: 'node1',
      clusterId: 'Kubernetes',
      workloadType: WorkloadType.POD,
    });
  });
  it('trust_domain is empty when it is cluster.local, else the mesh trust domain', () => {
    expect(derive(pod('a'))!.trustDomain).toBeUndefined();
    expect(derive(pod('a'), [], { trustDomain: 'example.org' })!.trustDomain).toBe('example.org');
  });
  it('network is the local network', () => {
    expect(derive(pod('a'), [], { network: 'net1' })!.network).toBe('net1');
  });
  it('ready pod is HEALTHY; not ready or deleting is UNHEALTHY', () => {
    expect(derive(pod('a'))!.status).toBeUndefined();
    expect(derive(pod('a', { status: { conditions: [{ type: 'Ready', status: 'False' }] } }))!.status).toBe(
      WorkloadStatus.UNHEALTHY,
    );
    expect(derive(pod('a', { meta: { deletionTimestamp: '2024-01-01T00:00:00Z' } }))!.status).toBe(
      WorkloadStatus.UNHEALTHY,
    );
  });
  it('locality comes from the node topology labels; unset when the node is unknown', () => {
    const n = node('node1', {
      'topology.kubernetes.io/region': 'r',
      'topology.kubernetes.io/zone': 'z',
      'topology.istio.io/subzone': 's',
    });
    expect(derive(pod('a'), [n])!.locality).toEqual({ region: 'r', zone: 'z', subzone: 's' });
    expect(derive(pod('a'))!.locality).toBeUndefined();
    expect(derive(pod('a'), [node('node1', { other: 'x' })])!.locality).toBeUndefined();
  });
});

describe('Workload from Pod: tunnel protocol', () => {
  it('pod without redirection annotation gets tunnel_protocol NONE', () => {
    expect(derive(pod('a', { labels: { 'istio.io/dataplane-mode': 'ambient' } }))!.tunnelProtocol).toBeUndefined();
  });
  it('redirection annotation enabled gives HBONE', () => {
    expect(derive(pod('a', { annotations: { 'ambient.istio.io/redirection': 'enabled' } }))!.tunnelProtocol).toBe(
      TunnelProtocol.HBONE,
    );
  });
  it('redirection annotation pending is not HBONE', () => {
    expect(
      derive(pod('a', { annotations: { 'ambient.istio.io/redirection': 'pending' } }))!.tunnelProtocol,
    ).toBeUndefined();
  });
  it('the tunnel label list is split on commas without trimming spaces', () => {
    expect(derive(pod('a', { labels: { 'networking.istio.io/tunnel': 'tcp, http' } }))!.tunnelProtocol).toBeUndefined();
  });
  it('tunnel label listing http gives HBONE with native_tunnel', () => {
    const w = derive(pod('a', { labels: { 'networking.istio.io/tunnel': 'tcp,http' } }))!;
    expect(w.tunnelProtocol).toBe(TunnelProtocol.HBONE);
    expect(w.nativeTunnel).toBe(true);
  });
});

describe('Workload from Pod: workload_name and canonical labels', () => {
  const owned = (kind: string, owner: string, labels: Record<string, string> = {}) =>
    pod('p-x', {
      labels,
      meta: {
        generateName: 'p-',
        ownerReferences: [{ apiVersion: 'v1', kind, name: owner, uid: 'u', controller: true }],
      },
    });
  it.each([
    [
      'ReplicaSet with pod-template-hash gives the Deployment name',
      owned('ReplicaSet', 'web-5d9f', { 'pod-template-hash': '5d9f' }),
      'web',
    ],
    [
      'ReplicaSet with rollouts-pod-template-hash gives the Rollout name',
      owned('ReplicaSet', 'ro-77', { 'rollouts-pod-template-hash': '77' }),
      'ro',
    ],
    [
      'ReplicationController with deploymentconfig label gives that label',
      owned('ReplicationController', 'rc-1', { deploymentconfig: 'dc' }),
      'dc',
    ],
    ['Job named <x>-<8 to 10 digits> gives the CronJob name', owned('Job', 'nightly-28123456'), 'nightly'],
    ['plain Job gives the Job name', owned('Job', 'once'), 'once'],
    ['StatefulSet gives the owner name', owned('StatefulSet', 'db'), 'db'],
    [
      'label service.istio.io/workload-name overrides everything',
      owned('StatefulSet', 'db', { 'service.istio.io/workload-name': 'named' }),
      'named',
    ],
    [
      'pod without generateName keeps its own name',
      pod('solo', {
        meta: { ownerReferences: [{ apiVersion: 'v1', kind: 'StatefulSet', name: 'db', uid: 'u', controller: true }] },
      }),
      'solo',
    ],
  ])('%s', (_rule, p, expected) => {
    expect(derive(p)!.workloadName).toBe(expected);
  });
  it('a present but empty canonical label still counts', () => {
    expect(
      derive(pod('a', { labels: { 'service.istio.io/canonical-name': '', app: 'x' } }))!.canonicalName,
    ).toBeUndefined();
  });
  it('canonical name and revision come from the first present label, else workload name and latest', () => {
    expect(derive(pod('a', { labels: { app: 'x', 'app.kubernetes.io/name': 'y', version: 'v1' } }))).toMatchObject({
      canonicalName: 'y',
      canonicalRevision: 'v1',
    });
    expect(derive(pod('a'))).toMatchObject({ canonicalName: 'a', canonicalRevision: 'latest' });
  });
});

describe('Workload from Pod: services map', () => {
  const p = pod('a', { labels: { app: 'web' } });
  it('key is <ns>/<hostname> of each selecting Service, with service and target ports', () => {
    expect(derive(p, [service('web')])!.services).toEqual({
      'default/web.default.svc.cluster.local': { ports: [{ servicePort: 80, targetPort: 8080 }] },
    });
  });
  it('a Service of another namespace never selects the pod', () => {
    expect(derive(p, [service('web', { ns: 'other' })])!.services).toBeUndefined();
  });
  it('a Service with an empty selector selects no pod', () => {
    expect(derive(p, [service('web', { selector: {} })])!.services).toBeUndefined();
  });
  it('named targetPort resolves to the container port of that name', () => {
    const w = derive(p, [service('web', { ports: [{ name: 'http', port: 80, targetPort: 'http' }] })])!;
    expect(w.services!['default/web.default.svc.cluster.local']).toEqual({
      ports: [{ servicePort: 80, targetPort: 8080 }],
    });
  });
  it('named targetPort missing on the pod omits that port', () => {
    const w = derive(p, [
      service('web', {
        ports: [
          { name: 'a', port: 80, targetPort: 'nope' },
          { name: 'b', port: 81, targetPort: 9090 },
        ],
      }),
    ])!;
    expect(w.services!['default/web.default.svc.cluster.local']).toEqual({
      ports: [{ servicePort: 81, targetPort: 9090 }],
    });
  });
  it('named targetPort on a restartPolicy Always init container resolves; on a plain init container it does not', () => {
    const sidecar = pod('a', {
      labels: { app: 'web' },
      spec: {
        initContainers: [
          { name: 'i', restartPolicy: 'Always', ports: [{ name: 'side', containerPort: 7000 }] },
          { name: 'j', ports: [{ name: 'plain', containerPort: 7001 }] },
        ],
      },
    });
    const w = derive(sidecar, [
      service('web', {
        ports: [
          { port: 70, targetPort: 'side' },
          { port: 71, targetPort: 'plain' },
        ],
      }),
    ])!;
    expect(w.services!['default/web.default.svc.cluster.local']).toEqual({
      ports: [{ servicePort: 70, targetPort: 7000 }],
    });
  });
  it('ExternalName Services are not listed', () => {
    expect(derive(p, [service('web', { spec: { type: 'ExternalName' } })])!.services).toBeUndefined();
  });
  const sliceFor = (ref: Record<string, string>) =>
    endpointSlice(
      'manual-1',
      'default',
      { endpoints: [{ addresses: ['10.0.0.1'], targetRef: { kind: 'Pod', ...ref } }] },
      { 'kubernetes.io/service-name': 'manual' },
    );
  const owned = pod('a', { labels: { app: 'web' }, meta: { uid: 'u1' } });
  it('selector-less Service is listed through an EndpointSlice endpoint naming the pod by namespace, name and uid', () => {
    const svc = service('manual', { selector: {} });
    expect(
      Object.keys(derive(owned, [svc, sliceFor({ name: 'a', namespace: 'default', uid: 'u1' })])!.services!),
    ).toEqual(['default/manual.default.svc.cluster.local']);
  });
  it('an EndpointSlice endpoint with another uid or no namespace does not name the pod', () => {
    const svc = service('manual', { selector: {} });
    expect(derive(owned, [svc, sliceFor({ name: 'a', namespace: 'default', uid: 'other' })])!.services).toBeUndefined();
    expect(derive(owned, [svc, sliceFor({ name: 'a', uid: 'u1' })])!.services).toBeUndefined();
  });
  it('a Service whose selector does not match is still listed when its EndpointSlice names the pod', () => {
    const svc = service('manual', { selector: { app: 'elsewhere' } });
    expect(
      Object.keys(derive(owned, [svc, sliceFor({ name: 'a', namespace: 'default', uid: 'u1' })])!.services!),
    ).toEqual(['default/manual.default.svc.cluster.local']);
  });
});

describe('Workload from Pod: waypoint', () => {
  const wp = gateway('waypoint', 'default', { labels: { 'istio.io/waypoint-for': 'workload' } });
  const wpAddress = {
    hostname: { namespace: 'default', hostname: 'waypoint.default.svc.cluster.local' },
    hboneMtlsPort: 15008,
  };
  it('use-waypoint on the pod binds a workload waypoint as a hostname GatewayAddress on port 15008', () => {
    expect(derive(pod('a', { labels: { 'istio.io/use-waypoint': 'waypoint' } }), [wp])!.waypoint).toEqual(wpAddress);
  });
  it('use-waypoint on the namespace binds its pods', () => {
    expect(derive(pod('a'), [wp, namespace('default', { 'istio.io/use-waypoint': 'waypoint' })])!.waypoint).toEqual(
      wpAddress,
    );
  });
  it('use-waypoint none on the pod opts out of the namespace waypoint', () => {
    expect(
      derive(pod('a', { labels: { 'istio.io/use-waypoint': 'none' } }), [
        wp,
        namespace('default', { 'istio.io/use-waypoint': 'waypoint' }),
      ])!.waypoint,
    ).toBeUndefined();
  });
  it('a service-only waypoint (the default traffic type) is not bound to workloads', () => {
    expect(
      derive(pod('a', { labels: { 'istio.io/use-waypoint': 'w2' } }), [gateway('w2', 'default')])!.waypoint,
    ).toBeUndefined();
  });
  it('use-waypoint present but empty binds nothing and does not fall back to the namespace', () => {
    expect(
      derive(pod('a', { labels: { 'istio.io/use-waypoint': '' } }), [
        wp,
        namespace('default', { 'istio.io/use-waypoint': 'waypoint' }),
      ])!.waypoint,
    ).toBeUndefined();
  });
  it('a waypoint named on the pod but missing binds nothing, with no namespace fallback', () => {
    expect(
      derive(pod('a', { labels: { 'istio.io/use-waypoint': 'missing' } }), [
        wp,
        namespace('default', { 'istio.io/use-waypoint': 'waypoint' }),
      ])!.waypoint,
    ).toBeUndefined();
  });
  it('a namespace binding needs the Namespace object', () => {
    expect(derive(pod('a'), [wp])!.waypoint).toBeUndefined();
  });
  it('an unknown waypoint-for value binds nothing (it is not replaced by the default)', () => {
    const odd = gateway('waypoint', 'default', { labels: { 'istio.io/waypoint-for': 'bogus' } });
    expect(derive(pod('a', { labels: { 'istio.io/use-waypoint': 'waypoint' } }), [odd])!.waypoint).toBeUndefined();
  });
  it('a status address without a type is ignored, yet the Gateway is a waypoint (bound, with no address)', () => {
    const untyped = gateway('waypoint', 'default', {
      labels: { 'istio.io/waypoint-for': 'all' },
      addresses: [{ value: '10.1.1.1' }],
    });
    const inst = pod('wp-1', { labels: { 'gateway.networking.k8s.io/gateway-name': 'waypoint' } });
    expect(derive(pod('a', { labels: { 'istio.io/use-waypoint': 'waypoint' } }), [untyped])!.waypoint).toBeUndefined();
    expect(
      derive(inst, [
        gateway('waypoint', 'default', {
          addresses: [{ value: '10.1.1.1' }],
          annotations: { 'ambient.istio.io/waypoint-inbound-binding': 'NONE' },
        }),
      ])!.applicationTunnel,
    ).toEqual({});
  });
  it('allowedRoutes from Selector admits namespaces matching the selector; without a selector, none', () => {
    const sel = (selector?: Record<string, unknown>) =>
      gateway('wp', 'infra', {
        labels: { 'istio.io/waypoint-for': 'all' },
        listeners: [
          {
            port: 15008,
            protocol: 'HBONE',
            allowedRoutes: { namespaces: { from: 'Selector', ...(selector ? { selector } : {}) } },
          },
        ],
      });
    const labels = { 'istio.io/use-waypoint': 'wp', 'istio.io/use-waypoint-namespace': 'infra' };
    const ns = namespace('default', { team: 'a' });
    expect(derive(pod('a', { labels }), [sel({ matchLabels: { team: 'a' } }), ns])!.waypoint).toBeDefined();
    expect(derive(pod('a', { labels }), [sel({ matchLabels: { team: 'b' } }), ns])!.waypoint).toBeUndefined();
    expect(derive(pod('a', { labels }), [sel(), ns])!.waypoint).toBeUndefined();
  });
  it('an inbound binding with a port uses that listener for attachment', () => {
    const gw = gateway('wp', 'infra', {
      labels: { 'istio.io/waypoint-for': 'all' },
      annotations: { 'ambient.istio.io/waypoint-inbound-binding': 'PROXY/15088' },
      listeners: [
        { port: 15008, protocol: 'HBONE' },
        { port: 15088, protocol: 'istio.io/PROXY', allowedRoutes: { namespaces: { from: 'All' } } },
      ],
    });
    expect(
      derive(pod('a', { labels: { 'istio.io/use-waypoint': 'wp', 'istio.io/use-waypoint-namespace': 'infra' } }), [gw])!
        .waypoint,
    ).toBeDefined();
  });
  it('quirk: an inbound binding with an unparsable port keeps the protocol with port 0', () => {
    const inst = pod('wp-1', { labels: { 'gateway.networking.k8s.io/gateway-name': 'waypoint' } });
    expect(
      derive(inst, [
        gateway('waypoint', 'default', { annotations: { 'ambient.istio.io/waypoint-inbound-binding': 'PROXY/abc' } }),
      ])!.applicationTunnel,
    ).toEqual({ protocol: 1 });
  });
  it('a Gateway without status addresses is not a waypoint', () => {
    expect(
      derive(pod('a', { labels: { 'istio.io/use-waypoint': 'waypoint' } }), [
        gateway('waypoint', 'default', { labels: { 'istio.io/waypoint-for': 'all' }, addresses: [] }),
      ])!.waypoint,
    ).toBeUndefined();
  });
  it('use-waypoint-namespace points at another namespace, allowed only when the listener allows All', () => {
    const other = gateway('wp', 'infra', { labels: { 'istio.io/waypoint-for': 'all' } });
    const labels = { 'istio.io/use-waypoint': 'wp', 'istio.io/use-waypoint-namespace': 'infra' };
    expect(derive(pod('a', { labels }), [other])!.waypoint).toBeUndefined();
    const open = gateway('wp', 'infra', {
      labels: { 'istio.io/waypoint-for': 'all' },
      listeners: [{ port: 15008, protocol: 'HBONE', allowedRoutes: { namespaces: { from: 'All' } } }],
    });
    expect(derive(pod('a', { labels }), [open])!.waypoint).toEqual({
      hostname: { namespace: 'infra', hostname: 'wp.infra.svc.cluster.local' },
      hboneMtlsPort: 15008,
    });
  });
  it('an IP-only waypoint gives an address GatewayAddress on the local network', () => {
    const ipWp = gateway('waypoint', 'default', {
      labels: { 'istio.io/waypoint-for': 'all' },
      addresses: [{ type: 'IPAddress', value: '10.1.1.1' }],
    });
    const w = derive(pod('a', { labels: { 'istio.io/use-waypoint': 'waypoint' } }), [ipWp], { network: 'n1' })!;
    expect(ipToText(w.waypoint!.address!.address)).toBe('10.1.1.1');
    expect(w.waypoint!.address!.network).toBe('n1');
  });
  it('a waypoint instance pod gets no waypoint, and application_tunnel only from the inbound-binding annotation', () => {
    const inst = pod('wp-1', {
      labels: { 'gateway.networking.k8s.io/gateway-name': 'waypoint', 'istio.io/use-waypoint': 'waypoint' },
    });
    expect(derive(inst, [wp])!.waypoint).toBeUndefined();
    expect(derive(inst, [wp])!.applicationTunnel).toBeUndefined();
    const bound = gateway('waypoint', 'default', {
      annotations: { 'ambient.istio.io/waypoint-inbound-binding': 'PROXY/15088' },
    });
    expect(derive(inst, [bound])!.applicationTunnel).toEqual({ protocol: 1, port: 15088 });
  });
});
