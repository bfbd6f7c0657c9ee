// charts/istiod: what it renders for the install scenarios, checked against the Kubernetes API
// types and against what the istiod-ts code really reads (flags, env, meshConfig, ports).

import * as path from 'node:path';
import { parseServeOptions, SERVE_ENV, SERVE_FLAGS } from '../../../src/config/options';
import { buildMeshConfig } from '../../../src/mesh/build';
import { ConfigMapLayer, MESH_CONFIG_KEY, meshConfigMapName } from '../../../src/mesh/layers';
import { servingSans } from '../../../src/ca/serving-cert/serving-cert-issuer';
import { ISTIOD_TLS_CA_DIR, ISTIOD_TLS_DIR } from '../../../src/config/serving-cert-source';
import { MemoryStore } from '../../../src/store/memory-store';
import { findObject, helmLint, helmTemplate, helmTemplateRaw, type Rendered } from '../../support/helm';
import { deploymentOf, resolvedEnv, serviceSelector, servicePorts } from './istiod-objects';
import { LIVE_PATH } from '../../../src/server/http';
import { LIVENESS_MAX_LAG_MS } from '../../../src/server/liveness';
import { kubeSchemaProblems } from './kube-schema';

const NS = 'istio-system';

const SCENARIOS: Record<string, Record<string, unknown>> = {
  default: {},
  revision: { revision: 'canary' },
  ha: { autoscaleEnabled: false, replicaCount: 3 },
  // A plugged-in CA is the cacerts Secret (always mounted, optional); its root is known up front,
  // so it can be given as the webhook's caBundle.
  'plugged-in certs': { base: { validationCABundle: 'Q0E=' } },
  // The node untaint controller on, with istio-cni in another namespace (Istio's taint.* values).
  'node untaint': { taint: { enabled: true, namespace: 'kube-system' } },
  'custom meshConfig': { meshConfig: { trustDomain: 'example.org', defaultConfig: { proxyMetadata: { EXTRA: 'x' } }, discoverySelectors: [{ matchLabels: { mesh: 'on' } }] } },
};

const render = (values: Record<string, unknown> = {}, opts: { isUpgrade?: boolean } = {}) => helmTemplate('istiod', { namespace: NS, values, ...opts });
const rendered: Record<string, Rendered[]> = Object.fromEntries(Object.entries(SCENARIOS).map(([name, values]) => [name, render(values)]));
const defaults = rendered['default']!;

function meshOf(objects: readonly Rendered[], revision = '', namespace = NS) {
  const cm = findObject(objects, 'ConfigMap', meshConfigMapName(revision));
  const store = new MemoryStore();
  store.upsert('ConfigMap', [cm]);
  const layer = new ConfigMapLayer(store, namespace, meshConfigMapName(revision));
  return { text: (cm['data'] as Record<string, string>)[MESH_CONFIG_KEY]!, build: buildMeshConfig([layer.read()]) };
}

type Webhook = { name: string; clientConfig: { service?: { name: string; namespace: string; path: string; port: number }; caBundle?: string }; failurePolicy?: string; objectSelector?: unknown };
const webhooksOf = (objects: readonly Rendered[]) => findObject(objects, 'ValidatingWebhookConfiguration')['webhooks'] as Webhook[];

describe.each(Object.keys(SCENARIOS))('charts/istiod, %s', (scenario) => {
  const objects = rendered[scenario]!;

  test('passes helm lint --strict', () => {
    const r = helmLint('istiod', SCENARIOS[scenario]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  test('every rendered object is valid for the Kubernetes API', () => {
    for (const o of objects) expect({ object: `${o.kind}/${o.metadata.name}`, problems: kubeSchemaProblems(o) }).toEqual({ object: `${o.kind}/${o.metadata.name}`, problems: [] });
  });

  test("the container's flags and environment parse as istiod-ts serve options in Kubernetes mode", () => {
    const { container } = deploymentOf(objects);
    const [command, ...flags] = container.args;
    expect(command).toBe('serve');
    const options = parseServeOptions(flags, resolvedEnv(container, NS));
    expect(options.mode).toBe('kubernetes');
    expect(options.env.POD_NAMESPACE).toBe(NS);
    expect(options.env.ROOT_CA_DIR).toBe('/etc/cacerts');
  });

  test('the mesh ConfigMap loads with the project meshConfig loader', () => {
    const revision = (SCENARIOS[scenario]!['revision'] as string | undefined) ?? '';
    const { build } = meshOf(objects, revision);
    expect(build.ok ? [] : build.error.message).toEqual([]);
  });
});

describe('charts/istiod Deployment', () => {
  const d = deploymentOf(defaults);

  test('runs as non-root with a read-only root filesystem and no capabilities', () => {
    expect(d.podSecurityContext.runAsNonRoot).toBe(true);
    expect(d.podSecurityContext.runAsUser).not.toBe(0);
    expect(d.container.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
  });

  test('the only writable mount is an emptyDir at /tmp', () => {
    const writable = d.container.volumeMounts.filter((m) => !m.readOnly);
    expect(writable.map((m) => m.mountPath)).toEqual(['/tmp']);
    expect(d.volumes.find((v) => v.name === writable[0]!.name)?.emptyDir).toBeDefined();
  });

  test('mounts a projected token with audience istio-ca at /var/run/secrets/tokens/istio-token', () => {
    const mount = d.container.volumeMounts.find((m) => m.mountPath === '/var/run/secrets/tokens')!;
    const token = d.volumes.find((v) => v.name === mount.name)!.projected!.sources[0]!.serviceAccountToken!;
    expect(token).toEqual({ audience: 'istio-ca', path: 'istio-token', expirationSeconds: 43200 });
    // The token's audience is one the CA accepts on bearer tokens.
    expect(parseServeOptions([], resolvedEnv(d.container, NS)).env.TOKEN_AUDIENCES).toContain(token.audience);
  });

  test('mounts the optional cacerts Secret read-only at /etc/cacerts, where ROOT_CA_DIR points', () => {
    const mount = d.container.volumeMounts.find((m) => m.mountPath === '/etc/cacerts')!;
    expect(mount.readOnly).toBe(true);
    expect(d.volumes.find((v) => v.name === mount.name)!.secret).toEqual({ secretName: 'cacerts', optional: true });
    expect(resolvedEnv(d.container, NS)['ROOT_CA_DIR']).toBe(mount.mountPath);
  });

  test('mounts the optional istiod-tls Secret and the root ConfigMap where the serving-certificate folders are read, as upstream', () => {
    const tls = d.container.volumeMounts.find((m) => m.mountPath === '/var/run/secrets/istiod/tls')!;
    const ca = d.container.volumeMounts.find((m) => m.mountPath === '/var/run/secrets/istiod/ca')!;
    expect(d.volumes.find((v) => v.name === tls.name)!.secret).toEqual({ secretName: 'istiod-tls', optional: true });
    expect(d.volumes.find((v) => v.name === ca.name)!.configMap).toMatchObject({ name: 'istio-ca-root-cert', optional: true });
    // The server reads them relative to its working directory, which is / in the image.
    expect(path.posix.resolve('/', ISTIOD_TLS_DIR)).toBe(tls.mountPath);
    expect(path.posix.resolve('/', ISTIOD_TLS_CA_DIR)).toBe(ca.mountPath);
  });

  test('is ready when GET /ready on 8080 says so, the port of --httpAddr', () => {
    expect(d.container.readinessProbe.httpGet).toEqual({ path: '/ready', port: 8080 });
    expect(SERVE_FLAGS.httpAddr.default).toBe(':8080');
  });

  test('is restarted only when GET /live on the same port fails for a minute: six failures in a row, each a 10 s timeout or a loop stuck for LIVENESS_MAX_LAG_MS', () => {
    const probe = d.container.livenessProbe;
    expect(probe.httpGet).toEqual({ path: LIVE_PATH, port: d.container.readinessProbe.httpGet.port });
    expect(probe).toMatchObject({ initialDelaySeconds: 30, periodSeconds: 10, timeoutSeconds: 10, failureThreshold: 6 });
    // Six failures span twice the server's own threshold: one stall, even one past it, is no restart.
    expect(probe.failureThreshold * probe.periodSeconds * 1000).toBeGreaterThanOrEqual(2 * LIVENESS_MAX_LAG_MS);
  });

  test('exposes the ports the listeners bind by default', () => {
    const byPort = Object.fromEntries(d.container.ports.map((p) => [p.containerPort, p.name]));
    expect(byPort).toEqual({ 8080: 'http-debug', 15010: 'grpc-xds', 15012: 'tls-xds', 15014: 'http-monitoring', 15017: 'https-webhooks' });
    const flagPorts = [SERVE_FLAGS.grpcAddr, SERVE_FLAGS.secureGRPCAddr, SERVE_FLAGS.httpsAddr, SERVE_FLAGS.monitoringAddr, SERVE_FLAGS.httpAddr].map((f) => Number(f.default.slice(1)));
    expect(flagPorts.sort()).toEqual(d.container.ports.map((p) => p.containerPort).sort());
  });

  test('sets POD_NAMESPACE, POD_NAME, REVISION, CLUSTER_ID and CA_TRUSTED_NODE_ACCOUNTS=<ns>/ztunnel', () => {
    expect(resolvedEnv(d.container, NS, 'istiod-abc')).toMatchObject({
      POD_NAMESPACE: NS,
      POD_NAME: 'istiod-abc',
      REVISION: 'default',
      CLUSTER_ID: 'Kubernetes',
      CA_TRUSTED_NODE_ACCOUNTS: `${NS}/ztunnel`,
    });
  });

  test('every environment variable the chart sets is one istiod-ts reads', () => {
    for (const scenario of Object.keys(SCENARIOS)) {
      for (const e of deploymentOf(rendered[scenario]!).container.env) expect({ scenario, name: e.name, known: e.name in SERVE_ENV }).toEqual({ scenario, name: e.name, known: true });
    }
  });

  test('env adds variables, and replaces a chart variable of the same name instead of repeating it', () => {
    const env = deploymentOf(render({ env: { CLUSTER_ID: 'east', XDS_AUTH: false } })).container.env;
    expect(env.filter((e) => e.name === 'CLUSTER_ID')).toEqual([{ name: 'CLUSTER_ID', value: 'east' }]);
    expect(env.find((e) => e.name === 'XDS_AUTH')).toEqual({ name: 'XDS_AUTH', value: 'false' });
  });

  test('trustedZtunnelNamespace and trustedZtunnelName name the account allowed to impersonate', () => {
    const c = deploymentOf(render({ trustedZtunnelNamespace: 'kube-system', trustedZtunnelName: 'zt' })).container;
    expect(parseServeOptions([], resolvedEnv(c, NS)).env.CA_TRUSTED_NODE_ACCOUNTS).toEqual(['kube-system/zt']);
  });

  test('keepaliveMaxServerConnectionAge and global.proxy.clusterDomain become flags', () => {
    const c = deploymentOf(render({ keepaliveMaxServerConnectionAge: '10m', global: { proxy: { clusterDomain: 'corp.local' } } })).container;
    const options = parseServeOptions(c.args.slice(1), resolvedEnv(c, NS));
    expect(options.flags.keepaliveMaxServerConnectionAge).toBe(10 * 60 * 1000);
    expect(options.flags.domain).toBe('corp.local');
  });

  test('the image is <hub>/<image>:<tag>, or image alone when it holds a registry path', () => {
    expect(d.container.image).toBe('istiod-ts/istiod-ts:0.1.0');
    expect(deploymentOf(render({ hub: 'registry.example/mesh', tag: '1.2.3' })).container.image).toBe('registry.example/mesh/istiod-ts:1.2.3');
    expect(deploymentOf(render({ image: 'registry.example/x/istiod:9' })).container.image).toBe('registry.example/x/istiod:9');
  });

  test('keys under pilot. mean the same as top-level keys', () => {
    const viaPilot = render({ pilot: { autoscaleEnabled: false, replicaCount: 2, env: { CLUSTER_ID: 'p' } } });
    expect(viaPilot).toEqual(render({ autoscaleEnabled: false, replicaCount: 2, env: { CLUSTER_ID: 'p' } }));
  });

  test('pod labels keep the control plane out of the mesh and match the Service selector', () => {
    expect(d.podLabels).toMatchObject({ app: 'istiod', istio: 'pilot', 'istio.io/rev': 'default', 'istio.io/dataplane-mode': 'none', 'sidecar.istio.io/inject': 'false' });
    expect(d.podLabels).toMatchObject(serviceSelector(defaults));
    expect(d.podLabels).toMatchObject(d.selector);
    expect(d.serviceAccountName).toBe(findObject(defaults, 'ServiceAccount').metadata.name);
  });
});

describe('charts/istiod Service', () => {
  test('names the ports as Istio does, with the webhook on 443 to 15017', () => {
    expect(servicePorts(defaults)).toEqual([
      { name: 'grpc-xds', port: 15010, protocol: 'TCP' },
      { name: 'https-dns', port: 15012, protocol: 'TCP' },
      { name: 'https-webhook', port: 443, targetPort: 15017, protocol: 'TCP' },
      { name: 'http-monitoring', port: 15014, protocol: 'TCP' },
    ]);
  });

  test("istiod's serving certificate covers the Service name clients dial, for the default and a revision", () => {
    for (const [scenario, revision] of [['default', 'default'], ['revision', 'canary']] as const) {
      const objects = rendered[scenario]!;
      const env = parseServeOptions([], resolvedEnv(deploymentOf(objects).container, NS)).env;
      const { build } = meshOf(objects, scenario === 'revision' ? 'canary' : '');
      const sans = servingSans({ namespace: env.POD_NAMESPACE, revision, customHosts: [], discoveryAddress: build.ok ? build.mesh.defaultConfig.discoveryAddress : undefined, local: false });
      expect(sans).toContainEqual({ dns: `${findObject(objects, 'Service').metadata.name}.${NS}.svc` });
    }
  });

  test('a revision renames the Service and selects only its own pods', () => {
    const objects = rendered['revision']!;
    expect(findObject(objects, 'Service').metadata.name).toBe('istiod-canary');
    expect(serviceSelector(objects)).toEqual({ app: 'istiod', 'istio.io/rev': 'canary' });
    expect(deploymentOf(objects).podLabels).toMatchObject(serviceSelector(objects));
  });
});

describe('charts/istiod mesh ConfigMap', () => {
  test('is named as the code looks it up, istio or istio-<revision>', () => {
    expect(findObject(defaults, 'ConfigMap').metadata.name).toBe(meshConfigMapName(''));
    expect(findObject(rendered['revision']!, 'ConfigMap').metadata.name).toBe(meshConfigMapName('canary'));
  });

  test('holds the chart defaults: trust domain, root namespace, discovery address and the ambient settings', () => {
    const { build } = meshOf(defaults);
    if (!build.ok) throw build.error;
    expect(build.mesh).toMatchObject({
      trustDomain: 'cluster.local',
      rootNamespace: NS,
      defaultConfig: { discoveryAddress: `istiod.${NS}.svc:15012`, proxyMetadata: { ISTIO_META_ENABLE_HBONE: 'true' } },
      defaultProviders: { metrics: ['prometheus'] },
    });
    expect(build.mesh['serviceScopeConfigs']).toEqual([{ servicesSelector: { matchExpressions: [{ key: 'istio.io/global', operator: 'In', values: ['true'] }] }, scope: 'GLOBAL' }]);
  });

  test('rootNamespace follows global.istioNamespace; discoveryAddress follows the revision', () => {
    // global.istioNamespace must be the release namespace (the checks refuse any other).
    const objects = helmTemplate('istiod', { namespace: 'mesh-root', values: { revision: 'canary', global: { istioNamespace: 'mesh-root' } } });
    const { build } = meshOf(objects, 'canary', 'mesh-root');
    if (!build.ok) throw build.error;
    expect(build.mesh.rootNamespace).toBe('mesh-root');
    expect(build.mesh.defaultConfig.discoveryAddress).toBe('istiod-canary.mesh-root.svc:15012');
  });

  test('meshConfig is deep-merged over the defaults', () => {
    const { build } = meshOf(rendered['custom meshConfig']!);
    if (!build.ok) throw build.error;
    expect(build.mesh.trustDomain).toBe('example.org');
    expect(build.mesh.defaultConfig).toMatchObject({ discoveryAddress: `istiod.${NS}.svc:15012`, proxyMetadata: { ISTIO_META_ENABLE_HBONE: 'true', EXTRA: 'x' } });
    expect(build.mesh.discoverySelectors).toEqual([{ matchLabels: { mesh: 'on' } }]);
  });

  test('defaultProviders given in meshConfig replaces the default prometheus provider', () => {
    const { build } = meshOf(render({ meshConfig: { defaultProviders: { metrics: [] } } }));
    if (!build.ok) throw build.error;
    expect(build.mesh['defaultProviders']).toEqual({ metrics: [] });
  });

  test('an invalid meshConfig renders, and the loader names the bad field', () => {
    const { build } = meshOf(render({ meshConfig: { trustDomain: 'not a domain' } }));
    expect(build.ok).toBe(false);
    expect(build.ok ? '' : build.error.message).toMatch(/trustDomain/);
  });
});

describe('charts/istiod validating webhook', () => {
  test('istio-validator-<ns> calls the istiod Service at /validate for objects of its revision', () => {
    const vwc = findObject(defaults, 'ValidatingWebhookConfiguration');
    expect(vwc.metadata.name).toBe(`istio-validator-${NS}`);
    expect(vwc.metadata.labels?.['istio.io/rev']).toBe('default');
    const [hook] = webhooksOf(defaults);
    expect(hook!.name).toBe('rev.validation.istio.io');
    expect(hook!.clientConfig.service).toEqual({ name: 'istiod', namespace: NS, path: '/validate', port: 443 });
    expect(hook!.failurePolicy).toBe('Ignore');
    expect(hook!.objectSelector).toEqual({ matchExpressions: [{ key: 'istio.io/rev', operator: 'In', values: ['default'] }] });
  });

  test('a revision gets istio-validator-<rev>-<ns> selecting its own objects', () => {
    const vwc = findObject(rendered['revision']!, 'ValidatingWebhookConfiguration');
    expect(vwc.metadata.name).toBe(`istio-validator-canary-${NS}`);
    expect(vwc.metadata.labels?.['istio.io/rev']).toBe('canary');
    expect(webhooksOf(rendered['revision']!)[0]!.clientConfig.service?.name).toBe('istiod-canary');
    expect(webhooksOf(rendered['revision']!)[0]!.objectSelector).toEqual({ matchExpressions: [{ key: 'istio.io/rev', operator: 'In', values: ['canary'] }] });
  });

  test('failurePolicy: Fail with a given caBundle, unset on upgrade, and no validator when configValidation is off', () => {
    expect(webhooksOf(rendered['plugged-in certs']!)[0]).toMatchObject({ failurePolicy: 'Fail', clientConfig: { caBundle: 'Q0E=' } });
    expect(webhooksOf(render({}, { isUpgrade: true }))[0]!.failurePolicy).toBeUndefined();
    expect(render({ global: { configValidation: false } }).filter((o) => o.kind === 'ValidatingWebhookConfiguration')).toEqual([]);
  });
});

describe('charts/istiod scaling', () => {
  test('by default an autoscaling/v2 HPA on CPU owns the replica count', () => {
    const hpa = findObject(defaults, 'HorizontalPodAutoscaler');
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa['spec']).toEqual({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'istiod' },
      minReplicas: 1,
      maxReplicas: 5,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }],
    });
    expect(deploymentOf(defaults).replicas).toBeUndefined();
  });

  test('one replica gets no PodDisruptionBudget, which would block node drains', () => {
    expect(defaults.filter((o) => o.kind === 'PodDisruptionBudget')).toEqual([]);
    expect(render({ autoscaleEnabled: false, replicaCount: 1 }).filter((o) => o.kind === 'PodDisruptionBudget')).toEqual([]);
  });

  test('HA with 3 fixed replicas: no HPA, replicas 3, and a PDB keeping one available', () => {
    const objects = rendered['ha']!;
    expect(objects.filter((o) => o.kind === 'HorizontalPodAutoscaler')).toEqual([]);
    expect(deploymentOf(objects).replicas).toBe(3);
    const pdb = findObject(objects, 'PodDisruptionBudget');
    expect(pdb['spec']).toEqual({ minAvailable: 1, selector: { matchLabels: serviceSelector(objects) } });
  });

  test('autoscaling with a minimum above one also gets a PDB', () => {
    expect(findObject(render({ autoscaleMin: 2 }), 'PodDisruptionBudget')['spec']).toMatchObject({ minAvailable: 1 });
  });
});

describe('charts/istiod values schema', () => {
  const refused: [string, Record<string, unknown>, RegExp][] = [
    ['replicaCount as text', { replicaCount: 'three' }, /replicaCount/],
    ['autoscaleEnabled as text', { autoscaleEnabled: 'yes' }, /autoscaleEnabled/],
    ['an env value that is a map', { env: { A: { b: 1 } } }, /env/],
    ['pilot.replicaCount as text', { pilot: { replicaCount: 'x' } }, /pilot\/replicaCount/],
    ['a revision that is not a DNS label', { revision: 'Bad_Rev' }, /revision/],
    ['keepaliveMaxServerConnectionAge without a unit', { keepaliveMaxServerConnectionAge: '30' }, /keepaliveMaxServerConnectionAge/],
    ['meshConfig as a string', { meshConfig: 'trustDomain: x' }, /meshConfig/],
    ['tolerations as a map', { tolerations: { key: 'x' } }, /tolerations/],
    ['an unknown validationFailurePolicy', { base: { validationFailurePolicy: 'Maybe' } }, /validationFailurePolicy/],
  ];
  test.each(refused)('refuses %s', (_name, values, field) => {
    const r = helmTemplateRaw('istiod', { values });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(field);
  });
});
