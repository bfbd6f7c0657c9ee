// istiod decodes every spec into its protobuf message before validating it, and the decoder
// refuses an enum name the enum does not have, in every enum field of every kind.
import {
  checkEnumFields,
  ENUM_FIELD_MESSAGES,
  FieldShape,
  KIND_MESSAGES,
} from '../../../src/webhook/validators/common/enum-fields';
import { EnumType } from '../../../src/webhook/validators/common/enum-types';
import { Report } from '../../../src/webhook/validators/common/report';
import { allSchemas, validateConfig } from '../../../src/webhook/validators/registry';

const API: Record<string, string> = {
  AuthorizationPolicy: 'security.istio.io/v1',
  PeerAuthentication: 'security.istio.io/v1',
  RequestAuthentication: 'security.istio.io/v1',
  Telemetry: 'telemetry.istio.io/v1',
  WasmPlugin: 'extensions.istio.io/v1alpha1',
  TrafficExtension: 'extensions.istio.io/v1alpha1',
  EnvoyFilter: 'networking.istio.io/v1alpha3',
  ProxyConfig: 'networking.istio.io/v1beta1',
};
const object = (kind: string, spec: unknown) => ({
  apiVersion: API[kind] ?? 'networking.istio.io/v1',
  kind,
  metadata: { name: 'x', namespace: 'default' },
  spec,
});
function errors(kind: string, spec: unknown): string[] {
  const v = validateConfig(object(kind, spec));
  if (v.outcome !== 'validated') throw new Error(v.message);
  return v.result.errors.map((e) => `${e.path}: ${e.message}`);
}

describe('an unknown enum name is refused, with the enum full name, as istiod decodes it', () => {
  it.each([
    [
      'DestinationRule',
      { host: 'a', trafficPolicy: { loadBalancer: { simple: 'FASTEST' } } },
      'spec.trafficPolicy.loadBalancer.simple: unknown value "FASTEST" for enum istio.networking.v1alpha3.LoadBalancerSettings.SimpleLB',
    ],
    [
      'DestinationRule',
      {
        host: 'a',
        subsets: [
          { name: 's', trafficPolicy: { portLevelSettings: [{ port: { number: 80 }, tls: { mode: 'STRICT' } }] } },
        ],
      },
      'spec.subsets[0].trafficPolicy.portLevelSettings[0].tls.mode: unknown value "STRICT" for enum istio.networking.v1alpha3.ClientTLSSettings.TLSmode',
    ],
    [
      'DestinationRule',
      { host: 'a', trafficPolicy: { proxyProtocol: { version: 'V3' } } },
      'spec.trafficPolicy.proxyProtocol.version: unknown value "V3" for enum istio.networking.v1alpha3.TrafficPolicy.ProxyProtocol.VERSION',
    ],
    [
      'VirtualService',
      { hosts: ['a'], http: [{ redirect: { uri: '/', derivePort: 'FROM_HEADER' } }] },
      'spec.http[0].redirect.derivePort: unknown value "FROM_HEADER" for enum istio.networking.v1alpha3.HTTPRedirect.RedirectPortSelection',
    ],
    [
      'VirtualService',
      {
        hosts: ['a'],
        http: [{ route: [{ destination: { host: 'a' } }], corsPolicy: { unmatchedPreflights: 'DROP' } }],
      },
      'spec.http[0].corsPolicy.unmatchedPreflights: unknown value "DROP" for enum istio.networking.v1alpha3.CorsPolicy.UnmatchedPreflights',
    ],
    [
      'Gateway',
      {
        servers: [
          {
            port: { number: 443, name: 'https', protocol: 'HTTPS' },
            hosts: ['*'],
            tls: { mode: 'SIMPLE', minProtocolVersion: 'TLSV1_4' },
          },
        ],
      },
      'spec.servers[0].tls.minProtocolVersion: unknown value "TLSV1_4" for enum istio.networking.v1alpha3.ServerTLSSettings.TLSProtocol',
    ],
    [
      'ServiceEntry',
      { hosts: ['a.example.com'], location: 'OUTSIDE' },
      'spec.location: unknown value "OUTSIDE" for enum istio.networking.v1alpha3.ServiceEntry.Location',
    ],
    [
      'Sidecar',
      { egress: [{ hosts: ['*/*'], captureMode: 'EBPF' }] },
      'spec.egress[0].captureMode: unknown value "EBPF" for enum istio.networking.v1alpha3.CaptureMode',
    ],
    [
      'Sidecar',
      { outboundTrafficPolicy: { mode: 'ALLOW_ANY_DYNAMIC_DNS' } },
      'spec.outboundTrafficPolicy.mode: unknown value "ALLOW_ANY_DYNAMIC_DNS" for enum istio.networking.v1alpha3.OutboundTrafficPolicy.Mode',
    ],
    [
      'EnvoyFilter',
      {
        configPatches: [
          {
            applyTo: 'HTTP_ROUTE',
            match: { routeConfiguration: { vhost: { route: { action: 'FORWARD' } } } },
            patch: { operation: 'MERGE', value: {} },
          },
        ],
      },
      'spec.configPatches[0].match.routeConfiguration.vhost.route.action: unknown value "FORWARD" for enum istio.networking.v1alpha3.EnvoyFilter.RouteConfigurationMatch.RouteMatch.Action',
    ],
    [
      'EnvoyFilter',
      { configPatches: [{ applyTo: 'HTTP_FILTER', patch: { operation: 'ADD', filterClass: 'LOGGING', value: {} } }] },
      'spec.configPatches[0].patch.filterClass: unknown value "LOGGING" for enum istio.networking.v1alpha3.EnvoyFilter.Patch.FilterClass',
    ],
    [
      'PeerAuthentication',
      { selector: { matchLabels: { a: 'b' } }, portLevelMtls: { '80': { mode: 'strict' } } },
      'spec.portLevelMtls["80"].mode: unknown value "strict" for enum istio.security.v1beta1.PeerAuthentication.MutualTLS.Mode',
    ],
    [
      'AuthorizationPolicy',
      { action: 'PERMIT' },
      'spec.action: unknown value "PERMIT" for enum istio.security.v1beta1.AuthorizationPolicy.Action',
    ],
    [
      'Telemetry',
      { metrics: [{ overrides: [{ match: { metric: 'REQUEST_BYTES' } }] }] },
      'spec.metrics[0].overrides[0].match.metric: unknown value "REQUEST_BYTES" for enum istio.telemetry.v1alpha1.MetricSelector.IstioMetric',
    ],
    [
      'Telemetry',
      { accessLogging: [{ match: { mode: 'BOTH' } }] },
      'spec.accessLogging[0].match.mode: unknown value "BOTH" for enum istio.telemetry.v1alpha1.WorkloadMode',
    ],
    [
      'WasmPlugin',
      { url: 'oci://x', imagePullPolicy: 'Never' },
      'spec.imagePullPolicy: unknown value "Never" for enum istio.extensions.v1alpha1.PullPolicy',
    ],
    [
      'WasmPlugin',
      { url: 'oci://x', match: [{ mode: 'BOTH' }] },
      'spec.match[0].mode: unknown value "BOTH" for enum istio.type.v1beta1.WorkloadMode',
    ],
    [
      'TrafficExtension',
      { phase: 'ROUTING' },
      'spec.phase: unknown value "ROUTING" for enum istio.extensions.v1alpha1.TrafficExtension.ExecutionPhase',
    ],
  ])('%s %j', (kind, spec, expected) => {
    expect(errors(kind, spec)).toEqual([expected]);
  });

  it('names are case-sensitive', () => {
    expect(
      errors('DestinationRule', { host: 'a', trafficPolicy: { loadBalancer: { simple: 'round_robin' } } })[0],
    ).toContain('unknown value "round_robin"');
  });
  it('a field written by its proto name is checked too', () => {
    expect(errors('DestinationRule', { host: 'a', traffic_policy: { load_balancer: { simple: 'FASTEST' } } })).toEqual([
      'spec.traffic_policy.load_balancer.simple: unknown value "FASTEST" for enum istio.networking.v1alpha3.LoadBalancerSettings.SimpleLB',
    ]);
  });
  it("a Sidecar mode 3 (MeshConfig's ALLOW_ANY_DYNAMIC_DNS) decodes, and validation refuses it as istiod does", () => {
    expect(errors('Sidecar', { outboundTrafficPolicy: { mode: 3 } })).toEqual([
      'spec.outboundTrafficPolicy.mode: sidecar: ALLOW_ANY_DYNAMIC_DNS mode is only supported in MeshConfig, not in Sidecar resource',
    ]);
  });
  it('an enum written as a list or an object is refused while decoding', () => {
    expect(errors('AuthorizationPolicy', { action: ['DENY'] })).toEqual([
      'spec.action: invalid value a list for enum istio.security.v1beta1.AuthorizationPolicy.Action',
    ]);
  });
  it('the decoder error comes before validation, and is marked as a decoding error', () => {
    const v = validateConfig(object('DestinationRule', { trafficPolicy: { loadBalancer: { simple: 'FASTEST' } } }));
    expect(v.outcome === 'validated' && v.decodeError).toBe(true);
    expect(v.outcome === 'validated' && v.result.errors).toHaveLength(1);
  });
});

describe('enum values by name or by number are accepted, as protojson decodes them', () => {
  it.each([
    ['DestinationRule', { host: 'a', trafficPolicy: { loadBalancer: { simple: 'LEAST_REQUEST' } } }],
    ['DestinationRule', { host: 'a', trafficPolicy: { loadBalancer: { simple: 4 } } }],
    [
      'ServiceEntry',
      {
        hosts: ['a.example.com'],
        location: 1,
        resolution: 'DNS',
        ports: [{ number: 80, name: 'http', protocol: 'HTTP' }],
      },
    ],
    ['WasmPlugin', { url: 'oci://x', imagePullPolicy: 'IfNotPresent', match: [{ mode: 'CLIENT' }] }],
    [
      'EnvoyFilter',
      { configPatches: [{ applyTo: 'CLUSTER', patch: { operation: 'MERGE_AND_REPLACE_LIST', value: {} } }] },
    ],
  ])('%s %j', (kind, spec) => {
    expect(errors(kind, spec)).toEqual([]);
  });
});

describe('enum numbers decode as protobuf int32 values', () => {
  const check = (simple: unknown) => {
    const r = new Report();
    checkEnumFields(r, 'DestinationRule', { trafficPolicy: { loadBalancer: { simple } } });
    return r.result().errors.map((e) => e.message);
  };
  it('any int32, named or not, decodes (proto3 enums are open)', () => {
    expect(check(99)).toEqual([]);
    expect(check(-1)).toEqual([]);
  });
  it.each([2147483648, 1.5, '4'])('%j does not', (v) => {
    expect(check(v)[0]).toMatch(/ for enum istio\.networking\.v1alpha3\.LoadBalancerSettings\.SimpleLB$/);
  });
});

/** Every path from a kind's spec to an enum field, and a spec that sets it to `value`. */
function enumPaths(kind: string): { path: string; type: EnumType; spec: (value: unknown) => unknown }[] {
  const out: { path: string; type: EnumType; spec: (value: unknown) => unknown }[] = [];
  const walk = (message: string, path: string, wrap: (inner: unknown) => unknown): void => {
    for (const [name, shape] of Object.entries(ENUM_FIELD_MESSAGES[message]!)) {
      const [type, p, w] = step(shape, `${path}.${name}`, (inner) => wrap({ [name]: inner }));
      if (typeof type === 'string') walk(type, p, w);
      else out.push({ path: p, type, spec: w });
    }
  };
  walk(KIND_MESSAGES[kind]!, 'spec', (inner) => inner);
  return out;
}
function step(
  shape: FieldShape,
  path: string,
  wrap: (inner: unknown) => unknown,
): [EnumType | string, string, (inner: unknown) => unknown] {
  if (typeof shape === 'object' && 'list' in shape) return [shape.list, `${path}[0]`, (inner) => wrap([inner])];
  if (typeof shape === 'object' && 'map' in shape) return [shape.map, `${path}["k"]`, (inner) => wrap({ k: inner })];
  return [shape, path, wrap];
}

describe('every enum field of every validated kind', () => {
  const kinds = allSchemas()
    .filter((s) => s.group.endsWith('.istio.io'))
    .map((s) => s.kind);
  it('every Istio kind the webhook validates has a message, and every message it names exists', () => {
    expect(kinds.filter((k) => KIND_MESSAGES[k] === undefined)).toEqual([]);
    const named = Object.values(ENUM_FIELD_MESSAGES).flatMap((fields) =>
      Object.values(fields).map((s) => step(s, '', (x) => x)[0]),
    );
    expect(named.filter((t) => typeof t === 'string' && ENUM_FIELD_MESSAGES[t] === undefined)).toEqual([]);
  });
  const cases = kinds.flatMap((kind) => enumPaths(kind).map((c) => [kind, c.path, c] as const));
  it('covers the enum fields of istio/api (54 paths)', () => expect(cases).toHaveLength(54));
  it.each(cases)('%s %s: an unknown name is refused, every known name and number is accepted', (kind, path, c) => {
    const check = (value: unknown) => {
      const r = new Report();
      checkEnumFields(r, kind, c.spec(value) as Record<string, unknown>);
      return r.result().errors.map((e) => `${e.path}: ${e.message}`);
    };
    expect(check('NOT_A_VALUE')).toEqual([`${path}: unknown value "NOT_A_VALUE" for enum ${c.type.fullName}`]);
    expect(check(true)).toEqual([`${path}: invalid value true for enum ${c.type.fullName}`]);
    for (const [n, name] of c.type.values.entries()) {
      expect(check(name)).toEqual([]);
      expect(check(n)).toEqual([]);
    }
    expect(errors(kind, c.spec('NOT_A_VALUE'))[0]).toBe(
      `${path}: unknown value "NOT_A_VALUE" for enum ${c.type.fullName}`,
    );
  });
});
