import { NamespaceFilter } from '../../../src/store/kube/namespace-filter';

test('without discoverySelectors every namespace is selected', () => {
  const f = new NamespaceFilter(undefined);
  expect(f.allows('anything')).toBe(true);
  expect(f.namespaceSeen('a', {})).toEqual({ added: [], removed: [] });
});

test('cluster-scoped objects always pass', () => {
  const f = new NamespaceFilter([{ matchLabels: { mesh: 'on' } }]);
  expect(f.allows(undefined)).toBe(true);
  expect(f.allows('')).toBe(true);
});

test('a namespace is selected when any selector matches its labels', () => {
  const f = new NamespaceFilter([
    { matchLabels: { team: 'a' } },
    { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] },
  ]);
  f.namespaceSeen('a', { team: 'a' });
  f.namespaceSeen('prod', { env: 'prod' });
  f.namespaceSeen('dev', { env: 'dev' });
  expect(['a', 'prod', 'dev', 'unknown'].map((n) => f.allows(n))).toEqual([true, true, false, false]);
});

test('an empty selector selects every namespace', () => {
  const f = new NamespaceFilter([{}]);
  f.namespaceSeen('x', {});
  expect(f.allows('x')).toBe(true);
});

test('a label change that enters or leaves the selection is reported', () => {
  const f = new NamespaceFilter([{ matchLabels: { mesh: 'on' } }]);
  expect(f.namespaceSeen('a', {})).toEqual({ added: [], removed: [] });
  expect(f.namespaceSeen('a', { mesh: 'on' })).toEqual({ added: ['a'], removed: [] });
  expect(f.namespaceSeen('a', { mesh: 'on', other: 'x' })).toEqual({ added: [], removed: [] });
  expect(f.namespaceSeen('a', {})).toEqual({ added: [], removed: ['a'] });
});

test('new selectors report the namespaces that entered and left', () => {
  const f = new NamespaceFilter([{ matchLabels: { mesh: 'on' } }]);
  f.namespaceSeen('a', { mesh: 'on' });
  f.namespaceSeen('b', { team: 'b' });
  expect(f.setSelectors([{ matchLabels: { team: 'b' } }])).toEqual({ added: ['b'], removed: ['a'] });
  expect(f.setSelectors(undefined)).toEqual({ added: ['a'], removed: [] });
});

test('a deleted namespace is no longer selected', () => {
  const f = new NamespaceFilter([{}]);
  f.namespaceSeen('a', {});
  f.namespaceGone('a');
  expect(f.allows('a')).toBe(false);
});
