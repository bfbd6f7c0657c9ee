// The test API server's pure parts: selectors, patches, token reviews, history bound.

import { parseFieldSelector, parseLabelSelector } from '../../support/apiserver/selectors';
import { jsonPatch, mergePatch } from '../../support/apiserver/patch';
import { reviewToken, serviceAccountIdentity } from '../../support/apiserver/tokens';
import { HISTORY_LIMIT, Storage } from '../../support/apiserver/storage';

const obj = (labels: Record<string, string>, nodeName = 'n1') => ({
  metadata: { name: 'p', namespace: 'ns', labels },
  spec: { nodeName },
});

test.each([
  ['app=web', { app: 'web' }, true],
  ['app==web', { app: 'web' }, true],
  ['app!=web', { app: 'web' }, false],
  ['app!=web', {}, true],
  ['env in (a,b)', { env: 'b' }, true],
  ['env notin (a,b)', { env: 'b' }, false],
  ['env notin (a,b)', {}, true],
  ['app', { app: 'x' }, true],
  ['!app', { app: 'x' }, false],
  ['app=web,env in (a, b),!gone', { app: 'web', env: 'a' }, true],
])('label selector %s on %j is %s', (selector, labels, expected) => {
  expect(parseLabelSelector(selector)(obj(labels))).toBe(expected);
});

test('a label selector that cannot be parsed is an error naming the term', () => {
  expect(() => parseLabelSelector('a b c')).toThrow('unable to parse requirement: "a b c"');
});

test('field selectors support =, == and != on the selectable fields', () => {
  expect(parseFieldSelector('spec.nodeName=n1,metadata.namespace==ns')(obj({}))).toBe(true);
  expect(parseFieldSelector('metadata.name!=p')(obj({}))).toBe(false);
  expect(() => parseFieldSelector('spec.other=1')).toThrow('field label not supported: spec.other');
});

test('merge patch: null deletes, objects merge, arrays replace', () => {
  expect(mergePatch({ a: 1, b: { c: 2, d: 3 }, e: [1, 2] }, { a: null, b: { c: 4 }, e: [3] })).toEqual({
    b: { c: 4, d: 3 },
    e: [3],
  });
});

test('JSON patch: add, replace, remove, test; a failed test is an error', () => {
  expect(
    jsonPatch({ a: [1], b: 'x' }, [
      { op: 'add', path: '/a/-', value: 2 },
      { op: 'replace', path: '/b', value: 'y' },
      { op: 'remove', path: '/a/0' },
    ]),
  ).toEqual({ a: [2], b: 'y' });
  expect(() => jsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }])).toThrow('test failed at /a');
});

test('a token review answers the user with pod extras for the requested audience only', () => {
  const tokens = new Map([
    [
      't',
      serviceAccountIdentity({
        namespace: 'ns',
        serviceAccount: 'sa',
        podName: 'p',
        podUid: 'u',
        audiences: ['istio-ca'],
      }),
    ],
  ]);
  expect(reviewToken(tokens, 't', ['istio-ca'])).toMatchObject({
    authenticated: true,
    audiences: ['istio-ca'],
    user: {
      username: 'system:serviceaccount:ns:sa',
      extra: { 'authentication.kubernetes.io/pod-name': ['p'], 'authentication.kubernetes.io/pod-uid': ['u'] },
    },
  });
  expect(reviewToken(tokens, 't', ['other']).authenticated).toBe(false);
  expect(reviewToken(tokens, 'nope', undefined)).toEqual({
    authenticated: false,
    error: '[invalid bearer token, token lookup failed]',
  });
});

test(`the event history keeps at most ${HISTORY_LIMIT} events; older resourceVersions are expired`, () => {
  const s = new Storage();
  const start = s.currentRv();
  for (let i = 0; i <= HISTORY_LIMIT; i++)
    s.write('/configmaps', { metadata: { name: `c${i % 10}`, namespace: 'n' } }, 'MODIFIED');
  expect(s.eventsSince(start)).toBeUndefined();
  expect(s.eventsSince(s.currentRv() - 5)).toHaveLength(5);
});

test('a list page starts after the continue key, keeps list order, copies only the page and counts what remains', () => {
  const s = new Storage();
  for (const name of ['c', 'a', 'e', 'b', 'd']) s.write('pods', { metadata: { name, namespace: 'ns' } }, 'ADDED');
  s.write('pods', { metadata: { name: 'z', namespace: 'other' } }, 'ADDED');
  const inNs = (o: { metadata: { namespace?: string } }) => o.metadata.namespace === 'ns';
  const first = s.page('pods', '', 2, inNs);
  expect(first.items.map((o) => o.metadata.name)).toEqual(['a', 'b']);
  expect(first).toMatchObject({ more: true, remaining: 3 });
  const rest = s.page('pods', 'ns/b', 10, inNs);
  expect(rest.items.map((o) => o.metadata.name)).toEqual(['c', 'd', 'e']);
  expect(rest).toMatchObject({ more: false, remaining: 0 });
  // A page is a copy: changing it changes nothing stored.
  rest.items[0]!.metadata.name = 'changed';
  expect(s.page('pods', 'ns/b', 1, inNs).items[0]!.metadata.name).toBe('c');
  // A key added or removed after a page is seen by the next one.
  s.write('pods', { metadata: { name: 'bb', namespace: 'ns' } }, 'ADDED');
  s.remove('pods', 'ns', 'd');
  expect(s.page('pods', 'ns/b', 10, inNs).items.map((o) => o.metadata.name)).toEqual(['bb', 'c', 'e']);
});
