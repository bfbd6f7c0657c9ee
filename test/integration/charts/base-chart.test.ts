// charts/base: the Istio CRDs istiod-ts reads or validates, and the default-revision validator.

import { KINDS } from '../../../src/store/kinds';
import { allSchemas } from '../../../src/webhook/validators/registry';
import { findObject, helmLint, helmTemplate, helmTemplateRaw, type Rendered } from '../../support/helm';
import { kubeSchemaProblems, structuralProblems } from './kube-schema';

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  subresources?: { status?: object };
  additionalPrinterColumns?: { name: string; jsonPath: string; type: string }[];
  schema: { openAPIV3Schema: Record<string, unknown> };
}

interface CrdSpec {
  group: string;
  scope: string;
  names: { kind: string; plural: string; singular: string; listKind: string; shortNames?: string[]; categories?: string[] };
  versions: CrdVersion[];
}

const ISTIO_GROUPS = ['networking.istio.io', 'security.istio.io', 'telemetry.istio.io', 'extensions.istio.io'];

/** API versions Istio serves per kind and the one it stores (istio/istio manifests/charts/base/files/crd-all.gen.yaml). */
const ISTIO_SERVES: Record<string, { versions: string[]; storage: string }> = {
  'networking.istio.io/VirtualService': { versions: ['v1', 'v1alpha3', 'v1beta1'], storage: 'v1' },
  'networking.istio.io/DestinationRule': { versions: ['v1', 'v1alpha3', 'v1beta1'], storage: 'v1' },
  'networking.istio.io/Gateway': { versions: ['v1', 'v1alpha3', 'v1beta1'], storage: 'v1' },
  'networking.istio.io/ServiceEntry': { versions: ['v1', 'v1alpha3', 'v1beta1'], storage: 'v1' },
  'networking.istio.io/Sidecar': { versions: ['v1', 'v1alpha3', 'v1beta1'], storage: 'v1' },
  'networking.istio.io/WorkloadEntry': { versions: ['v1', 'v1alpha3', 'v1beta1'], storage: 'v1' },
  'networking.istio.io/WorkloadGroup': { versions: ['v1', 'v1alpha3', 'v1beta1'], storage: 'v1' },
  'networking.istio.io/EnvoyFilter': { versions: ['v1alpha3'], storage: 'v1alpha3' },
  'networking.istio.io/ProxyConfig': { versions: ['v1beta1'], storage: 'v1beta1' },
  'security.istio.io/AuthorizationPolicy': { versions: ['v1', 'v1beta1'], storage: 'v1' },
  'security.istio.io/PeerAuthentication': { versions: ['v1', 'v1beta1'], storage: 'v1' },
  'security.istio.io/RequestAuthentication': { versions: ['v1', 'v1beta1'], storage: 'v1' },
  'telemetry.istio.io/Telemetry': { versions: ['v1', 'v1alpha1'], storage: 'v1alpha1' },
  'extensions.istio.io/WasmPlugin': { versions: ['v1alpha1'], storage: 'v1alpha1' },
  'extensions.istio.io/TrafficExtension': { versions: ['v1alpha1'], storage: 'v1alpha1' },
};

const rendered = helmTemplate('base');
const crds = rendered.filter((o) => o.kind === 'CustomResourceDefinition');
const specOf = (crd: Rendered) => crd['spec'] as CrdSpec;
const crdByKind = new Map(crds.map((c) => [`${specOf(c).group}/${specOf(c).names.kind}`, specOf(c)]));

type Webhook = {
  name: string;
  clientConfig: { service?: { name: string; namespace: string; path: string; port: number }; url?: string; caBundle?: string };
  failurePolicy?: string;
  rules: { operations: string[]; apiGroups: string[]; apiVersions: string[]; resources: string[] }[];
  objectSelector?: unknown;
  sideEffects: string;
  admissionReviewVersions: string[];
};
const webhooksOf = (o: Rendered) => o['webhooks'] as Webhook[];
/** The validator alone: the CRDs (about 1 MB) are left out of renders that only look at the webhook. */
const renderValidator = (opts: { values?: { base?: Record<string, unknown>; [key: string]: unknown }; isUpgrade?: boolean } = {}) =>
  helmTemplate('base', { ...opts, values: { ...opts.values, base: { enableCRDTemplates: false, ...opts.values?.base } } });

describe('charts/base', () => {
  test('passes helm lint --strict', () => {
    const r = helmLint('base');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  test('renders exactly one CRD per Istio kind, each with the versions Istio serves and its storage version', () => {
    expect([...crdByKind.keys()].sort()).toEqual(Object.keys(ISTIO_SERVES).sort());
    for (const [key, want] of Object.entries(ISTIO_SERVES)) {
      const spec = crdByKind.get(key)!;
      expect({ key, versions: spec.versions.map((v) => v.name).sort() }).toEqual({ key, versions: [...want.versions].sort() });
      expect({ key, storage: spec.versions.filter((v) => v.storage).map((v) => v.name) }).toEqual({ key, storage: [want.storage] });
      expect(spec.versions.every((v) => v.served)).toBe(true);
      expect(spec.scope).toBe('Namespaced');
    }
  });

  test('every Istio kind the store reads has a CRD with the versions the store accepts', () => {
    for (const info of Object.values(KINDS).filter((k) => ISTIO_GROUPS.includes(k.group))) {
      const spec = crdByKind.get(`${info.group}/${info.kind}`);
      expect(spec).toBeDefined();
      expect(spec!.versions.map((v) => v.name)).toEqual(expect.arrayContaining([...info.versions]));
    }
  });

  test('every Istio kind the webhook validates has a CRD serving the versions the validator knows', () => {
    for (const schema of allSchemas().filter((s) => ISTIO_GROUPS.includes(s.group))) {
      const spec = crdByKind.get(`${schema.group}/${schema.kind}`);
      expect({ kind: schema.kind, found: spec !== undefined }).toEqual({ kind: schema.kind, found: true });
      expect(spec!.versions.map((v) => v.name).sort()).toEqual([...schema.versions].sort());
    }
  });

  test('every CRD version has the status subresource, an Age column wherever it declares columns, and a structural schema', () => {
    for (const crd of crds) {
      for (const v of specOf(crd).versions) {
        expect(v.subresources?.status).toEqual({});
        // Istio's CRDs declare no columns for some kinds (Gateway, Sidecar, ...); kubectl then prints NAME and AGE itself.
        const columns = v.additionalPrinterColumns ?? [];
        if (columns.length > 0) expect(columns.some((c) => c.name === 'Age' && c.jsonPath === '.metadata.creationTimestamp' && c.type === 'date')).toBe(true);
        expect({ crd: crd.metadata.name, v: v.name, problems: structuralProblems(v.schema.openAPIV3Schema) }).toEqual({ crd: crd.metadata.name, v: v.name, problems: [] });
        expect(v.schema.openAPIV3Schema['type']).toBe('object');
      }
    }
  });

  test('printer columns read fields the schema types', () => {
    for (const crd of crds) {
      for (const v of specOf(crd).versions) {
        const spec = (v.schema.openAPIV3Schema['properties'] as Record<string, { properties?: Record<string, { properties?: Record<string, unknown> }> }>)['spec']!;
        for (const col of v.additionalPrinterColumns ?? []) {
          if (!col.jsonPath.startsWith('.spec.')) continue;
          const [first, second] = col.jsonPath.slice('.spec.'.length).split('.');
          const field = spec.properties?.[first!];
          expect({ column: `${crd.metadata.name} ${col.name}`, typed: second === undefined ? field !== undefined : field?.properties?.[second] !== undefined }).toEqual({
            column: `${crd.metadata.name} ${col.name}`,
            typed: true,
          });
        }
      }
    }
  });

  test('CRD names, short names and categories follow Istio', () => {
    const vs = crdByKind.get('networking.istio.io/VirtualService')!;
    expect(vs.names).toEqual({ kind: 'VirtualService', listKind: 'VirtualServiceList', plural: 'virtualservices', singular: 'virtualservice', shortNames: ['vs'], categories: ['istio-io', 'networking-istio-io'] });
    expect(crdByKind.get('security.istio.io/AuthorizationPolicy')!.names.shortNames).toEqual(['ap']);
    expect(crdByKind.get('telemetry.istio.io/Telemetry')!.names.plural).toBe('telemetries');
    for (const crd of crds) expect(crd.metadata.name).toBe(`${specOf(crd).names.plural}.${specOf(crd).group}`);
  });

  test('CRDs are kept on uninstall, so deleting the release never deletes mesh configuration', () => {
    for (const crd of crds) expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
  });

  test('excludedCRDs leaves the named CRDs out; enableCRDTemplates false leaves all out', () => {
    const some = helmTemplate('base', { values: { base: { excludedCRDs: ['envoyfilters.networking.istio.io'] } } });
    expect(some.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name)).not.toContain('envoyfilters.networking.istio.io');
    expect(some.filter((o) => o.kind === 'CustomResourceDefinition')).toHaveLength(crds.length - 1);
    const none = helmTemplate('base', { values: { base: { enableCRDTemplates: false } } });
    expect(none.filter((o) => o.kind === 'CustomResourceDefinition')).toHaveLength(0);
  });

  test('istiod-default-validator calls Service istiod at /validate and fails open on a fresh install', () => {
    const vwc = findObject(rendered, 'ValidatingWebhookConfiguration', 'istiod-default-validator');
    expect(vwc.metadata.labels?.['istio.io/rev']).toBe('default');
    const [hook, ...rest] = webhooksOf(vwc);
    expect(rest).toHaveLength(0);
    expect(hook!.name).toBe('validation.istio.io');
    expect(hook!.clientConfig.service).toEqual({ name: 'istiod', namespace: 'istio-system', path: '/validate', port: 443 });
    expect(hook!.failurePolicy).toBe('Ignore');
    expect(hook!.objectSelector).toBeUndefined();
    expect(hook!.sideEffects).toBe('None');
    expect(hook!.admissionReviewVersions).toEqual(['v1']);
    expect(hook!.rules).toEqual([{ operations: ['CREATE', 'UPDATE'], apiGroups: ['security.istio.io', 'networking.istio.io', 'telemetry.istio.io', 'extensions.istio.io'], apiVersions: ['*'], resources: ['*'] }]);
  });

  test('on upgrade the validator leaves failurePolicy to istiod, which has already set it', () => {
    const vwc = findObject(renderValidator({ isUpgrade: true }), 'ValidatingWebhookConfiguration');
    expect(webhooksOf(vwc)[0]!.failurePolicy).toBeUndefined();
  });

  test('a caBundle given at install means failurePolicy Fail, since istiod has nothing to patch', () => {
    const vwc = findObject(renderValidator({ values: { base: { validationCABundle: 'Q0E=' } } }), 'ValidatingWebhookConfiguration');
    expect(webhooksOf(vwc)[0]!.clientConfig.caBundle).toBe('Q0E=');
    expect(webhooksOf(vwc)[0]!.failurePolicy).toBe('Fail');
  });

  test('defaultRevision canary points the validator at istiod-canary; an empty one leaves it out', () => {
    const canary = findObject(renderValidator({ values: { defaultRevision: 'canary' } }), 'ValidatingWebhookConfiguration');
    expect(canary.metadata.labels?.['istio.io/rev']).toBe('canary');
    expect(webhooksOf(canary)[0]!.clientConfig.service?.name).toBe('istiod-canary');
    expect(renderValidator({ values: { defaultRevision: '' } }).filter((o) => o.kind === 'ValidatingWebhookConfiguration')).toHaveLength(0);
  });

  test('validationURL replaces the Service reference', () => {
    const vwc = findObject(renderValidator({ values: { base: { validationURL: 'https://istiod.example:15017/validate' } } }), 'ValidatingWebhookConfiguration');
    expect(webhooksOf(vwc)[0]!.clientConfig).toEqual({ url: 'https://istiod.example:15017/validate' });
  });

  test('every rendered object is valid for the Kubernetes API', () => {
    for (const o of rendered) expect({ object: `${o.kind}/${o.metadata.name}`, problems: kubeSchemaProblems(o) }).toEqual({ object: `${o.kind}/${o.metadata.name}`, problems: [] });
  });

  test('values of the wrong type are refused by the values schema', () => {
    const r = helmTemplateRaw('base', { values: { base: { enableCRDTemplates: 'yes' } } });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/enableCRDTemplates/);
    const policy = helmTemplateRaw('base', { values: { base: { validationFailurePolicy: 'Sometimes' } } });
    expect(policy.status).not.toBe(0);
    expect(policy.stderr).toMatch(/validationFailurePolicy/);
  });
});
