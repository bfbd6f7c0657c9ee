// charts/istiod rendered with values files written for Istio's istiod chart: each value at the
// path Istio's chart reads it from, and what it renders, read back the way istiod-ts reads it.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseServeOptions, SERVE_ENV, SERVE_FLAGS } from '../../../src/config/options';
import { parseEnv, parseFlags } from '../../../src/config/settings';
import { parse as parseYaml } from 'yaml';
import { findObject, helmLint, helmTemplate, type Rendered } from '../../support/helm';
import { deploymentOf, resolvedEnv, serviceSelector, servicePorts, type Volume } from './istiod-objects';
import { kubeSchemaProblems } from './kube-schema';

const NS = 'istio-system';
const VALUES_DIR = path.join(__dirname, 'values');
const FEATURES = path.join(VALUES_DIR, 'upstream-features.yaml');
const AMBIENT_INSTALL = path.join(VALUES_DIR, 'upstream-ambient-install.yaml');

const render = (opts: { valuesFiles?: string[]; values?: Record<string, unknown> } = {}) => helmTemplate('istiod', { namespace: NS, ...opts });
const defaults = render();
const features = render({ valuesFiles: [FEATURES] });
const ofKind = (objects: readonly Rendered[], kind: string) => objects.filter((o) => o.kind === kind);

interface NetworkPolicySpec {
  podSelector: { matchLabels: Record<string, string> };
  policyTypes: string[];
  ingress: { ports: { protocol: string; port: number }[] }[];
  egress: object[];
}

describe('charts/istiod with a values file written for Istio’s chart', () => {
  const d = deploymentOf(features);

  test('renders objects valid for the Kubernetes API', () => {
    for (const o of features) expect({ object: `${o.kind}/${o.metadata.name}`, problems: kubeSchemaProblems(o) }).toEqual({ object: `${o.kind}/${o.metadata.name}`, problems: [] });
  });

  test('revisionTags: a Service istiod-revision-tag-<tag> per tag, labelled with the tag and this revision, serving as istiod does; no injector webhook', () => {
    for (const tag of ['prod', 'stable']) {
      const svc = findObject(features, 'Service', `istiod-revision-tag-${tag}`);
      expect(svc.metadata.labels).toMatchObject({ 'istio.io/tag': tag, 'istio.io/rev': 'default' });
      expect(svc['spec']).toEqual(findObject(features, 'Service', 'istiod')['spec']);
    }
    expect(ofKind(features, 'Service')).toHaveLength(3);
    expect(ofKind(features, 'MutatingWebhookConfiguration')).toEqual([]);
    expect(ofKind(defaults, 'Service').map((s) => s.metadata.name)).toEqual(['istiod']);
  });

  test('a revision’s tags select that revision’s pods', () => {
    const objects = render({ values: { revision: 'canary', revisionTags: ['prod'] } });
    const tag = findObject(objects, 'Service', 'istiod-revision-tag-prod');
    expect(tag.metadata.labels).toMatchObject({ 'istio.io/tag': 'prod', 'istio.io/rev': 'canary' });
    expect((tag['spec'] as { selector: Record<string, string> }).selector).toEqual(serviceSelector(objects, 'istiod-canary'));
  });

  test('extraContainerArgs follow the chart’s flags and are flags of istiod-ts serve', () => {
    expect(d.container.args.slice(-1)).toEqual(['--shutdownDuration=20s']);
    expect(parseFlags(SERVE_FLAGS, d.container.args.slice(1)).values.shutdownDuration).toBe(20_000);
  });

  test('env and envVarFrom: env values as text, envVarFrom entries as given, and one that names a chart variable replaces it', () => {
    expect(d.container.env.filter((e) => e.name === 'PILOT_ENABLE_IP_AUTOALLOCATE')).toEqual([{ name: 'PILOT_ENABLE_IP_AUTOALLOCATE', value: 'false' }]);
    expect(d.container.env.filter((e) => e.name === 'CLUSTER_ID')).toEqual([{ name: 'CLUSTER_ID', valueFrom: { configMapKeyRef: { name: 'cluster-identity', key: 'id' } } }]);
    expect(d.container.env.filter((e) => e.name === 'ISTIOD_CUSTOM_HOST')).toEqual([
      { name: 'ISTIOD_CUSTOM_HOST', valueFrom: { secretKeyRef: { name: 'istiod-hosts', key: 'hosts', optional: true } } },
    ]);
    for (const e of d.container.env) expect({ name: e.name, known: e.name in SERVE_ENV }).toEqual({ name: e.name, known: true });
  });

  test('volumes and volumeMounts are added after the chart’s own', () => {
    const chartVolumes = deploymentOf(defaults).volumes.map((v) => v.name);
    expect(d.volumes.map((v) => v.name)).toEqual([...chartVolumes, 'extra-ca']);
    expect(d.volumes.at(-1)).toEqual({ name: 'extra-ca', configMap: { name: 'corp-ca' } } satisfies Volume);
    expect(d.container.volumeMounts.at(-1)).toEqual({ name: 'extra-ca', mountPath: '/etc/corp-ca', readOnly: true });
  });

  test('ipFamilyPolicy and ipFamilies set the Service’s IP families, on every Service', () => {
    for (const svc of ofKind(features, 'Service')) expect(svc['spec']).toMatchObject({ ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv6', 'IPv4'] });
    expect(findObject(defaults, 'Service')['spec']).not.toHaveProperty('ipFamilyPolicy');
    expect(servicePorts(features, 'istiod')).toEqual(servicePorts(defaults));
  });

  test('serviceAccountAnnotations annotate the ServiceAccount', () => {
    expect(findObject(features, 'ServiceAccount').metadata.annotations).toEqual({ 'iam.gke.io/gcp-service-account': 'istiod@example.iam.gserviceaccount.com' });
    expect(findObject(defaults, 'ServiceAccount').metadata.annotations).toBeUndefined();
  });

  test('global.trustBundleName names the root ConfigMap istiod-ts writes (PILOT_CA_CERT_CONFIGMAP) and the one mounted for the serving CA', () => {
    const env = parseEnv(SERVE_ENV, resolvedEnvOf(features));
    expect(env.PILOT_CA_CERT_CONFIGMAP).toBe('corp-mesh-root');
    const mount = d.container.volumeMounts.find((m) => m.mountPath === '/var/run/secrets/istiod/ca')!;
    expect(d.volumes.find((v) => v.name === mount.name)!.configMap).toMatchObject({ name: 'corp-mesh-root', optional: true });
    // Unset, the server's default applies, which is the name ztunnel reads.
    expect(parseServeOptions([], resolvedEnv(deploymentOf(defaults).container, NS)).env.PILOT_CA_CERT_CONFIGMAP).toBe('istio-ca-root-cert');
    expect(deploymentOf(defaults).container.env.map((e) => e.name)).not.toContain('PILOT_CA_CERT_CONFIGMAP');
  });

  test('global.pilotCertProvider becomes PILOT_CERT_PROVIDER, istiod by default, as Istio’s chart sets it', () => {
    expect(parseEnv(SERVE_ENV, resolvedEnvOf(features)).PILOT_CERT_PROVIDER).toBe('custom');
    expect(parseServeOptions([], resolvedEnv(deploymentOf(defaults).container, NS)).env.PILOT_CERT_PROVIDER).toBe('istiod');
  });

  test('global.networkPolicy.enabled: a NetworkPolicy admitting exactly the ports the container listens on, to pods of this revision; none by default', () => {
    const np = findObject(features, 'NetworkPolicy', 'istiod');
    const spec = np['spec'] as NetworkPolicySpec;
    const admitted = spec.ingress.flatMap((rule) => rule.ports.map((p) => p.port)).sort();
    expect(admitted).toEqual(d.container.ports.map((p) => p.containerPort).sort());
    expect(spec.ingress.flatMap((rule) => rule.ports.map((p) => p.protocol))).toEqual(admitted.map(() => 'TCP'));
    expect(d.podLabels).toMatchObject(spec.podSelector.matchLabels);
    expect(spec.podSelector.matchLabels).toEqual({ app: 'istiod', 'istio.io/rev': 'default' });
    expect(spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(spec.egress).toEqual([{}]);
    expect(ofKind(defaults, 'NetworkPolicy')).toEqual([]);
  });

  test('pdb.maxUnavailable and pdb.unhealthyPodEvictionPolicy shape the PodDisruptionBudget of an autoscaled istiod with at least two replicas', () => {
    expect(findObject(features, 'PodDisruptionBudget')['spec']).toEqual({ maxUnavailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow', selector: { matchLabels: serviceSelector(features, 'istiod') } });
    expect(ofKind(defaults, 'PodDisruptionBudget')).toEqual([]);
  });

  test('global.defaultPodDisruptionBudget.enabled false leaves the PodDisruptionBudget out even with three replicas', () => {
    const objects = render({ values: { autoscaleEnabled: false, replicaCount: 3, global: { defaultPodDisruptionBudget: { enabled: false } } } });
    expect(deploymentOf(objects).replicas).toBe(3);
    expect(ofKind(objects, 'PodDisruptionBudget')).toEqual([]);
  });

  test('passes helm lint --strict', () => {
    const r = helmLint('istiod', parseYaml(fs.readFileSync(FEATURES, 'utf8')) as Record<string, unknown>);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('charts/istiod global.resourceScope, as Istio’s chart', () => {
  const kinds = (objects: readonly Rendered[]) => objects.map((o) => o.kind).sort();
  test('cluster renders the cluster-scoped objects only, namespace the others; together they are the whole install', () => {
    const cluster = render({ values: { global: { resourceScope: 'cluster' } } });
    const namespaced = render({ values: { global: { resourceScope: 'namespace' } } });
    // istiod's ClusterRole and binding, and the reader's (reader-clusterrole.yaml).
    expect(kinds(cluster)).toEqual(['ClusterRole', 'ClusterRole', 'ClusterRoleBinding', 'ClusterRoleBinding', 'ValidatingWebhookConfiguration']);
    expect(namespaced.every((o) => o.metadata.namespace === NS)).toBe(true);
    expect(kinds([...cluster, ...namespaced])).toEqual(kinds(defaults));
  });
});

describe('charts/istiod with an ambient install’s values file for Istio’s chart', () => {
  test('accepts every key and renders exactly what the defaults render: the keys for sidecars, gateways and remote istiod have no effect', () => {
    expect(render({ valuesFiles: [AMBIENT_INSTALL] })).toEqual(defaults);
  });
});

/** The container environment of a render, with envVarFrom sources resolved to placeholder text. */
function resolvedEnvOf(objects: readonly Rendered[]): Record<string, string> {
  const { container } = deploymentOf(objects);
  const plain = { ...container, env: container.env.filter((e) => e.value !== undefined || e.valueFrom?.fieldRef) };
  const fromSources = Object.fromEntries(container.env.filter((e) => !plain.env.includes(e)).map((e) => [e.name, `from-${e.name.toLowerCase()}`]));
  return { ...resolvedEnv(plain, NS), ...fromSources };
}

describe('charts/istiod with the smaller keys of Istio’s chart', () => {
  const objects = render({ valuesFiles: [path.join(VALUES_DIR, 'upstream-smaller.yaml')] });
  const deployment = findObject(objects, 'Deployment');
  const pod = (deployment['spec'] as { template: { spec: Record<string, unknown> } }).template.spec;
  const { container } = deploymentOf(objects);
  const raw = (pod['containers'] as Record<string, unknown>[])[0]!;

  test('render objects valid for the Kubernetes API', () => {
    for (const o of objects) expect({ object: `${o.kind}/${o.metadata.name}`, problems: kubeSchemaProblems(o) }).toEqual({ object: `${o.kind}/${o.metadata.name}`, problems: [] });
  });

  test('deploymentLabels label the Deployment; initContainers go through tpl; seccompProfile and terminationMessagePolicy reach the container', () => {
    expect(deployment.metadata.labels).toMatchObject({ team: 'mesh' });
    expect(pod['initContainers']).toEqual([{ name: 'wait-for-ca', image: 'registry.example.com/mesh/wait:1', command: ['sh', '-c', 'true'] }]);
    expect(raw['securityContext']).toMatchObject({ seccompProfile: { type: 'RuntimeDefault' }, readOnlyRootFilesystem: true });
    expect(raw['terminationMessagePolicy']).toBe('FallbackToLogsOnError');
  });

  test('global.priorityClassName applies when priorityClassName is unset; global.defaultResources when resources is', () => {
    expect(pod['priorityClassName']).toBe('system-cluster-critical');
    expect(raw['resources']).toEqual({ requests: { cpu: '50m' } });
  });

  test('global.logAsJson becomes --log_as_json and crlConfigMapName PILOT_CRL_CONFIGMAP, both read by istiod-ts serve', () => {
    const options = parseServeOptions(container.args.slice(1), resolvedEnv(container, NS));
    expect(options.flags.log_as_json).toBe(true);
    expect(options.env.PILOT_CRL_CONFIGMAP).toBe('corp-mesh-crl');
  });

  test('trafficDistribution reaches the Service', () => {
    expect(findObject(objects, 'Service')['spec']).toMatchObject({ trafficDistribution: 'PreferClose' });
  });

  test('telemetry.v2.prometheus.enabled false drops the default prometheus metrics provider; configMap false drops the mesh ConfigMap', () => {
    const mesh = parseYaml((findObject(objects, 'ConfigMap')['data'] as Record<string, string>)['mesh']!) as Record<string, unknown>;
    expect(mesh).not.toHaveProperty('defaultProviders');
    expect(ofKind(render({ values: { configMap: false } }), 'ConfigMap')).toEqual([]);
  });
});
