// charts/base takes a values file written for Istio's base chart unchanged, and refuses a
// misspelt key; global stays open, since install scripts pass the same global.* to every chart.

import * as path from 'node:path';
import { helmTemplate, helmTemplateRaw } from '../../support/helm';

const UPSTREAM_BASE = path.join(__dirname, 'values', 'upstream-base.yaml');

describe('charts/base values', () => {
  test("an Istio base chart values file renders exactly what the defaults render", () => {
    expect(helmTemplate('base', { valuesFiles: [UPSTREAM_BASE] })).toEqual(helmTemplate('base'));
  });

  test('global.resourceScope namespace renders only the reader ServiceAccount, the one namespaced object; cluster all the rest', () => {
    const name = (o: { kind: string; metadata: { name: string } }) => `${o.kind}/${o.metadata.name}`;
    const namespaced = helmTemplate('base', { values: { global: { resourceScope: 'namespace' } } });
    const cluster = helmTemplate('base', { values: { global: { resourceScope: 'cluster' } } });
    expect(namespaced.map(name)).toEqual(['ServiceAccount/istio-reader-service-account']);
    expect([...cluster, ...namespaced].map(name).sort()).toEqual(helmTemplate('base').map(name).sort());
  });

  test.each([
    ['global.enableReaderRBAC false', { global: { enableReaderRBAC: false } }],
    ['another reader account named in global.readerServiceAccount', { global: { readerServiceAccount: { name: 'reader', namespace: 'ops' } } }],
  ])('%s leaves the reader ServiceAccount out, as Istio’s chart', (_what, values) => {
    expect(helmTemplate('base', { values }).filter((o) => o.kind === 'ServiceAccount')).toEqual([]);
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
