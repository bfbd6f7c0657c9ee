// charts/base ships Istio's own CRDs (files/crd-all.gen.yaml, vendored from istio/istio): every
// field typed by a structural OpenAPI schema, nothing kept untyped at the top of spec. Since the
// API server now prunes what those schemas do not name, every field istiod-ts reads or writes
// must be one they name: checked here with one full object per kind the ambient index reads.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CHARTS_DIR, helmTemplate, type Rendered } from '../../support/helm';
import { structuralProblems } from './kube-schema';

type Schema = Record<string, unknown>;
interface CrdVersion {
  name: string;
  storage: boolean;
  schema?: { openAPIV3Schema?: Schema };
}
interface CrdSpec {
  group: string;
  names: { kind: string };
  versions: CrdVersion[];
}

const VENDORED = path.join(CHARTS_DIR, 'base', 'files', 'crd-all.gen.yaml');
const README = path.join(CHARTS_DIR, 'base', 'README.md');

const crds = helmTemplate('base').filter((o) => o.kind === 'CustomResourceDefinition');
const specOf = (crd: Rendered) => crd['spec'] as CrdSpec;
const vendored = parseAllDocuments(fs.readFileSync(VENDORED, 'utf8')).map((d) => d.toJS() as Rendered);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Paths the API server would prune from `value` under a structural `schema`: keys of an object
 * its `properties` do not name, unless it preserves unknown fields or has additionalProperties.
 */
function prunedPaths(value: unknown, schema: Schema | undefined, at: string): string[] {
  if (!schema) return [];
  if (Array.isArray(value)) return value.flatMap((item, i) => prunedPaths(item, schema['items'] as Schema | undefined, `${at}[${i}]`));
  if (!isObject(value)) return [];
  const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
  const additional = schema['additionalProperties'];
  const keepsUnknown = schema['x-kubernetes-preserve-unknown-fields'] === true || additional === true;
  const out: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const child = properties[key] ?? (isObject(additional) ? additional : undefined);
    if (child) out.push(...prunedPaths(v, child, `${at}.${key}`));
    else if (!keepsUnknown) out.push(`${at}.${key}`);
  }
  return out;
}

function schemaOf(group: string, kind: string, version: string): Schema {
  const crd = crds.map(specOf).find((s) => s.group === group && s.names.kind === kind);
  const schema = crd?.versions.find((v) => v.name === version)?.schema?.openAPIV3Schema;
  if (!schema) throw new Error(`no schema for ${group}/${version} ${kind}`);
  return schema;
}

/** One object per kind the ambient index reads, with every spec field src/ambient/specs.ts and authorization.ts read, and the status fields istiod-ts writes. */
const conditions = [{ type: 'ZtunnelAccepted', status: 'True', reason: 'Accepted', message: 'attached to ztunnel', observedGeneration: 2, lastTransitionTime: '2026-01-01T00:00:00Z' }];
const endpoint = { address: '10.0.0.9', labels: { app: 'db' }, ports: { tcp: 5432 }, network: 'n1', locality: 'r/z/s', serviceAccount: 'db', weight: 3 };
const FULL_OBJECTS: [group: string, kind: string, object: Record<string, unknown>][] = [
  [
    'networking.istio.io',
    'ServiceEntry',
    {
      spec: {
        hosts: ['db.example.com'],
        addresses: ['240.0.0.1'],
        ports: [{ number: 5432, name: 'tcp', protocol: 'TCP', targetPort: 15432 }],
        location: 'MESH_INTERNAL',
        resolution: 'STATIC',
        subjectAltNames: ['spiffe://cluster.local/ns/db/sa/db'],
        workloadSelector: { labels: { app: 'db' } },
        endpoints: [endpoint],
      },
      status: { addresses: [{ value: '240.240.0.1', host: 'db.example.com' }], conditions },
    },
  ],
  ['networking.istio.io', 'WorkloadEntry', { spec: endpoint }],
  [
    'security.istio.io',
    'AuthorizationPolicy',
    {
      spec: {
        selector: { matchLabels: { app: 'db' } },
        action: 'DENY',
        rules: [
          {
            from: [
              {
                source: {
                  principals: ['a'],
                  notPrincipals: ['b'],
                  namespaces: ['c'],
                  notNamespaces: ['d'],
                  serviceAccounts: ['e/f'],
                  notServiceAccounts: ['g/h'],
                  ipBlocks: ['10.0.0.0/8'],
                  notIpBlocks: ['10.1.0.0/16'],
                  requestPrincipals: ['i'],
                  notRequestPrincipals: ['j'],
                  remoteIpBlocks: ['1.2.3.4'],
                  notRemoteIpBlocks: ['5.6.7.8'],
                },
              },
            ],
            to: [{ operation: { ports: ['80'], notPorts: ['81'], hosts: ['x'], notHosts: ['y'], methods: ['GET'], notMethods: ['PUT'], paths: ['/a'], notPaths: ['/b'] } }],
            when: [{ key: 'source.ip', values: ['10.0.0.1'], notValues: ['10.0.0.2'] }],
          },
        ],
      },
      status: { conditions },
    },
  ],
  ['security.istio.io', 'AuthorizationPolicy', { spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'waypoint' }], action: 'ALLOW' } }],
  ['security.istio.io', 'AuthorizationPolicy', { spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'waypoint' } } }],
  ['security.istio.io', 'PeerAuthentication', { spec: { selector: { matchLabels: { app: 'db' } }, mtls: { mode: 'STRICT' }, portLevelMtls: { '8080': { mode: 'PERMISSIVE' } } } }],
];

describe('charts/base CRDs are structural, as Istio generates them', () => {
  test('every version has an openAPIV3Schema of type object with a typed spec, never x-kubernetes-preserve-unknown-fields at the top of spec', () => {
    for (const crd of crds) {
      for (const v of specOf(crd).versions) {
        const at = `${crd.metadata.name} ${v.name}`;
        const root = v.schema?.openAPIV3Schema;
        expect({ at, type: root?.['type'] }).toEqual({ at, type: 'object' });
        const spec = (root?.['properties'] as Record<string, Schema> | undefined)?.['spec'];
        expect({ at, type: spec?.['type'], preserve: spec?.['x-kubernetes-preserve-unknown-fields'] }).toEqual({ at, type: 'object', preserve: undefined });
        expect({ at, typedFields: Object.keys((spec?.['properties'] as object | undefined) ?? {}).length > 0 }).toEqual({ at, typedFields: true });
        expect({ at, problems: structuralProblems(root) }).toEqual({ at, problems: [] });
      }
    }
  });

  test('each rendered CRD is the vendored one unchanged, but for the chart labels', () => {
    expect(crds.map((c) => c.metadata.name).sort()).toEqual(vendored.map((c) => c.metadata.name).sort());
    for (const crd of crds) {
      const source = vendored.find((c) => c.metadata.name === crd.metadata.name)!;
      expect(crd['spec']).toEqual(source['spec']);
      expect(crd.metadata.annotations).toEqual(source.metadata.annotations);
      expect(crd.metadata.labels).toMatchObject({ 'app.kubernetes.io/part-of': 'istio', 'app.kubernetes.io/name': 'istiod-ts' });
    }
  });

  test('charts/base/README.md records where the vendored file comes from: repository, path and commit', () => {
    const readme = fs.readFileSync(README, 'utf8');
    expect(readme).toContain('istio/istio');
    expect(readme).toContain('manifests/charts/base/files/crd-all.gen.yaml');
    expect(readme).toMatch(/\b[0-9a-f]{40}\b/);
    expect(fs.readFileSync(VENDORED, 'utf8').split('\n', 1)[0]).toMatch(/Generated by Cue OpenAPI generator/);
  });

  test.each(FULL_OBJECTS)('no field istiod-ts reads or writes on a %s %s is pruned, in any served version', (group, kind, object) => {
    const versions = crds.map(specOf).find((s) => s.group === group && s.names.kind === kind)!.versions;
    for (const { name } of versions) {
      expect({ version: name, pruned: prunedPaths(object, schemaOf(group, kind, name), kind) }).toEqual({ version: name, pruned: [] });
    }
  });

  test('the pruning check does see a field the schema does not name', () => {
    const schema = schemaOf('networking.istio.io', 'ServiceEntry', 'v1');
    expect(prunedPaths({ spec: { hosts: ['a'], hostz: ['typo'] } }, schema, 'ServiceEntry')).toEqual(['ServiceEntry.spec.hostz']);
  });
});
