// charts/istiod's node untaint values (taint.enabled, taint.namespace, taint.name, as Istio's
// chart has them): what they render, read back the way istiod-ts serve reads them.

import { parseServeOptions } from '../../../src/config/options';
import { helmLint, helmTemplate, helmTemplateRaw } from '../../support/helm';
import { deploymentOf, resolvedEnv, rulesOf } from './istiod-objects';
import { kubeSchemaProblems } from './kube-schema';

const NS = 'istio-system';
const render = (values: Record<string, unknown> = {}) => helmTemplate('istiod', { namespace: NS, values });
const optionsOf = (values: Record<string, unknown> = {}) => {
  const { container } = deploymentOf(render(values));
  return parseServeOptions(container.args.slice(1), resolvedEnv(container, NS));
};
const nodeVerbs = (values: Record<string, unknown> = {}) =>
  rulesOf(render(values), 'ClusterRole')
    .filter((r) => r.apiGroups.includes('') && r.resources.includes('nodes'))
    .flatMap((r) => r.verbs)
    .sort();

describe('charts/istiod taint values', () => {
  test('by default the controller is off, istio-cni is looked for in the release namespace, and nodes are only listed and watched', () => {
    const options = optionsOf();
    expect(options.env.PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS).toBe(false);
    expect(options.flags.cniNamespace).toBe(NS);
    const env = deploymentOf(render()).container.env.map((e) => e.name);
    expect(env).not.toContain('PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS');
    expect(nodeVerbs()).toEqual(['list', 'watch']);
  });

  test('taint.enabled turns the controller on with the default taint cni.istio.io/not-ready', () => {
    const options = optionsOf({ taint: { enabled: true } });
    expect(options.env.PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS).toBe(true);
    expect(options.env.PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME).toBe('cni.istio.io/not-ready');
  });

  test('taint.enabled grants node get/list/watch/patch, and only then', () => {
    expect(nodeVerbs({ taint: { enabled: true } })).toEqual(['get', 'list', 'list', 'patch', 'watch', 'watch']);
    expect(nodeVerbs({ taint: { enabled: false, namespace: 'kube-system' } })).toEqual(['list', 'watch']);
  });

  test('taint.name is the taint key the controller removes', () => {
    const options = optionsOf({ taint: { enabled: true, name: 'example.com/cni-not-ready' } });
    expect(options.env.PILOT_NODE_UNTAINT_CONTROLLERS_TAINT_NAME).toBe('example.com/cni-not-ready');
  });

  test('taint.namespace becomes --cniNamespace', () => {
    const { container } = deploymentOf(render({ taint: { enabled: true, namespace: 'kube-system' } }));
    expect(container.args).toContain('--cniNamespace=kube-system');
    expect(optionsOf({ taint: { enabled: true, namespace: 'kube-system' } }).flags.cniNamespace).toBe('kube-system');
  });

  test('the same keys under pilot. mean the same', () => {
    expect(render({ pilot: { taint: { enabled: true, namespace: 'kube-system' } } })).toEqual(
      render({ taint: { enabled: true, namespace: 'kube-system' } }),
    );
  });

  test('an env entry of the same name replaces the chart variable instead of repeating it', () => {
    const env = deploymentOf(render({ taint: { enabled: true }, env: { PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS: false } }))
      .container.env;
    expect(env.filter((e) => e.name === 'PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS')).toEqual([
      { name: 'PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS', value: 'false' },
    ]);
  });

  test('enabled with a namespace passes helm lint --strict and renders objects valid for the Kubernetes API', () => {
    const values = { taint: { enabled: true, namespace: 'kube-system' } };
    const r = helmLint('istiod', values);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    for (const o of render(values)) expect({ object: `${o.kind}/${o.metadata.name}`, problems: kubeSchemaProblems(o) }).toEqual({ object: `${o.kind}/${o.metadata.name}`, problems: [] });
  });

  test.each<[string, Record<string, unknown>]>([
    ['taint.enabled as text', { taint: { enabled: 'yes' } }],
    ['a taint.namespace that is not a namespace name', { taint: { namespace: 'Kube_System' } }],
    ['an empty taint.name', { taint: { enabled: true, name: '' } }],
  ])('the values schema refuses %s', (_name, values) => {
    const r = helmTemplateRaw('istiod', { values });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/taint/);
  });
});
