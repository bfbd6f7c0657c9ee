// The test API server applies JSON patches as the real one does (json-patch v4), which status
// writers guarded by a `test` op rely on.

import { jsonPatch } from '../../support/apiserver/patch';

test('a missing key of an object tests as null, and only as null', () => {
  expect(jsonPatch({ status: {} }, [{ op: 'test', path: '/status/addresses', value: null }])).toEqual({ status: {} });
  expect(() => jsonPatch({ status: {} }, [{ op: 'test', path: '/status/addresses', value: [] }])).toThrow(
    'test failed at /status/addresses',
  );
  expect(jsonPatch({}, [{ op: 'test', path: '/status', value: null }])).toEqual({});
});

test('a test under a missing parent is an error', () => {
  expect(() => jsonPatch({}, [{ op: 'test', path: '/status/addresses', value: null }])).toThrow(
    'path /status/addresses does not exist',
  );
});

test('replace sets a missing key of an object, but not a missing array index', () => {
  expect(jsonPatch({ status: {} }, [{ op: 'replace', path: '/status/addresses', value: [] }])).toEqual({
    status: { addresses: [] },
  });
  expect(() => jsonPatch({ a: [1] }, [{ op: 'replace', path: '/a/3', value: 2 }])).toThrow('does not exist');
});

test('test compares JSON values: object key order does not matter, array order does', () => {
  const doc = { status: { addresses: [{ value: '240.240.0.1', host: 'a' }] } };
  expect(() =>
    jsonPatch(doc, [{ op: 'test', path: '/status/addresses', value: [{ host: 'a', value: '240.240.0.1' }] }]),
  ).not.toThrow();
  expect(() => jsonPatch({ a: [1, 2] }, [{ op: 'test', path: '/a', value: [2, 1] }])).toThrow('test failed at /a');
});
