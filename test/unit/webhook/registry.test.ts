import { findSchema, validateConfig } from '../../../src/webhook/validators/registry';

const ISTIO_KINDS: [string, string][] = [
  ['security.istio.io', 'AuthorizationPolicy'],
  ['security.istio.io', 'PeerAuthentication'],
  ['security.istio.io', 'RequestAuthentication'],
  ['networking.istio.io', 'VirtualService'],
  ['networking.istio.io', 'DestinationRule'],
  ['networking.istio.io', 'Gateway'],
  ['networking.istio.io', 'ServiceEntry'],
  ['networking.istio.io', 'Sidecar'],
  ['networking.istio.io', 'WorkloadEntry'],
  ['networking.istio.io', 'WorkloadGroup'],
  ['networking.istio.io', 'EnvoyFilter'],
  ['networking.istio.io', 'ProxyConfig'],
  ['telemetry.istio.io', 'Telemetry'],
  ['extensions.istio.io', 'WasmPlugin'],
  ['extensions.istio.io', 'TrafficExtension'],
];

describe('schema registry', () => {
  test.each(ISTIO_KINDS)('%s %s is served', (group, kind) => {
    expect(findSchema(group, kind)).toMatchObject({ group, kind });
  });

  test.each(['v1', 'v1beta1', 'v1alpha3', 'v2'])(
    'the version is ignored: networking.istio.io/%s Sidecar is validated',
    (version) => {
      const v = validateConfig({
        apiVersion: `networking.istio.io/${version}`,
        kind: 'Sidecar',
        metadata: { name: 's' },
        spec: {},
      });
      expect(v.outcome === 'validated' && v.result.errors.map((e) => e.message)).toEqual([
        'sidecar: empty configuration provided',
      ]);
    },
  );

  test('a kind of another group is unrecognized, named as Go prints a GroupVersionKind', () => {
    expect(validateConfig({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } })).toEqual({
      outcome: 'unknown-kind',
      gvk: 'apps/v1, Kind=Deployment',
      message: 'unrecognized type apps/v1, Kind=Deployment',
    });
  });

  test('Gateway API kinds get only the metadata checks', () => {
    const ok = validateConfig({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'r' },
      spec: { anything: true },
    });
    expect(ok.outcome === 'validated' && ok.result.errors).toEqual([]);
    const rejected = validateConfig({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'g', annotations: { 'internal.istio.io/webhook-always-reject': 'x' } },
    });
    expect(rejected.outcome === 'validated' && rejected.result.errors.length).toBe(1);
  });

  test('metadata fields of the wrong type are errors at their path', () => {
    const v = validateConfig({
      apiVersion: 'security.istio.io/v1',
      kind: 'PeerAuthentication',
      metadata: { name: 'p', labels: { a: 1 } },
    });
    expect(v.outcome === 'validated' && v.result.errors).toEqual([
      { path: 'metadata.labels["a"]', message: 'must be a string' },
    ]);
  });
});
