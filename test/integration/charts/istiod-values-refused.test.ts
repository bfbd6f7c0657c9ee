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

describe('charts/istiod values schema', () => {
  const misspelt: [string, Record<string, unknown>, RegExp][] = [
    ['a misspelt top-level key', { replicaCont: 2 }, /at '': additional properties 'replicaCont' not allowed/],
    ['a misspelt key under pilot.', { pilot: { autoscaleEnabeld: false } }, /at '\/pilot': additional properties 'autoscaleEnabeld' not allowed/],
    ['a misspelt key under global', { global: { trustBundleNmae: 'x' } }, /at '\/global': additional properties 'trustBundleNmae' not allowed/],
    ['a misspelt key under pdb', { pdb: { minAvailble: 1 } }, /at '\/pdb': additional properties 'minAvailble' not allowed/],
    ['a misspelt key under global.networkPolicy', { global: { networkPolicy: { enable: true } } }, /at '\/global\/networkPolicy': additional properties 'enable' not allowed/],
  ];
  test.each(misspelt)('refuses %s, naming it', (_name, values, message) => {
    const r = refuse(values);
    expect(r.failed).toBe(true);
    expect(r.stderr).toMatch(message);
  });

  const wrongType: [string, Record<string, unknown>, RegExp][] = [
    ['revisionTags as one string', { revisionTags: 'prod' }, /\/revisionTags/],
    ['a revision tag that is not a DNS label', { revisionTags: ['Prod_1'] }, /\/revisionTags\/0/],
    ['extraContainerArgs as one string', { extraContainerArgs: '--a --b' }, /\/extraContainerArgs/],
    ['an envVarFrom entry without a name', { envVarFrom: [{ valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }, /\/envVarFrom\/0/],
    ['volumes as a map', { volumes: { extra: { emptyDir: {} } } }, /\/volumes/],
    ['a volumeMount without a mountPath', { volumeMounts: [{ name: 'x' }] }, /\/volumeMounts\/0/],
    ['an ipFamilyPolicy Kubernetes does not have', { ipFamilyPolicy: 'DualStack' }, /\/ipFamilyPolicy/],
    ['an IP family Kubernetes does not have', { ipFamilies: ['IPv5'] }, /\/ipFamilies\/0/],
    ['a serviceAccountAnnotations value that is a number', { serviceAccountAnnotations: { a: 1 } }, /\/serviceAccountAnnotations\/a/],
    ['a trustBundleName that is not a ConfigMap name', { global: { trustBundleName: 'Corp_Root' } }, /\/global\/trustBundleName/],
    ['global.networkPolicy.enabled as text', { global: { networkPolicy: { enabled: 'yes' } } }, /\/global\/networkPolicy\/enabled/],
    ['an unhealthyPodEvictionPolicy Kubernetes does not have', { pdb: { unhealthyPodEvictionPolicy: 'Sometimes' } }, /\/pdb\/unhealthyPodEvictionPolicy/],
    ['pdb.maxUnavailable as a fraction', { pdb: { maxUnavailable: '0.5' } }, /\/pdb\/maxUnavailable/],
  ];
  test.each(wrongType)('refuses %s, naming the path', (_name, values, path) => {
    const r = refuse(values);
    expect(r.failed).toBe(true);
    expect(r.stderr).toMatch(/values don't meet the specifications of the schema/);
    expect(r.stderr).toMatch(path);
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
    ['istiodRemote.enabled', { istiodRemote: { enabled: true } }, /istiodRemote.enabled: istiod-ts has no remote mode/],
    ['global.externalIstiod', { global: { externalIstiod: true } }, /global.externalIstiod: istiod-ts serves the cluster it runs in only/],
    ['a profile other than ambient', { profile: 'demo' }, /profile=demo: istiod-ts is an ambient control plane/],
    ['a global.profile other than ambient', { global: { profile: 'minimal' } }, /global.profile=minimal: istiod-ts is an ambient control plane/],
    ['a variable in both env and envVarFrom', { env: { CLUSTER_ID: 'a' }, envVarFrom: [{ name: 'CLUSTER_ID', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } }] }, /envVarFrom: CLUSTER_ID is also set in env/],
    ['a volume named like one of the chart’s', { volumes: [{ name: 'cacerts', emptyDir: {} }] }, /volumes: cacerts is already a volume of the chart/],
    ['env.ENABLE_CLUSTER_TRUST_BUNDLE_API, which istiod-ts does not publish', { env: { ENABLE_CLUSTER_TRUST_BUNDLE_API: true } }, /ClusterTrustBundles/],
    ['pilot. nested in pilot.', { pilot: { pilot: { replicaCount: 2 } } }, /pilot.pilot: the pilot. prefix applies once/],
    ['a revision tag listed twice', { revisionTags: ['prod', 'prod'] }, /revisionTags: prod is listed twice/],
  ];
  test.each(cannot)('%s', (_name, values, message) => {
    const r = refuse(values);
    expect(r.failed).toBe(true);
    expect(r.stderr).toMatch(message);
  });
});
