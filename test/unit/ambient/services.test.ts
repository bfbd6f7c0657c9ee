import { kubeService, servicesOfHostname } from '../../../src/ambient/services';
import { AppProtocol, HealthPolicy, IPFamilies, LbMode, LbScope, Visibility } from '../../../src/ambient/messages';
import { ipToText } from '../../../src/ambient/ip';
import { gateway, namespace, service, serviceEntry, viewOf, Obj } from '../../support/ambient/fixtures';

const derive = (s: Obj, others: Obj[] = []) => kubeService(s.object, viewOf([s, ...others]));

describe('Service from a Kubernetes Service', () => {
  it('hostname is <name>.<ns>.svc.<domain>, addresses are the cluster IPs, canonical is true', () => {
    const s = derive(service('web'))!;
    expect(s.hostname).toBe('web.default.svc.cluster.local');
    expect(s.addresses!.map((a) => ipToText(a.address))).toEqual(['10.96.0.10']);
    expect(s.canonical).toBe(true);
  });
  it('ExternalName Services are not sent', () =>
    expect(derive(service('x', { spec: { type: 'ExternalName' } }))).toBeUndefined());
  it('a Service with an unparsable cluster IP is not sent', () => {
    expect(derive(service('x', { spec: { clusterIP: '10.0.0.999', clusterIPs: ['10.0.0.999'] } }))).toBeUndefined();
  });
  it('headless Services are sent with no addresses', () => {
    expect(derive(service('h', { spec: { clusterIP: 'None', clusterIPs: ['None'] } }))!.addresses).toBeUndefined();
  });
  it('external and load-balancer IPs are not addresses', () => {
    expect(derive(service('w', { spec: { externalIPs: ['1.2.3.4'] } }))!.addresses).toHaveLength(1);
  });
  it('a named targetPort is sent as 0 (resolved per workload)', () => {
    expect(derive(service('w', { ports: [{ name: 'http', port: 80, targetPort: 'http' }] }))!.ports).toEqual([
      { servicePort: 80, appProtocol: AppProtocol.HTTP11 },
    ]);
  });
  it.each([
    [{ name: 'http-web', port: 1 }, AppProtocol.HTTP11],
    [{ name: 'grpc', port: 1 }, AppProtocol.GRPC],
    [{ name: 'x', port: 1, appProtocol: 'http2' }, AppProtocol.HTTP2],
    [{ name: 'x', port: 1, appProtocol: 'kubernetes.io/h2c' }, AppProtocol.HTTP2],
    [{ name: 'https', port: 1 }, AppProtocol.TLS],
    [{ name: 'tcp-db', port: 1 }, AppProtocol.TCP],
    [{ name: 'mongo', port: 1 }, undefined],
    [{ name: 'http', port: 1, protocol: 'UDP' }, undefined],
  ])('port %p has app_protocol %p', (port, expected) => {
    expect(derive(service('w', { ports: [port] }))!.ports![0]!.appProtocol).toBe(expected);
  });
  it.each([
    [['IPv4', 'IPv6'], IPFamilies.DUAL],
    [['IPv6'], IPFamilies.IPV6_ONLY],
    [['IPv4'], IPFamilies.IPV4_ONLY],
    [[], undefined],
  ])('ipFamilies %p gives %p', (families, expected) => {
    expect(derive(service('w', { spec: { ipFamilies: families } }))!.ipFamilies).toBe(expected);
  });
});

describe('Service load_balancing', () => {
  it('internalTrafficPolicy Local is NODE STRICT', () => {
    expect(derive(service('w', { spec: { internalTrafficPolicy: 'Local' } }))!.loadBalancing).toEqual({
      routingPreference: [LbScope.NODE],
      mode: LbMode.STRICT,
    });
  });
  it('trafficDistribution PreferClose is NETWORK/REGION/ZONE FAILOVER', () => {
    expect(derive(service('w', { spec: { trafficDistribution: 'PreferClose' } }))!.loadBalancing).toEqual({
      routingPreference: [LbScope.NETWORK, LbScope.REGION, LbScope.ZONE],
      mode: LbMode.FAILOVER,
    });
  });
  it('the traffic-distribution annotation is case-insensitive and falls back to the namespace', () => {
    const lb = derive(service('w'), [
      namespace('default', {}, { 'networking.istio.io/traffic-distribution': 'prefersamenode' }),
    ])!.loadBalancing;
    expect(lb!.routingPreference).toHaveLength(5);
  });
  it('an unknown spec.trafficDistribution falls through to the annotation', () => {
    expect(
      derive(
        service('w', {
          spec: { trafficDistribution: 'Bogus' },
          annotations: { 'networking.istio.io/traffic-distribution': 'PreferSameNode' },
        }),
      )!.loadBalancing!.routingPreference,
    ).toHaveLength(5);
  });
  it('an unknown Service annotation means no preference, without looking at the namespace', () => {
    const lb = derive(service('w', { annotations: { 'networking.istio.io/traffic-distribution': 'Bogus' } }), [
      namespace('default', {}, { 'networking.istio.io/traffic-distribution': 'PreferClose' }),
    ])!.loadBalancing;
    expect(lb).toBeUndefined();
  });
  it('spec.trafficDistribution is case-sensitive (annotations are not)', () => {
    expect(derive(service('w', { spec: { trafficDistribution: 'preferclose' } }))!.loadBalancing).toBeUndefined();
  });
  it('publishNotReadyAddresses adds health_policy ALLOW_ALL', () => {
    expect(derive(service('w', { spec: { publishNotReadyAddresses: true } }))!.loadBalancing).toEqual({
      healthPolicy: HealthPolicy.ALLOW_ALL,
    });
  });
  it('no setting leaves load_balancing unset', () => expect(derive(service('w'))!.loadBalancing).toBeUndefined());
});

describe('Service waypoint', () => {
  const wp = gateway('waypoint', 'default');
  it('use-waypoint on the Service binds a service waypoint', () => {
    expect(
      derive(service('w', { labels: { 'istio.io/use-waypoint': 'waypoint' } }), [wp])!.waypoint!.hostname!.hostname,
    ).toBe('waypoint.default.svc.cluster.local');
  });
  it('a workload-only waypoint is not bound to services', () => {
    const wl = gateway('waypoint', 'default', { labels: { 'istio.io/waypoint-for': 'workload' } });
    expect(derive(service('w', { labels: { 'istio.io/use-waypoint': 'waypoint' } }), [wl])!.waypoint).toBeUndefined();
  });
  it("a waypoint's own Service (managed by the mesh controller) gets no waypoint", () => {
    const s = service('waypoint', { labels: { 'gateway.istio.io/managed': 'istio.io-mesh-controller' } });
    expect(derive(s, [wp, namespace('default', { 'istio.io/use-waypoint': 'waypoint' })])!.waypoint).toBeUndefined();
  });
  it('a canary waypoint adds weighted_waypoints [{primary, 100-w}, {canary, w}] and keeps the primary in waypoint', () => {
    const canary = gateway('canary', 'default');
    const s = service('w', {
      labels: { 'istio.io/use-waypoint': 'waypoint', 'istio.io/use-waypoint-canary': 'canary' },
      annotations: { 'istio.io/use-waypoint-canary-weight': '10' },
    });
    const out = derive(s, [wp, canary])!;
    expect(out.waypoint!.hostname!.hostname).toBe('waypoint.default.svc.cluster.local');
    expect(out.weightedWaypoints!.map((w) => [w.destination.hostname!.hostname, w.weight])).toEqual([
      ['waypoint.default.svc.cluster.local', 90],
      ['canary.default.svc.cluster.local', 10],
    ]);
  });
  it('the canary weight defaults to 0; a weight outside 0..100 or a missing canary gives no weighted waypoints', () => {
    const canary = gateway('canary', 'default');
    const labels = { 'istio.io/use-waypoint': 'waypoint', 'istio.io/use-waypoint-canary': 'canary' };
    expect(derive(service('w', { labels }), [wp, canary])!.weightedWaypoints!.map((w) => w.weight)).toEqual([
      100,
      undefined,
    ]);
    expect(
      derive(service('w', { labels, annotations: { 'istio.io/use-waypoint-canary-weight': '101' } }), [wp, canary])!
        .weightedWaypoints,
    ).toBeUndefined();
    expect(derive(service('w', { labels }), [wp])!.weightedWaypoints).toBeUndefined();
  });
  it('the namespace canary applies only to a service without its own use-waypoint', () => {
    const canary = gateway('canary', 'default');
    const ns = namespace(
      'default',
      { 'istio.io/use-waypoint': 'waypoint', 'istio.io/use-waypoint-canary': 'canary' },
      { 'istio.io/use-waypoint-canary-weight': '20' },
    );
    expect(derive(service('w'), [wp, canary, ns])!.weightedWaypoints!.map((w) => w.weight)).toEqual([80, 20]);
    expect(
      derive(service('w', { labels: { 'istio.io/use-waypoint': 'waypoint' } }), [wp, canary, ns])!.weightedWaypoints,
    ).toBeUndefined();
  });
  it('a canary equal to the primary is ignored', () => {
    expect(
      derive(
        service('w', { labels: { 'istio.io/use-waypoint': 'waypoint', 'istio.io/use-waypoint-canary': 'waypoint' } }),
        [wp],
      )!.weightedWaypoints,
    ).toBeUndefined();
  });
  it('a canary without a primary waypoint is ignored', () => {
    expect(
      derive(service('w', { labels: { 'istio.io/use-waypoint-canary': 'canary' } }), [gateway('canary', 'default')])!
        .weightedWaypoints,
    ).toBeUndefined();
  });
  it('ingress_use_waypoint comes from the label when a waypoint is bound', () => {
    const s = service('w', {
      labels: { 'istio.io/use-waypoint': 'waypoint', 'istio.io/ingress-use-waypoint': 'true' },
    });
    expect(derive(s, [wp])!.ingressUseWaypoint).toBe(true);
    expect(
      derive(service('x', { labels: { 'istio.io/ingress-use-waypoint': 'true' } }))!.ingressUseWaypoint,
    ).toBeUndefined();
  });
});

describe('Services from ServiceEntries and hostname collisions', () => {
  const se = (name: string, ns: string, spec: Record<string, unknown> = {}, created = '2024-01-01T00:00:00Z') =>
    serviceEntry(
      name,
      ns,
      {
        hosts: ['a.example.com', 'b.example.com'],
        ports: [{ number: 443, name: 'tls', protocol: 'TLS' }],
        resolution: 'DNS',
        ...spec,
      },
      { creationTimestamp: created },
    );
  it('one Service per host, with target_port defaulting to the port number', () => {
    const v = viewOf([se('e', 'default')]);
    const s = servicesOfHostname('b.example.com', v).get('default/b.example.com')!;
    expect(s).toMatchObject({
      name: 'e',
      namespace: 'default',
      hostname: 'b.example.com',
      ports: [{ servicePort: 443, targetPort: 443, appProtocol: AppProtocol.TLS }],
      canonical: true,
    });
  });
  it('addresses: an IP, and a CIDR masked with its length', () => {
    const s = servicesOfHostname(
      'a.example.com',
      viewOf([se('e', 'default', { addresses: ['240.0.0.1', '10.1.2.3/16'] })]),
    ).get('default/a.example.com')!;
    expect(s.addresses!.map((a) => [ipToText(a.address), a.length])).toEqual([
      ['240.0.0.1', undefined],
      ['10.1.0.0', 16],
    ]);
  });
  it('without spec addresses, auto-allocated status addresses of the host are used unless the entry opts out', () => {
    const status = {
      addresses: [
        { host: 'a.example.com', value: '240.240.0.1' },
        { host: 'b.example.com', value: '240.240.0.2' },
      ],
    };
    const auto = { ...se('e', 'default'), object: { ...se('e', 'default').object, status } };
    expect(
      servicesOfHostname('a.example.com', viewOf([auto]))
        .get('default/a.example.com')!
        .addresses!.map((a) => ipToText(a.address)),
    ).toEqual(['240.240.0.1']);
    const optOut = {
      ...auto,
      object: {
        ...auto.object,
        metadata: { ...auto.object.metadata, labels: { 'networking.istio.io/enable-autoallocate-ip': 'False' } },
      },
    };
    expect(
      servicesOfHostname('a.example.com', viewOf([optOut])).get('default/a.example.com')!.addresses,
    ).toBeUndefined();
  });
  it('resolution NONE gives PASSTHROUGH with ALLOW_ALL', () => {
    const s = servicesOfHostname('a.example.com', viewOf([se('e', 'default', { resolution: 'NONE' })])).get(
      'default/a.example.com',
    )!;
    expect(s.loadBalancing).toEqual({ mode: LbMode.PASSTHROUGH, healthPolicy: HealthPolicy.ALLOW_ALL });
  });
  it('in one namespace the oldest ServiceEntry wins the hostname', () => {
    const v = viewOf([
      se('young', 'default', {}, '2024-06-01T00:00:00Z'),
      se('old', 'default', {}, '2023-01-01T00:00:00Z'),
    ]);
    expect(servicesOfHostname('a.example.com', v).get('default/a.example.com')!.name).toBe('old');
  });
  it('a Kubernetes Service beats a ServiceEntry of its namespace and is the only canonical one', () => {
    const host = 'web.default.svc.cluster.local';
    const v = viewOf([
      service('web'),
      serviceEntry('e', 'default', { hosts: [host] }),
      serviceEntry('f', 'other', { hosts: [host] }),
    ]);
    const out = servicesOfHostname(host, v);
    expect(out.get(`default/${host}`)!.canonical).toBe(true);
    expect(out.get(`default/${host}`)!.ports![0]!.servicePort).toBe(80);
    expect(out.get(`other/${host}`)!.canonical).toBeUndefined();
  });
  const privateNs = {
    policies: [
      { visibility: 'NAMESPACE', matchingRules: [{ namespaceSelector: { matchLabels: { private: 'true' } } }] },
    ],
  };
  it('canonical goes to the oldest winner that is not namespace-private (meshConfig serviceEntryVisibility)', () => {
    const v = viewOf(
      [
        se('a', 'ns1', {}, '2020-01-01T00:00:00Z'),
        se('b', 'ns2', {}, '2021-01-01T00:00:00Z'),
        namespace('ns1', { private: 'true' }),
      ],
      { serviceEntryVisibility: privateNs },
    );
    const out = servicesOfHostname('a.example.com', v);
    expect(out.get('ns1/a.example.com')).toMatchObject({ visibility: Visibility.NAMESPACE });
    expect(out.get('ns1/a.example.com')!.canonical).toBeUndefined();
    expect(out.get('ns2/a.example.com')!.canonical).toBe(true);
  });
  it('serviceEntryVisibility NONE hides the ServiceEntry entirely', () => {
    const v = viewOf([se('a', 'ns1'), namespace('ns1', { hidden: 'true' })], {
      serviceEntryVisibility: {
        policies: [{ visibility: 'NONE', matchingRules: [{ namespaceSelector: { matchLabels: { hidden: 'true' } } }] }],
      },
    });
    expect(servicesOfHostname('a.example.com', v).size).toBe(0);
  });
  it('without serviceEntryVisibility every ServiceEntry is PUBLIC, whatever its exportTo', () => {
    const out = servicesOfHostname('a.example.com', viewOf([se('a', 'ns1', { exportTo: ['.'] })]));
    expect(out.get('ns1/a.example.com')!.visibility).toBeUndefined();
  });
  it('subject_alt_names come from spec.subjectAltNames', () => {
    const out = servicesOfHostname(
      'a.example.com',
      viewOf([se('a', 'ns1', { subjectAltNames: ['spiffe://td/ns/x/sa/y'] })]),
    );
    expect(out.get('ns1/a.example.com')!.subjectAltNames).toEqual(['spiffe://td/ns/x/sa/y']);
  });
  it('a namespace-private ServiceEntry does not bind a waypoint of another namespace', () => {
    const wp = gateway('wp', 'infra', {
      listeners: [{ port: 15008, protocol: 'HBONE', allowedRoutes: { namespaces: { from: 'All' } } }],
    });
    const entry = serviceEntry(
      'a',
      'ns1',
      { hosts: ['a.example.com'], resolution: 'DNS' },
      { labels: { 'istio.io/use-waypoint': 'wp', 'istio.io/use-waypoint-namespace': 'infra' } },
    );
    const pub = servicesOfHostname('a.example.com', viewOf([entry, wp, namespace('ns1')]));
    expect(pub.get('ns1/a.example.com')!.waypoint).toBeDefined();
    const priv = servicesOfHostname(
      'a.example.com',
      viewOf([entry, wp, namespace('ns1', { private: 'true' })], { serviceEntryVisibility: privateNs }),
    );
    expect(priv.get('ns1/a.example.com')!.waypoint).toBeUndefined();
  });
  it('an unparsable address drops every Service of the entry', () => {
    expect(servicesOfHostname('a.example.com', viewOf([se('a', 'ns1', { addresses: ['bogus'] })])).size).toBe(0);
  });
});
