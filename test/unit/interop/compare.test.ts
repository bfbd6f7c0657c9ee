// The comparers that let real peers judge istiod-ts: each must report a difference where one is,
// at the field where it is, and map the other side's shape without losing meaning.

import { diff } from '../../../interop/compare/diff';
import { compareWithGolden, type IstiodGolden } from '../../../interop/compare/goldens';
import type { KnownDifference } from '../../../interop/compare/known-differences';
import { addressFromGoProtoJson, authorizationFromGoProtoJson } from '../../../interop/compare/proto-json';
import { compareViews, fromXdsClientView, fromZtunnelDump } from '../../../interop/compare/ztunnel-view';

const b64 = (ip: string) => Buffer.from(ip.split('.').map(Number)).toString('base64');

describe('diff', () => {
  it('names the path of every differing field and nothing else', () => {
    expect(diff({ a: { b: [1, 2] }, 'x/y': 1 }, { a: { b: [1, 3] }, 'x/y': 1 })).toEqual([
      { path: 'a.b[1]', ours: 2, theirs: 3 },
    ]);
    expect(diff({ a: 1 }, {})).toEqual([{ path: 'a', ours: 1, theirs: undefined }]);
    expect(diff({ 'ns/host': 1 }, { 'ns/host': 2 })[0]!.path).toBe('["ns/host"]');
  });
});

describe("istiod's protojson in our shape", () => {
  it('camel-cases field names but not map keys, and shows IP bytes as text', () => {
    const ours = addressFromGoProtoJson({
      workload: {
        addresses: [b64('10.0.0.1')],
        tunnel_protocol: 'HBONE',
        services: { 'ns/a_b.svc': { ports: [{ service_port: 80, target_port: 8080 }] } },
        waypoint: { address: { network: 'n', address: b64('10.1.0.1') }, hbone_mtls_port: 15008 },
      },
    });
    expect(ours).toEqual({
      workload: {
        addresses: ['10.0.0.1'],
        tunnelProtocol: 'HBONE',
        services: { 'ns/a_b.svc': { ports: [{ servicePort: 80, targetPort: 8080 }] } },
        waypoint: { address: { network: 'n', address: '10.1.0.1' }, hboneMtlsPort: 15008 },
      },
    });
  });

  it("maps istiod's groups/rules names onto ztunnel's rules/clauses", () => {
    expect(
      authorizationFromGoProtoJson({
        name: 'p',
        groups: [{ rules: [{ matches: [{ destination_ports: [80] }] }] }],
      }),
    ).toEqual({ name: 'p', rules: [{ clauses: [{ matches: [{ destinationPorts: [80] }] }] }] });
  });

  it('refuses bytes that are not an IP address', () => {
    expect(() => addressFromGoProtoJson({ workload: { addresses: ['AAE='] } })).toThrow(/not an IP address/);
  });
});

describe('goldens comparison', () => {
  const golden = (port: number): IstiodGolden => ({
    istioCommit: '0'.repeat(40),
    cluster: 'Kubernetes',
    fixture: 'f',
    inputDigest: '',
    nodes: {
      n1: {
        address: [
          {
            name: 'w',
            resource: { workload: { uid: 'w', services: { 'ns/s': { ports: [{ service_port: port }] } } } },
          },
        ],
        authorization: [],
      },
    },
  });
  const ours = {
    address: new Map([['w', { workload: { uid: 'w', services: { 'ns/s': { ports: [{ servicePort: 80 }] } } } }]]),
    authorization: new Map<string, Record<string, unknown>>(),
  };

  it('is clean when both sides agree', () => {
    expect(compareWithGolden(golden(80), ours, [])).toEqual({ differences: [], unused: [] });
  });

  it('reports a differing field by node, type, resource and path', () => {
    const r = compareWithGolden(golden(81), ours, []);
    expect(r.differences).toEqual([
      {
        node: 'n1',
        type: 'address',
        resource: 'w',
        path: 'workload.services["ns/s"].ports[0].servicePort',
        ours: 80,
        theirs: 81,
      },
    ]);
  });

  it('marks a listed difference, and reports a listed one the fixture no longer shows', () => {
    const listed: KnownDifference = { compat: 'row', fixtures: ['f'], matches: (d) => d.path.endsWith('servicePort') };
    expect(compareWithGolden(golden(81), ours, [listed]).differences[0]!.known).toBe(listed);
    expect(compareWithGolden(golden(80), ours, [listed]).unused).toEqual([listed]);
  });
});

describe('ztunnel view', () => {
  const proto = {
    workloads: [
      {
        value: {
          uid: 'u1',
          name: 'p',
          namespace: 'ns',
          addresses: ['10.0.0.1'],
          services: { 'ns/s.ns.svc.cluster.local': { ports: [{ servicePort: 80, targetPort: 8080 }] } },
        },
      },
    ],
    services: [
      {
        value: {
          name: 's',
          namespace: 'ns',
          hostname: 's.ns.svc.cluster.local',
          addresses: [{ network: '', address: '10.96.0.1' }],
          ports: [{ servicePort: 80 }],
        },
      },
    ],
    policies: [
      {
        value: { name: 'a', namespace: 'ns', rules: [{ clauses: [{ matches: [{ principals: [{ exact: 'x' }] }] }] }] },
      },
    ],
  };
  // What ztunnel dumps for those messages: its defaults filled in, endpoints folded into the service.
  const dump = {
    workloads: [
      {
        uid: 'u1',
        name: 'p',
        namespace: 'ns',
        workloadIps: ['10.0.0.1'],
        protocol: 'TCP',
        networkMode: 'Standard',
        trustDomain: 'cluster.local',
        serviceAccount: 'default',
        workloadType: 'deployment',
        status: 'Healthy',
        clusterId: 'Kubernetes',
        services: ['ns/s.ns.svc.cluster.local'],
        capacity: 1,
      },
    ],
    services: [
      {
        name: 's',
        namespace: 'ns',
        hostname: 's.ns.svc.cluster.local',
        vips: ['/10.96.0.1'],
        ports: { '80': 0 },
        endpoints: { u1: { port: { '80': 8080 }, status: 'Healthy', workloadUid: 'u1' } },
        subjectAltNames: [],
        canonical: false,
        visibility: 'Public',
      },
    ],
    policies: [
      {
        name: 'a',
        namespace: 'ns',
        scope: 'Global',
        action: 'Allow',
        rules: [[[{ principals: [{ Exact: 'x' }] }]]],
        dryRun: false,
      },
    ],
  };

  it("maps our messages into ztunnel's dump shape exactly", () => {
    expect(compareViews(fromXdsClientView(proto), fromZtunnelDump(dump))).toEqual([]);
  });

  it("leaves an unhealthy workload out of its services' endpoints, as ztunnel does unless the policy is AllowAll", () => {
    const unhealthy = structuredClone(proto);
    (unhealthy.workloads[0]!.value as Record<string, unknown>)['status'] = 'UNHEALTHY';
    const view = fromXdsClientView(unhealthy);
    expect(view.services.get('ns/s.ns.svc.cluster.local')!['endpoints']).toEqual({});
    (unhealthy.services[0]!.value as Record<string, unknown>)['loadBalancing'] = { healthPolicy: 'ALLOW_ALL' };
    expect(Object.keys(fromXdsClientView(unhealthy).services.get('ns/s.ns.svc.cluster.local')!['endpoints']!)).toEqual([
      'u1',
    ]);
  });

  it("compares a workload's services as a set, as ztunnel keeps them in a map", () => {
    const two = structuredClone(proto) as { workloads: { value: { services: Record<string, unknown> } }[] };
    const value = two.workloads[0]!.value;
    value.services = { 'ns/z': {}, ...value.services };
    const dumped = structuredClone(dump);
    dumped.workloads[0]!.services = ['ns/s.ns.svc.cluster.local', 'ns/z'];
    expect(compareViews(fromXdsClientView(two), fromZtunnelDump(dumped))).toEqual([]);
  });

  it('reports what ztunnel holds otherwise', () => {
    const other = structuredClone(dump);
    other.services[0]!.endpoints.u1.port['80'] = 9090;
    other.workloads.pop();
    const d = compareViews(fromXdsClientView(proto), fromZtunnelDump(other));
    expect(d.map((x) => `${x.kind} ${x.key} ${x.path}`)).toEqual([
      'workload u1 ',
      'service ns/s.ns.svc.cluster.local endpoints.u1.port["80"]',
    ]);
  });
});
