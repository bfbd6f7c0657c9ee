// charts/istiod refuses what it cannot honour, before anything reaches a cluster: values.schema.json
// knows every key of Istio's chart and of this one, so a misspelt key or a value of the wrong type
// fails `helm template`, `helm install` and `helm lint` naming the path; values the schema accepts
// but istiod-ts cannot honour fail the render with the reason.

import { certProviderProblem } from '../../../src/config/serving-cert-source';
import { helmLint, helmTemplateRaw } from '../../support/helm';

const refuse = (values: Record<string, unknown>) => {
  const r = helmTemplateRaw('istiod', { values });
  return { failed: r.status !== 0, stderr: r.stderr };
};

/** The cases' values as one values file: a single helm run reports every schema violation in it. */
function mergeCases(cases: [string, Record<string, unknown>, RegExp][]): Record<string, unknown> {
  const merge = (into: Record<string, unknown>, from: Record<string, unknown>, at: string) => {
    for (const [key, value] of Object.entries(from)) {
      const have = into[key];
      const both = [have, value].every((v) => typeof v === 'object' && v !== null && !Array.isArray(v));
      if (both) merge(have as Record<string, unknown>, value as Record<string, unknown>, `${at}.${key}`);
      else if (have !== undefined) throw new Error(`two cases set ${at}.${key}; give each case its own path`);
      else into[key] = structuredClone(value);
    }
  };
  const out: Record<string, unknown> = {};
  for (const [, values] of cases) merge(out, values, 'values');
  return out;
}

describe('charts/istiod values schema', () => {
  const misspelt: [string, Record<string, unknown>, RegExp][] = [
    ['a misspelt top-level key', { replicaCont: 2 }, /at '': additional properties 'replicaCont' not allowed/],
    ['a misspelt key under pilot.', { pilot: { autoscaleEnabeld: false } }, /at '\/pilot': additional properties 'autoscaleEnabeld' not allowed/],
    ['a misspelt key under global', { global: { trustBundleNmae: 'x' } }, /at '\/global': additional properties 'trustBundleNmae' not allowed/],
    ['a misspelt key under pdb', { pdb: { minAvailble: 1 } }, /at '\/pdb': additional properties 'minAvailble' not allowed/],
    ['a misspelt key under global.networkPolicy', { global: { networkPolicy: { enable: true } } }, /at '\/global\/networkPolicy': additional properties 'enable' not allowed/],
  ];
  const wrongType: [string, Record<string, unknown>, RegExp][] = [
    ['revisionTags as one string', { revisionTags: 'prod' }, /at '\/revisionTags': got string, want array/],
    ['a revision tag that is not a DNS label', { pilot: { revisionTags: ['Prod_1'] } }, /at '\/pilot\/revisionTags\/0'/],
    ['extraContainerArgs as one string', { extraContainerArgs: '--a --b' }, /at '\/extraContainerArgs'/],
    ['an envVarFrom entry without a name', { envVarFrom: [{ valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }, /at '\/envVarFrom\/0'/],
    ['volumes as a map', { volumes: { extra: { emptyDir: {} } } }, /at '\/volumes'/],
    ['a volumeMount without a mountPath', { volumeMounts: [{ name: 'x' }] }, /at '\/volumeMounts\/0'/],
    ['an ipFamilyPolicy Kubernetes does not have', { ipFamilyPolicy: 'DualStack' }, /at '\/ipFamilyPolicy'/],
    ['an IP family Kubernetes does not have', { ipFamilies: ['IPv5'] }, /at '\/ipFamilies\/0'/],
    ['a serviceAccountAnnotations value that is a number', { serviceAccountAnnotations: { a: 1 } }, /at '\/serviceAccountAnnotations\/a'/],
    ['a trustBundleName that is not a ConfigMap name', { global: { trustBundleName: 'Corp_Root' } }, /at '\/global\/trustBundleName'/],
    ['global.networkPolicy.enabled as text', { global: { networkPolicy: { enabled: 'yes' } } }, /at '\/global\/networkPolicy\/enabled': got string, want boolean/],
    ['an unhealthyPodEvictionPolicy Kubernetes does not have', { pdb: { unhealthyPodEvictionPolicy: 'Sometimes' } }, /at '\/pdb\/unhealthyPodEvictionPolicy'/],
    ['pdb.maxUnavailable as a fraction', { pdb: { maxUnavailable: '0.5' } }, /at '\/pdb\/maxUnavailable'/],
  ];
  const run = refuse(mergeCases([...misspelt, ...wrongType]));

  test('helm template fails on values the schema refuses', () => {
    expect(run.failed).toBe(true);
    expect(run.stderr).toMatch(/values don't meet the specifications of the schema/);
  });

  test.each(misspelt)('refuses %s, naming it', (_name, _values, message) => {
    expect(run.stderr).toMatch(message);
  });

  test.each(wrongType)('refuses %s, naming the path', (_name, _values, message) => {
    expect(run.stderr).toMatch(message);
  });

  test('each case alone is refused too: the first of each kind', () => {
    for (const [, values, message] of [misspelt[0]!, wrongType[0]!]) {
      const alone = refuse(values);
      expect(alone.failed).toBe(true);
      expect(alone.stderr).toMatch(message);
    }
  });

  test('helm lint --strict refuses a misspelt key too', () => {
    const r = helmLint('istiod', { ipFamilyPolicyy: 'SingleStack' });
    expect(r.status).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).toMatch(/additional properties 'ipFamilyPolicyy' not allowed/);
  });
});

describe('charts/istiod refuses values istiod-ts cannot honour, saying why', () => {
  test('global.pilotCertProvider kubernetes, which the server refuses too', () => {
    expect(certProviderProblem('kubernetes')).toBeDefined();
    const r = refuse({ global: { pilotCertProvider: 'kubernetes' } });
    expect(r.failed).toBe(true);
    expect(r.stderr).toMatch(/global.pilotCertProvider=kubernetes is not supported by istiod-ts.*use istiod .* or custom/);
  });

  const cannot: [string, Record<string, unknown>, RegExp][] = [
    ['a local injector istiod in the remote profile', { istiodRemote: { enabled: true, enabledLocalInjectorIstiod: true } }, /istiodRemote.enabledLocalInjectorIstiod: istiod-ts injects no sidecars/],
    ['a remote that would be the config cluster', { profile: 'remote', global: { configCluster: true } }, /global.configCluster: istiod-ts reads Istio configuration from the cluster it runs in/],
    ['a profile other than ambient', { profile: 'demo' }, /profile=demo: istiod-ts is an ambient control plane/],
    ['a global.profile other than ambient', { global: { profile: 'minimal' } }, /global.profile=minimal: istiod-ts is an ambient control plane/],
    ['a variable in both env and envVarFrom', { env: { CLUSTER_ID: 'a' }, envVarFrom: [{ name: 'CLUSTER_ID', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } }] }, /envVarFrom: CLUSTER_ID is also set in env/],
    ['a volume named like one of the chart’s', { volumes: [{ name: 'cacerts', emptyDir: {} }] }, /volumes: cacerts is already a volume of the chart/],
    ['env.ENABLE_CLUSTER_TRUST_BUNDLE_API, which istiod-ts does not publish', { env: { ENABLE_CLUSTER_TRUST_BUNDLE_API: true } }, /ClusterTrustBundles/],
    ['pilot. nested in pilot.', { pilot: { pilot: { replicaCount: 2 } } }, /pilot.pilot: the pilot. prefix applies once/],
    ['a revision tag listed twice', { revisionTags: ['prod', 'prod'] }, /revisionTags: prod is listed twice/],
    ['autoscaleMin above autoscaleMax, an HPA the API server refuses', { pilot: { autoscaleMin: 3 }, autoscaleMax: 2 }, /autoscaleMin=3 is above autoscaleMax=2: the API server refuses such a HorizontalPodAutoscaler/],
    ['a global.istioNamespace other than the release namespace, where no istiod Service would be', { global: { istioNamespace: 'mesh' } }, /global.istioNamespace=mesh differs from the release namespace istio-system: the webhook .* Service istiod in mesh/],
  ];
  test.each(cannot)('%s', (_name, values, message) => {
    const r = refuse(values);
    expect(r.failed).toBe(true);
    expect(r.stderr).toMatch(message);
  });
});

describe('charts/istiod accepts the neighbours of what it refuses', () => {
  test.each([
    ['autoscaleMin equal to autoscaleMax', { autoscaleMin: 2, autoscaleMax: 2 }, 'istio-system'],
    ['autoscaleMin above autoscaleMax with autoscaling off (no HPA is rendered)', { autoscaleEnabled: false, autoscaleMin: 3, autoscaleMax: 2 }, 'istio-system'],
    ['global.istioNamespace equal to another release namespace', { global: { istioNamespace: 'mesh' } }, 'mesh'],
  ] as const)('%s', (_name, values, namespace) => {
    const r = helmTemplateRaw('istiod', { namespace, values });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  });
});
