// charts/istiod/values.schema.json types every value the chart has and accepts every key Istio's
// istiod chart has, so an Istio values file loads and a misspelt key does not. Read from the
// files, without helm.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CHARTS_DIR } from '../../support/helm';

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  definitions?: Record<string, Schema>;
};

const CHART = path.join(CHARTS_DIR, 'istiod');
const schema = JSON.parse(fs.readFileSync(path.join(CHART, 'values.schema.json'), 'utf8')) as Schema;
const values = parseYaml(fs.readFileSync(path.join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>;

function resolve(s: Schema): Schema {
  if (!s.$ref) return s;
  const name = s.$ref.replace('#/definitions/', '');
  const target = schema.definitions?.[name];
  if (!target) throw new Error(`values.schema.json: ${s.$ref} does not resolve`);
  return resolve(target);
}

/** Paths in `value` the schema has no type for: keys it neither names nor covers by additionalProperties or a free-form object. */
function untyped(value: unknown, s: Schema, at: string): string[] {
  const node = resolve(s);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const out: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const child = node.properties?.[key] ?? (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined);
    if (child) out.push(...untyped(v, child, `${at}.${key}`));
    else if (node.properties !== undefined || node.additionalProperties === false || node.type !== 'object') out.push(`${at}.${key}`);
  }
  return out;
}

/**
 * The keys of Istio's istiod chart (istio/istio manifests/charts/istio-control/istio-discovery at
 * 86c9f01, the commit docs/install.md pairs with): values.yaml's defaults, and the keys only its
 * templates read (profile, platform, compatibilityVersion, crlConfigMapName,
 * terminationMessagePolicy, trafficDistribution; global.trustBundleName, platform, tracer).
 */
const ISTIO_KEYS = [
  'autoscaleEnabled', 'autoscaleMin', 'autoscaleMax', 'autoscaleBehavior', 'replicaCount', 'rollingMaxSurge', 'rollingMaxUnavailable',
  'hub', 'tag', 'variant', 'image', 'traceSampling', 'resources', 'seccompProfile', 'cni', 'extraContainerArgs', 'env', 'envVarFrom',
  'taint', 'affinity', 'tolerations', 'cpu', 'memory', 'volumeMounts', 'volumes', 'initContainers', 'nodeSelector', 'podAnnotations',
  'serviceAnnotations', 'serviceAccountAnnotations', 'sidecarInjectorWebhookAnnotations', 'topologySpreadConstraints',
  'jwksResolverExtraRootCA', 'keepaliveMaxServerConnectionAge', 'deploymentLabels', 'deploymentAnnotations', 'configMap', 'podLabels',
  'ipFamilyPolicy', 'ipFamilies', 'trustedZtunnelNamespace', 'trustedZtunnelName', 'sidecarInjectorWebhook', 'istiodRemote', 'telemetry',
  'revision', 'revisionTags', 'ownerName', 'meshConfig', 'experimental', 'global', 'base', 'gateways', 'gatewayClasses', 'pdb',
  'profile', 'platform', 'compatibilityVersion', 'crlConfigMapName', 'terminationMessagePolicy', 'trafficDistribution',
];
const ISTIO_GLOBAL_KEYS = [
  'istioNamespace', 'certSigners', 'defaultPodDisruptionBudget', 'defaultResources', 'hub', 'tag', 'variant', 'imagePullPolicy',
  'imagePullSecrets', 'istiod', 'logAsJson', 'nativeNftables', 'logging', 'networkPolicy', 'omitSidecarInjectorConfigMap',
  'resourceScope', 'operatorManageWebhooks', 'podDNSSearchNamespaces', 'priorityClassName', 'proxy', 'proxy_init', 'remotePilotAddress',
  'caAddress', 'externalIstiod', 'configCluster', 'configValidation', 'meshID', 'meshNetworks', 'mountMtlsCerts', 'multiCluster',
  'network', 'pilotCertProvider', 'sds', 'sts', 'caName', 'waypoint', 'trustBundleName', 'platform', 'tracer',
];

describe('charts/istiod values.schema.json', () => {
  const top = resolve(schema);
  const global = resolve(top.properties!['global']!);

  test('types every value in values.yaml', () => {
    expect(untyped(values, schema, 'values')).toEqual([]);
  });

  test('the coverage check does see a key the schema does not type', () => {
    expect(untyped({ ...values, replicaCont: 1, pdb: { minAvailble: 1 } }, schema, 'values').sort()).toEqual(['values.pdb.minAvailble', 'values.replicaCont']);
  });

  test('refuses unknown keys at the top level, in global and under pilot.', () => {
    expect(top.additionalProperties).toBe(false);
    expect(global.additionalProperties).toBe(false);
    expect(resolve(top.properties!['pilot']!)).toBe(top);
  });

  test("accepts every key of Istio's istiod chart, at the top level and in global", () => {
    expect(ISTIO_KEYS.filter((k) => !top.properties?.[k])).toEqual([]);
    expect(ISTIO_GLOBAL_KEYS.filter((k) => !global.properties?.[k])).toEqual([]);
  });
});
