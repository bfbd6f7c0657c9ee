// charts/base takes a values file written for Istio's base chart unchanged, and refuses a
// misspelt key; global stays open, since install scripts pass the same global.* to every chart.

import * as path from 'node:path';
import { helmTemplate, helmTemplateRaw } from '../../support/helm';

const UPSTREAM_BASE = path.join(__dirname, 'values', 'upstream-base.yaml');

describe('charts/base values', () => {
  test("an Istio base chart values file renders exactly what the defaults render", () => {
    expect(helmTemplate('base', { valuesFiles: [UPSTREAM_BASE] })).toEqual(helmTemplate('base'));
  });

  test('global.resourceScope namespace renders nothing, since every object of the chart is cluster-scoped', () => {
    expect(helmTemplate('base', { values: { global: { resourceScope: 'namespace' } } })).toEqual([]);
  });

  test.each<[string, Record<string, unknown>, RegExp]>([
    ['a misspelt top-level key', { defaultRevison: 'canary' }, /at '': additional properties 'defaultRevison' not allowed/],
    ['a misspelt key under base', { base: { excludeCRDs: [] } }, /at '\/base': additional properties 'excludeCRDs' not allowed/],
    ['a resourceScope Istio does not have', { global: { resourceScope: 'some' } }, /at '\/global\/resourceScope'/],
  ])('refuses %s, naming it', (_name, values, message) => {
    const r = helmTemplateRaw('base', { values });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });
});
