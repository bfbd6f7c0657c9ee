import { buildMeshConfig } from '../../../src/mesh/build';
import { defaultMeshConfig } from '../../../src/mesh/defaults';
import { applyMeshOverlay } from '../../../src/mesh/merge';

describe('meshConfig defaults (istiod DefaultMeshConfig)', () => {
  const mesh = defaultMeshConfig();

  test('identity: trustDomain cluster.local, no aliases, rootNamespace istio-system', () => {
    expect(mesh.trustDomain).toBe('cluster.local');
    expect(mesh.trustDomainAliases).toEqual([]);
    expect(mesh.rootNamespace).toBe('istio-system');
  });

  test('defaultConfig: discoveryAddress istiod.istio-system.svc:15012 and the proxy defaults', () => {
    expect(mesh.defaultConfig).toMatchObject({
      discoveryAddress: 'istiod.istio-system.svc:15012',
      proxyAdminPort: 15000,
      statusPort: 15020,
      controlPlaneAuthPolicy: 'MUTUAL_TLS',
      drainDuration: '45s',
      serviceCluster: 'istio-proxy',
    });
  });

  test('traffic, telemetry and timing defaults', () => {
    expect(mesh).toMatchObject({
      enableAutoMtls: true,
      outboundTrafficPolicy: { mode: 'ALLOW_ANY' },
      inboundTrafficPolicy: { mode: 'PASSTHROUGH' },
      accessLogFile: '',
      accessLogEncoding: 'TEXT',
      enableTracing: true,
      defaultProviders: {},
      enablePrometheusMerge: true,
      proxyListenPort: 15001,
      proxyInboundListenPort: 15006,
      connectTimeout: '10s',
      dnsRefreshRate: '60s',
      defaultServiceExportTo: ['*'],
      localityLbSetting: { enabled: true },
    });
    expect((mesh['extensionProviders'] as { name: string }[]).map((p) => p.name)).toEqual([
      'prometheus',
      'stackdriver',
      'envoy',
    ]);
  });

  test('caCertificates, meshMTLS, ca and discoverySelectors are unset', () => {
    for (const field of ['caCertificates', 'meshMTLS', 'ca', 'discoverySelectors'])
      expect(mesh).not.toHaveProperty(field);
  });

  test('each call returns an independent copy', () => {
    const a = defaultMeshConfig();
    a.defaultConfig.proxyMetadata = { X: '1' };
    expect(defaultMeshConfig().defaultConfig.proxyMetadata).toBeUndefined();
  });

  test('an empty meshConfig yields exactly the defaults', () => {
    const built = buildMeshConfig([{ source: 'mesh', text: '' }]);
    expect(built.ok && built.mesh).toEqual(defaultMeshConfig());
  });
});

describe('meshConfig merge rules (istiod ApplyMeshConfig)', () => {
  const base = defaultMeshConfig();

  test('top-level fields are replaced, including nested objects and lists', () => {
    const out = applyMeshOverlay(base, {
      rootNamespace: 'mesh-root',
      outboundTrafficPolicy: { mode: 'REGISTRY_ONLY' },
      defaultServiceExportTo: ['.'],
    });
    expect(out.rootNamespace).toBe('mesh-root');
    expect(out['outboundTrafficPolicy']).toEqual({ mode: 'REGISTRY_ONLY' });
    expect(out['defaultServiceExportTo']).toEqual(['.']);
  });

  test('defaultConfig is deep-merged: unspecified proxy fields keep their values', () => {
    const out = applyMeshOverlay(base, {
      defaultConfig: { discoveryAddress: 'istiod.other.svc:15012', tracing: { sampling: 10 } },
    });
    expect(out.defaultConfig.discoveryAddress).toBe('istiod.other.svc:15012');
    expect(out.defaultConfig['proxyAdminPort']).toBe(15000);
    expect(out.defaultConfig['tracing']).toEqual({ zipkin: { address: 'zipkin.istio-system:9411' }, sampling: 10 });
  });

  test('defaultConfig.proxyMetadata keys are merged across layers', () => {
    const shared = applyMeshOverlay(base, { defaultConfig: { proxyMetadata: { A: '1', B: '1' } } });
    const out = applyMeshOverlay(shared, {
      defaultConfig: { proxyMetadata: { B: '2', ISTIO_META_ENABLE_HBONE: 'true' } },
    });
    expect(out.defaultConfig.proxyMetadata).toEqual({ A: '1', B: '2', ISTIO_META_ENABLE_HBONE: 'true' });
  });

  test('defaultProviders is replaced as a whole', () => {
    const shared = applyMeshOverlay(base, { defaultProviders: { metrics: ['prometheus'], tracing: ['zipkin'] } });
    const out = applyMeshOverlay(shared, { defaultProviders: { accessLogging: ['envoy'] } });
    expect(out['defaultProviders']).toEqual({ accessLogging: ['envoy'] });
  });

  test('extensionProviders merge by name: a known name is replaced in place, a new one appended', () => {
    const out = applyMeshOverlay(base, {
      extensionProviders: [
        { name: 'envoy', envoyFileAccessLog: { path: '/dev/stderr' } },
        { name: 'otel', opentelemetry: { service: 'otel.observability.svc', port: 4317 } },
      ],
    });
    expect(out['extensionProviders']).toEqual([
      { name: 'prometheus', prometheus: {} },
      { name: 'stackdriver', stackdriver: {} },
      { name: 'envoy', envoyFileAccessLog: { path: '/dev/stderr' } },
      { name: 'otel', opentelemetry: { service: 'otel.observability.svc', port: 4317 } },
    ]);
  });

  test('trustDomainAliases are the sorted union of the layers', () => {
    const shared = applyMeshOverlay(base, { trustDomainAliases: ['old.example', 'b.example'] });
    const out = applyMeshOverlay(shared, { trustDomainAliases: ['a.example', 'b.example'] });
    expect(out.trustDomainAliases).toEqual(['a.example', 'b.example', 'old.example']);
  });

  test('a field set to null counts as not set', () => {
    const out = applyMeshOverlay(base, { trustDomain: null, defaultConfig: { discoveryAddress: null } });
    expect(out.trustDomain).toBe('cluster.local');
    expect(out.defaultConfig.discoveryAddress).toBe('istiod.istio-system.svc:15012');
  });

  test('applying a layer does not modify its inputs', () => {
    const before = JSON.stringify(base);
    const overlay = { defaultConfig: { proxyMetadata: { A: '1' } }, trustDomainAliases: ['x.example'] };
    const out = applyMeshOverlay(base, overlay);
    (out.defaultConfig.proxyMetadata as Record<string, string>)['A'] = 'changed';
    expect(JSON.stringify(base)).toBe(before);
    expect(overlay.defaultConfig.proxyMetadata.A).toBe('1');
  });
});

describe('meshConfig layers: defaults < shared < primary', () => {
  test('the primary layer wins over the shared layer, which wins over the defaults', () => {
    const built = buildMeshConfig([
      { source: 'shared', text: 'trustDomain: shared.example\nrootNamespace: shared-root\n' },
      { source: 'primary', text: 'trustDomain: primary.example\n' },
    ]);
    expect(built.ok && [built.mesh.trustDomain, built.mesh.rootNamespace, built.mesh.defaultConfig.statusPort]).toEqual(
      ['primary.example', 'shared-root', 15020],
    );
  });

  test('a layer whose source has nothing contributes nothing', () => {
    const built = buildMeshConfig([{ source: 'ConfigMap istio-system/istio key mesh', text: undefined }]);
    expect(built.ok && built.mesh).toEqual(defaultMeshConfig());
  });

  test('with two layers an invalid one is skipped and reported, and the other still applies', () => {
    const built = buildMeshConfig([
      { source: 'shared', text: 'trustDomain: Not_Valid\n' },
      { source: 'primary', text: 'rootNamespace: primary-root\n' },
    ]);
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.mesh.rootNamespace).toBe('primary-root');
    expect(built.mesh.trustDomain).toBe('cluster.local');
    expect(built.skipped.map((e) => e.source)).toEqual(['shared']);
  });

  test('with a single layer an invalid one is a failure naming the source and field', () => {
    const built = buildMeshConfig([{ source: '/etc/istio/config/mesh', text: 'trustDomain: Not_Valid\n' }]);
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect(built.error.message).toMatch(/^\/etc\/istio\/config\/mesh: trustDomain: /);
  });
});
