// `helm upgrade istiod` from Istio's istiod chart to charts/istiod (the README's "in place of
// istiod") is refused by the API server if any object keeps its kind and name but changes a field
// the API server does not let change. This renders charts/istiod beside Istio's chart, rendered
// at istio/istio 86c9f01fd735fb01d8192f5bcaf0d424afb7f14c with the same values
// (istiod-upstream-render/README.md), and compares every such field of every object both render.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { helmTemplate, type Rendered } from '../../support/helm';

const NS = 'istio-system';
const UPSTREAM_DIR = path.join(__dirname, 'istiod-upstream-render');

/**
 * The fields the API server refuses to change on update, per kind, as paths into the object.
 * Deployment and PodDisruptionBudget selectors (the PDB's became mutable only in Kubernetes 1.15,
 * still compared: a changed selector would also orphan the pods it protected); a Service's
 * cluster IPs; a binding's roleRef; a ConfigMap or Secret made immutable.
 */
export const IMMUTABLE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Deployment: ['spec.selector'],
  PodDisruptionBudget: ['spec.selector'],
  Service: ['spec.clusterIP', 'spec.clusterIPs'],
  RoleBinding: ['roleRef'],
  ClusterRoleBinding: ['roleRef'],
  ConfigMap: ['immutable'],
  Secret: ['immutable', 'type'],
};

/** The labels ztunnel, istio-cni and istioctl find istiod's pods and Service by. */
const SELECTED_LABELS = ['app', 'istio', 'istio.io/rev'] as const;

/** Istio's chart values of each saved rendering, given to charts/istiod as they were to Istio's. */
const CASES: readonly { file: string; release: string; values: Record<string, unknown>; kinds: readonly string[] }[] = [
  { file: 'ambient.yaml', release: 'istiod', values: { profile: 'ambient' }, kinds: ['Deployment', 'Service', 'RoleBinding', 'ClusterRoleBinding'] },
  { file: 'canary.yaml', release: 'istiod-canary', values: { profile: 'ambient', revision: 'canary' }, kinds: ['Deployment', 'Service', 'RoleBinding', 'ClusterRoleBinding'] },
  { file: 'ha.yaml', release: 'istiod', values: { profile: 'ambient', autoscaleMin: 2 }, kinds: ['Deployment', 'Service', 'PodDisruptionBudget', 'RoleBinding', 'ClusterRoleBinding'] },
];

function upstream(file: string): Rendered[] {
  return parseAllDocuments(fs.readFileSync(path.join(UPSTREAM_DIR, file), 'utf8'))
    .map((d) => d.toJS() as Rendered | null)
    .filter((o): o is Rendered => o !== null);
}

function at(object: unknown, dotted: string): unknown {
  let v = object;
  for (const key of dotted.split('.')) v = v === null || typeof v !== 'object' ? undefined : (v as Record<string, unknown>)[key];
  return v;
}

const key = (o: Rendered) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const pick = (labels: Record<string, string> | undefined) => Object.fromEntries(SELECTED_LABELS.map((l) => [l, labels?.[l]]));

describe.each(CASES)('helm upgrade from Istio’s istiod chart ($file)', ({ file, release, values, kinds }) => {
  const theirs = upstream(file);
  const ours = helmTemplate('istiod', { release, namespace: NS, values });
  const ourByKey = new Map(ours.map((o) => [key(o), o]));
  const pairs = theirs.flatMap((o) => {
    const mine = ourByKey.get(key(o));
    return mine ? [{ theirs: o, ours: mine }] : [];
  });

  test('both charts render the objects compared (the comparison is not vacuous)', () => {
    for (const kind of kinds) expect({ kind, both: pairs.some((p) => p.theirs.kind === kind) }).toEqual({ kind, both: true });
  });

  test('every immutable field of every object of the same kind and name is equal', () => {
    const differ: string[] = [];
    for (const p of pairs) {
      for (const field of IMMUTABLE_FIELDS[p.theirs.kind] ?? []) {
        const [a, b] = [at(p.theirs, field), at(p.ours, field)];
        if (JSON.stringify(a) !== JSON.stringify(b)) differ.push(`${key(p.theirs)} ${field}: Istio's ${JSON.stringify(a)}, ours ${JSON.stringify(b)}`);
      }
    }
    expect(differ).toEqual([]);
  });

  test('the validating webhook configuration keeps Istio’s name, and the webhook its name', () => {
    const names = (objects: readonly Rendered[]) => objects.filter((o) => o.kind === 'ValidatingWebhookConfiguration').map((o) => ({ name: o.metadata.name, webhooks: (o['webhooks'] as { name: string }[]).map((w) => w.name) }));
    expect(names(theirs).length).toBeGreaterThan(0);
    expect(names(ours)).toEqual(names(theirs));
  });

  test('the Deployment, its pods and the Service carry the labels istioctl and the peers select on, as Istio’s', () => {
    for (const kind of ['Deployment', 'Service']) {
      const p = pairs.find((x) => x.theirs.kind === kind)!;
      expect({ kind, labels: pick(p.ours.metadata.labels) }).toEqual({ kind, labels: pick(p.theirs.metadata.labels) });
    }
    const deployment = pairs.find((x) => x.theirs.kind === 'Deployment')!;
    const podLabels = (o: Rendered) => at(o, 'spec.template.metadata.labels') as Record<string, string>;
    expect(pick(podLabels(deployment.ours))).toEqual(pick(podLabels(deployment.theirs)));
    // Our own selector still selects our own pods.
    const selector = at(deployment.ours, 'spec.selector.matchLabels') as Record<string, string>;
    expect(podLabels(deployment.ours)).toMatchObject(selector);
  });
});
