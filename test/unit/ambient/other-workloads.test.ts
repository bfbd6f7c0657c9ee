import { endpointSliceWorkloads, serviceEntryWorkloads } from '../../../src/ambient/workload-sources';
import { workloadEntryWorkload } from '../../../src/ambient/workloads';
import { NetworkMode, WorkloadStatus, WorkloadType } from '../../../src/ambient/messages';
import { ipToText } from '../../../src/ambient/ip';
import {
  authz,
  endpointSlice,
  gateway,
  service,
  serviceEntry,
  viewOf,
  workloadEntry,
  Obj,
} from '../../support/ambient/fixtures';

describe('Workload from WorkloadEntry', () => {
  const we = (spec: Record<string, unknown>, meta = {}) =>
    workloadEntry('vm', 'default', { address: '172.16.0.5', serviceAccount: 'vm-sa', ...spec }, meta);
  const derive = (w: Obj, others: Obj[] = []) => workloadEntryWorkload(w.object, viewOf([w, ...others]));
  it('uid is <cluster>/networking.istio.io/WorkloadEntry/<ns>/<name>, always HEALTHY, workload_type POD', () => {
    const w = derive(we({}));
    expect(w.uid).toBe('Kubernetes/networking.istio.io/WorkloadEntry/default/vm');
    expect(w.status).toBeUndefined();
    expect(w.workloadType).toBe(WorkloadType.POD);
    expect(w.serviceAccount).toBe('vm-sa');
  });
  it('an IP address goes to addresses, anything else to hostname', () => {
    expect(derive(we({})).addresses!.map(ipToText)).toEqual(['172.16.0.5']);
    expect(derive(we({ address: 'vm.example.com' })).hostname).toBe('vm.example.com');
  });
  it('network is spec.network, else the local network', () => {
    expect(derive(we({ network: 'vpc' })).network).toBe('vpc');
  });
  it('capacity is spec.weight when positive; locality splits region/zone/subzone', () => {
    const w = derive(we({ weight: 3, locality: 'r/z/s' }));
    expect(w.capacity).toEqual({ value: 3 });
    expect(w.locality).toEqual({ region: 'r', zone: 'z', subzone: 's' });
    expect(derive(we({ weight: 0 })).capacity).toBeUndefined();
  });
  it('workload_name: autoRegistrationGroup annotation, then workload-name label, then the entry name', () => {
    expect(derive(we({}, { annotations: { 'istio.io/autoRegistrationGroup': 'grp' } })).workloadName).toBe('grp');
    expect(derive(we({ labels: { 'service.istio.io/workload-name': 'wn' } })).workloadName).toBe('wn');
    expect(derive(we({})).workloadName).toBe('vm');
  });
  it('labels are spec.labels overlaid by metadata.labels; a Service selecting them lists it', () => {
    const w = derive(we({ labels: { app: 'x' }, ports: { http: 9999 } }, { labels: { app: 'web' } }), [
      service('web', { ports: [{ name: 'http', port: 80, targetPort: 'http' }] }),
    ]);
    expect(w.services).toEqual({
      'default/web.default.svc.cluster.local': { ports: [{ servicePort: 80, targetPort: 9999 }] },
    });
  });
  it('a Service named targetPort missing from the entry ports omits that port', () => {
    const w = derive(we({ labels: { app: 'web' } }), [
      service('web', { ports: [{ name: 'http', port: 80, targetPort: 'http' }] }),
    ]);
    expect(w.services).toEqual({ 'default/web.default.svc.cluster.local': {} });
  });
  it('an entry port named like a numeric Service port overrides its number', () => {
    const w = derive(we({ labels: { app: 'web' }, ports: { http: 7777 } }), [service('web')]);
    expect(w.services!['default/web.default.svc.cluster.local']).toEqual({
      ports: [{ servicePort: 80, targetPort: 7777 }],
    });
  });
  it('a ServiceEntry with a workloadSelector lists it with the entry port of the same name', () => {
    const se = serviceEntry('ext', 'default', {
      hosts: ['ext.example.com'],
      ports: [{ number: 443, name: 'tls', targetPort: 8443 }],
      workloadSelector: { labels: { app: 'web' } },
    });
    expect(derive(we({ labels: { app: 'web' }, ports: { tls: 9443 } }), [se]).services).toEqual({
      'default/ext.example.com': { ports: [{ servicePort: 443, targetPort: 9443 }] },
    });
    expect(derive(we({ labels: { app: 'web' } }), [se]).services).toEqual({
      'default/ext.example.com': { ports: [{ servicePort: 443, targetPort: 8443 }] },
    });
  });
  it('selector policies attach by its labels', () => {
    expect(
      derive(we({ labels: { app: 'web' } }), [authz('p', 'default', { selector: { matchLabels: { app: 'web' } } })])
        .authorizationPolicies,
    ).toEqual(['default/p']);
  });
  it('labels merged from spec and metadata bind a workload waypoint', () => {
    const wp = gateway('waypoint', 'default', { labels: { 'istio.io/waypoint-for': 'all' } });
    expect(derive(we({ labels: { 'istio.io/use-waypoint': 'waypoint' } }), [wp]).waypoint).toBeDefined();
  });
  it('a WorkloadEntry that is a waypoint instance gets no waypoint, and the inbound binding as application_tunnel', () => {
    const wp = gateway('waypoint', 'default', {
      labels: { 'istio.io/waypoint-for': 'all' },
      annotations: { 'ambient.istio.io/waypoint-inbound-binding': 'PROXY' },
    });
    const w = derive(
      we({}, { labels: { 'istio.io/use-waypoint': 'waypoint', 'gateway.networking.k8s.io/gateway-name': 'waypoint' } }),
      [wp],
    );
    expect(w.waypoint).toBeUndefined();
    expect(w.applicationTunnel).toEqual({ protocol: 1 });
  });
});

describe('Workloads from ServiceEntry endpoints', () => {
  const se = (spec: Record<string, unknown>, labels?: Record<string, string>) =>
    serviceEntry(
      'ext',
      'default',
      { hosts: ['a.example.com', 'b.example.com'], ports: [{ number: 80, name: 'http' }], ...spec },
      labels ? { labels } : {},
    );
  const derive = (s: Obj, others: Obj[] = []) => serviceEntryWorkloads(s.object, viewOf([s, ...others]));
  it('one workload per endpoint, uid <cluster>/networking.istio.io/ServiceEntry/<ns>/<name>/<address>, listing every host', () => {
    const ws = derive(
      se({ endpoints: [{ address: '1.1.1.1', ports: { http: 8080 } }, { address: 'vm.example.com' }] }),
    );
    expect(ws.map((w) => w.uid)).toEqual([
      'Kubernetes/networking.istio.io/ServiceEntry/default/ext/1.1.1.1',
      'Kubernetes/networking.istio.io/ServiceEntry/default/ext/vm.example.com',
    ]);
    expect(ws[0]!.services).toEqual({
      'default/a.example.com': { ports: [{ servicePort: 80, targetPort: 8080 }] },
      'default/b.example.com': { ports: [{ servicePort: 80, targetPort: 8080 }] },
    });
    expect(ws[1]!.hostname).toBe('vm.example.com');
    expect(ws[0]!.workloadName).toBe('ext');
  });
  it('a DNS ServiceEntry without endpoints or selector has one workload per host, each listing only its host', () => {
    const ws = derive(se({ resolution: 'DNS' }));
    expect(ws.map((w) => [w.hostname, Object.keys(w.services!)])).toEqual([
      ['a.example.com', ['default/a.example.com']],
      ['b.example.com', ['default/b.example.com']],
    ]);
  });
  it('a STATIC ServiceEntry without endpoints has no workloads', () =>
    expect(derive(se({ resolution: 'STATIC' }))).toEqual([]));
  it('endpoints list only the hosts the entry won; an entry that won none has no workloads', () => {
    const kube = service('a', { ns: 'default' });
    const entry = serviceEntry('ext', 'default', {
      hosts: ['a.default.svc.cluster.local', 'b.example.com'],
      ports: [{ number: 80, name: 'http' }],
      endpoints: [{ address: '1.1.1.1' }],
    });
    expect(Object.keys(derive(entry, [kube])[0]!.services!)).toEqual(['default/b.example.com']);
    const lost = serviceEntry('ext', 'default', {
      hosts: ['a.default.svc.cluster.local'],
      endpoints: [{ address: '1.1.1.1' }],
    });
    expect(derive(lost, [kube])).toEqual([]);
  });
  it('quirk: an endpoint network carries over to the following endpoints without one', () => {
    const ws = derive(
      se({ endpoints: [{ address: '1.1.1.1' }, { address: '2.2.2.2', network: 'vpc' }, { address: '3.3.3.3' }] }),
    );
    expect(ws.map((w) => w.network)).toEqual([undefined, 'vpc', 'vpc']);
  });
  it('capacity comes from the endpoint weight', () => {
    expect(derive(se({ endpoints: [{ address: '1.1.1.1', weight: 4 }] }))[0]!.capacity).toEqual({ value: 4 });
  });
  it('policies (APs and PeerAuthentications) select by the ServiceEntry labels, not the endpoint labels', () => {
    const p = authz('p', 'default', { selector: { matchLabels: { app: 'se' } } });
    expect(
      derive(se({ endpoints: [{ address: '1.1.1.1', labels: { app: 'ep' } }] }, { app: 'se' }), [p])[0]!
        .authorizationPolicies,
    ).toEqual(['default/p']);
    expect(
      derive(se({ endpoints: [{ address: '1.1.1.1', labels: { app: 'se' } }] }, { app: 'ep' }), [p])[0]!
        .authorizationPolicies,
    ).toBeUndefined();
  });
});

describe('Workloads from EndpointSlices', () => {
  const svc = service('manual', { selector: {}, ports: [{ name: 'http', port: 80, targetPort: 8080 }] });
  const slice = (endpoints: unknown[], extra: Record<string, unknown> = {}) =>
    endpointSlice(
      'manual-abc',
      'default',
      { ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints, ...extra },
      { 'kubernetes.io/service-name': 'manual' },
    );
  const derive = (s: Obj, others: Obj[] = [svc]) => endpointSliceWorkloads(s.object, viewOf([s, ...others]));
  it('endpoints without a Pod targetRef become HOST_NETWORK workloads listing the Service', () => {
    const [w] = derive(
      slice([{ addresses: ['10.9.0.1'] }, { addresses: ['10.0.0.1'], targetRef: { kind: 'Pod', name: 'p' } }]),
    );
    expect(w!.uid).toBe('Kubernetes/discovery.k8s.io/EndpointSlice/default/manual-abc/10.9.0.1');
    expect(w!.networkMode).toBe(NetworkMode.HOST_NETWORK);
    expect(w!.services).toEqual({
      'default/manual.default.svc.cluster.local': { ports: [{ servicePort: 80, targetPort: 8080 }] },
    });
    expect(w!.serviceAccount).toBeUndefined();
  });
  it('ready false is UNHEALTHY; ready absent is HEALTHY', () => {
    expect(derive(slice([{ addresses: ['10.9.0.1'], conditions: { ready: false } }]))[0]!.status).toBe(
      WorkloadStatus.UNHEALTHY,
    );
    expect(derive(slice([{ addresses: ['10.9.0.1'] }]))[0]!.status).toBeUndefined();
  });
  it('slices without the service-name label, FQDN slices and slices of missing Services yield nothing', () => {
    expect(
      endpointSliceWorkloads(
        endpointSlice('x', 'default', { endpoints: [{ addresses: ['1.1.1.1'] }] }, {}).object,
        viewOf([svc]),
      ),
    ).toEqual([]);
    expect(derive(slice([{ addresses: ['a.example.com'] }], { addressType: 'FQDN' }))).toEqual([]);
    expect(derive(slice([{ addresses: ['10.9.0.1'] }]), [])).toEqual([]);
  });
  it('quirk: a slice port without protocol is skipped (istiod requires TCP to be set)', () => {
    const w = derive(slice([{ addresses: ['10.9.0.1'] }], { ports: [{ name: 'http', port: 8080 }] }))[0]!;
    expect(w.services).toEqual({ 'default/manual.default.svc.cluster.local': {} });
  });
});
