// One shape for what a ztunnel holds: upstream ztunnel's admin /config_dump (its own structs, as
// serde writes them) and `istiod-ts xds-client --output json` (the protobuf messages we sent) are
// both mapped into the dump's shape, following ztunnel's conversion from the protobuf messages
// (istio/ztunnel src/state/workload.rs, src/state/service.rs, src/rbac.rs): enum names, the
// defaults it fills in, endpoints folded from workloads into services. Then the two are compared
// field by field; a difference means ztunnel read our bytes otherwise than we meant them.

import { diff, type Difference } from './diff';

type Json = Record<string, unknown>;

export interface ZtunnelView {
  workloads: Map<string, Json>;
  services: Map<string, Json>;
  policies: Map<string, Json>;
}

const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** Sets key only when the value is not ztunnel's default (its skip_serializing_if = "is_default"). */
function setIfNotDefault(out: Json, key: string, value: unknown): void {
  if (value === undefined || value === '' || value === false || value === null) return;
  if (Array.isArray(value) && value.length === 0) return;
  if (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0) return;
  out[key] = value;
}

// --- the dump as ztunnel wrote it

export function fromZtunnelDump(dump: unknown): ZtunnelView {
  const d = obj(dump);
  const view: ZtunnelView = { workloads: new Map(), services: new Map(), policies: new Map() };
  for (const w of arr(d['workloads'])) {
    // A workload's services come from a protobuf map, a HashMap in ztunnel: their order means nothing.
    const services = obj(w)['services'];
    view.workloads.set(str(obj(w)['uid']), {
      ...obj(w),
      ...(Array.isArray(services) ? { services: services.map(str).sort() } : {}),
    });
  }
  for (const s of arr(d['services']))
    view.services.set(`${str(obj(s)['namespace'])}/${str(obj(s)['hostname'])}`, obj(s));
  for (const p of arr(d['policies'])) view.policies.set(`${str(obj(p)['namespace'])}/${str(obj(p)['name'])}`, obj(p));
  return view;
}

// --- our protobuf JSON, converted as ztunnel converts the messages

const TUNNEL = { HBONE: 'HBONE', NONE: 'TCP' } as Record<string, string>;
const NETWORK_MODE = { STANDARD: 'Standard', HOST_NETWORK: 'HostNetwork' } as Record<string, string>;
const STATUS = { HEALTHY: 'Healthy', UNHEALTHY: 'Unhealthy' } as Record<string, string>;
const LB_MODE = {
  UNSPECIFIED_MODE: 'Standard',
  STRICT: 'Strict',
  FAILOVER: 'Failover',
  PASSTHROUGH: 'Passthrough',
} as Record<string, string>;
const HEALTH_POLICY = { ONLY_HEALTHY: 'OnlyHealthy', ALLOW_ALL: 'AllowAll' } as Record<string, string>;
const SCOPE = {
  REGION: 'Region',
  ZONE: 'Zone',
  SUBZONE: 'Subzone',
  NODE: 'Node',
  CLUSTER: 'Cluster',
  NETWORK: 'Network',
} as Record<string, string>;
const IP_FAMILIES = { IPV4_ONLY: 'IPv4', IPV6_ONLY: 'IPv6', DUAL: 'Dual' } as Record<string, string>;
const VISIBILITY = { PUBLIC: 'Public', NAMESPACE: 'Namespace' } as Record<string, string>;
const AUTHZ_SCOPE = { GLOBAL: 'Global', NAMESPACE: 'Namespace', WORKLOAD_SELECTOR: 'WorkloadSelector' } as Record<
  string,
  string
>;
const AUTHZ_ACTION = { ALLOW: 'Allow', DENY: 'Deny' } as Record<string, string>;

/** An enum name through a table; a name the table lacks stays visible as itself. */
const named = (table: Record<string, string>, value: unknown, fallback: string): string =>
  table[str(value) || fallback] ?? `?${str(value)}`;

const networkAddress = (a: Json) => `${str(a['network'])}/${str(a['address'])}`;

function gatewayAddress(g: unknown): Json | undefined {
  if (!g) return undefined;
  const gw = obj(g);
  const hostname = gw['hostname'] ? obj(gw['hostname']) : undefined;
  const destination = hostname
    ? `${str(hostname['namespace'])}/${str(hostname['hostname'])}`
    : networkAddress(obj(gw['address']));
  return { destination, hboneMtlsPort: num(gw['hboneMtlsPort']) };
}

const portMap = (ports: unknown): Json =>
  Object.fromEntries(arr(ports).map((p) => [String(num(obj(p)['servicePort'])), num(obj(p)['targetPort'])]));

function workloadFromProto(w: Json): Json {
  const out: Json = { workloadIps: arr(w['addresses']) };
  setIfNotDefault(out, 'waypoint', gatewayAddress(w['waypoint']));
  setIfNotDefault(out, 'networkGateway', gatewayAddress(w['networkGateway']));
  out['protocol'] = named(TUNNEL, w['tunnelProtocol'], 'NONE');
  out['networkMode'] = named(NETWORK_MODE, w['networkMode'], 'STANDARD');
  setIfNotDefault(out, 'uid', w['uid']);
  out['name'] = str(w['name']);
  out['namespace'] = str(w['namespace']);
  out['trustDomain'] = str(w['trustDomain']) || 'cluster.local';
  out['serviceAccount'] = str(w['serviceAccount']) || 'default';
  setIfNotDefault(out, 'network', w['network']);
  setIfNotDefault(out, 'workloadName', w['workloadName']);
  out['workloadType'] = (str(w['workloadType']) || 'DEPLOYMENT').toLowerCase();
  setIfNotDefault(out, 'canonicalName', w['canonicalName']);
  setIfNotDefault(out, 'canonicalRevision', w['canonicalRevision']);
  setIfNotDefault(out, 'hostname', w['hostname']);
  setIfNotDefault(out, 'node', w['node']);
  setIfNotDefault(out, 'nativeTunnel', w['nativeTunnel']);
  if (w['applicationTunnel']) {
    const t = obj(w['applicationTunnel']);
    out['applicationTunnel'] = { protocol: str(t['protocol']) || 'NONE', port: num(t['port']) || null };
  }
  setIfNotDefault(out, 'authorizationPolicies', arr(w['authorizationPolicies']));
  out['status'] = named(STATUS, w['status'], 'HEALTHY');
  out['clusterId'] = str(w['clusterId']) || 'Kubernetes';
  if (w['locality']) {
    const l = obj(w['locality']);
    out['locality'] = { region: str(l['region']), zone: str(l['zone']), subzone: str(l['subzone']) };
  }
  setIfNotDefault(out, 'services', Object.keys(obj(w['services'])).sort());
  out['capacity'] = w['capacity'] === undefined ? 1 : num(w['capacity']);
  return out;
}

function serviceFromProto(s: Json): Json {
  const vips: string[] = [];
  const cidrVips: Json[] = [];
  for (const a of arr(s['addresses']).map(obj)) {
    const full = str(a['address']).includes(':') ? 128 : 32;
    const length = a['length'];
    if (typeof length === 'number' && length !== full)
      cidrVips.push({ cidr: `${str(a['address'])}/${length}`, network: str(a['network']) });
    else vips.push(networkAddress(a));
  }
  const out: Json = {
    name: str(s['name']),
    namespace: str(s['namespace']),
    hostname: str(s['hostname']),
    vips,
  };
  setIfNotDefault(out, 'cidrVips', cidrVips);
  out['ports'] = portMap(s['ports']);
  out['endpoints'] = {};
  out['subjectAltNames'] = arr(s['subjectAltNames']);
  setIfNotDefault(out, 'waypoint', gatewayAddress(s['waypoint']));
  setIfNotDefault(
    out,
    'weightedWaypoints',
    arr(s['weightedWaypoints']).map((w) => ({
      destination: gatewayAddress(obj(w)['destination']),
      weight: num(obj(w)['weight']),
    })),
  );
  if (s['loadBalancing']) {
    const lb = obj(s['loadBalancing']);
    out['loadBalancer'] = {
      routingPreferences: arr(lb['routingPreference']).map((r) => named(SCOPE, r, '')),
      mode: named(LB_MODE, lb['mode'], 'UNSPECIFIED_MODE'),
      healthPolicy: named(HEALTH_POLICY, lb['healthPolicy'], 'ONLY_HEALTHY'),
    };
  }
  const families = str(s['ipFamilies']);
  if (families && families !== 'AUTOMATIC') out['ipFamilies'] = named(IP_FAMILIES, families, '');
  out['canonical'] = s['canonical'] === true;
  out['visibility'] = named(VISIBILITY, s['visibility'], 'PUBLIC');
  return out;
}

function stringMatch(m: unknown): Json | undefined {
  const o = obj(m);
  if (typeof o['exact'] === 'string') return { Exact: o['exact'] };
  if (typeof o['prefix'] === 'string') return { Prefix: o['prefix'] };
  if (typeof o['suffix'] === 'string') return { Suffix: o['suffix'] };
  if (o['presence'] !== undefined) return { Presence: [] };
  return undefined;
}

const MATCH_STRING_FIELDS = ['namespaces', 'notNamespaces', 'principals', 'notPrincipals'];
const MATCH_IP_FIELDS = ['sourceIps', 'notSourceIps', 'destinationIps', 'notDestinationIps'];
const MATCH_SA_FIELDS = ['serviceAccounts', 'notServiceAccounts'];
const MATCH_PORT_FIELDS = ['destinationPorts', 'notDestinationPorts'];

function matchFromProto(m: Json): Json {
  const out: Json = {};
  for (const f of MATCH_STRING_FIELDS)
    setIfNotDefault(
      out,
      f,
      arr(m[f])
        .map(stringMatch)
        .filter((x) => x !== undefined),
    );
  for (const f of MATCH_SA_FIELDS)
    setIfNotDefault(
      out,
      f,
      arr(m[f]).map((s) => ({ namespace: str(obj(s)['namespace']), serviceAccount: str(obj(s)['serviceAccount']) })),
    );
  for (const f of MATCH_IP_FIELDS)
    setIfNotDefault(
      out,
      f,
      arr(m[f]).map((a) => `${str(obj(a)['address'])}/${num(obj(a)['length'])}`),
    );
  for (const f of MATCH_PORT_FIELDS) setIfNotDefault(out, f, arr(m[f]));
  return out;
}

function policyFromProto(p: Json): Json {
  return {
    name: str(p['name']),
    namespace: str(p['namespace']),
    scope: named(AUTHZ_SCOPE, p['scope'], 'GLOBAL'),
    action: named(AUTHZ_ACTION, p['action'], 'ALLOW'),
    rules: arr(p['rules']).map((r) =>
      arr(obj(r)['clauses']).map((c) => arr(obj(c)['matches']).map((m) => matchFromProto(obj(m)))),
    ),
    dryRun: p['dryRun'] === true,
  };
}

/** `xds-client --output json`'s MeshView: {workloads, services, policies: [{name, value}]}. */
export function fromXdsClientView(view: unknown): ZtunnelView {
  const v = obj(view);
  const out: ZtunnelView = { workloads: new Map(), services: new Map(), policies: new Map() };
  for (const d of arr(v['services'])) {
    const s = serviceFromProto(obj(obj(d)['value']));
    out.services.set(`${str(s['namespace'])}/${str(s['hostname'])}`, s);
  }
  for (const d of arr(v['workloads'])) {
    const proto = obj(obj(d)['value']);
    const w = workloadFromProto(proto);
    out.workloads.set(str(w['uid']), w);
    // ztunnel files each workload under the services it names, with that service's port map; an
    // unhealthy one only where the service's health policy is AllowAll (should_include_endpoint).
    for (const [key, list] of Object.entries(obj(proto['services']))) {
      const svc = out.services.get(key);
      if (!svc) continue;
      const allowAll = obj(svc['loadBalancer'])['healthPolicy'] === 'AllowAll';
      if (w['status'] !== 'Healthy' && !allowAll) continue;
      obj(svc['endpoints'])[str(w['uid'])] = {
        port: portMap(obj(list)['ports']),
        status: w['status'],
        workloadUid: w['uid'],
      };
    }
  }
  for (const d of arr(v['policies'])) {
    const p = policyFromProto(obj(obj(d)['value']));
    out.policies.set(`${str(p['namespace'])}/${str(p['name'])}`, p);
  }
  return out;
}

export interface ViewDifference extends Difference {
  kind: 'workload' | 'service' | 'policy';
  key: string;
}

export function compareViews(ours: ZtunnelView, theirs: ZtunnelView): ViewDifference[] {
  const out: ViewDifference[] = [];
  const kinds = [
    ['workload', 'workloads'],
    ['service', 'services'],
    ['policy', 'policies'],
  ] as const;
  for (const [kind, field] of kinds) {
    const a = ours[field];
    const b = theirs[field];
    for (const key of [...new Set([...a.keys(), ...b.keys()])].sort())
      for (const d of diff(a.get(key), b.get(key))) out.push({ ...d, kind, key });
  }
  return out;
}

export function renderViewDifference(d: ViewDifference): string {
  const show = (v: unknown) => (v === undefined ? '(absent)' : JSON.stringify(v));
  return `${d.kind} ${d.key} ${d.path || '(whole)'}: istiod-ts ${show(d.ours)}, ztunnel ${show(d.theirs)}`;
}
