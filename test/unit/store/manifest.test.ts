import {
  DEFAULT_NAMESPACE,
  deterministicUid,
  MAX_MANIFEST_BYTES,
  ManifestError,
  parseManifest,
} from '../../../src/store/local/manifest';

function parseError(text: string, file = 'demo/pods.yaml'): ManifestError {
  try {
    parseManifest(text, file);
  } catch (err) {
    if (err instanceof ManifestError) return err;
    throw err;
  }
  throw new Error('expected a ManifestError');
}

describe('parseManifest', () => {
  test('multi-document YAML yields every object with the line its document starts on', () => {
    const text = [
      'apiVersion: v1',
      'kind: Namespace',
      'metadata:',
      '  name: bookinfo',
      '---',
      '# a comment before the document',
      'apiVersion: v1',
      'kind: Pod',
      'metadata:',
      '  name: web',
      '  namespace: bookinfo',
      '---',
      '',
    ].join('\n');
    const { objects } = parseManifest(text, 'all.yaml');
    expect(objects.map((o) => [o.kind, o.object.metadata.name, o.line])).toEqual([
      ['Namespace', 'bookinfo', 1],
      ['Pod', 'web', 7],
    ]);
  });

  test('JSON files are read as one object', () => {
    const { objects } = parseManifest(
      '{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"a"}}',
      'svc.json',
    );
    expect(objects.map((o) => `${o.kind} ${o.object.metadata.namespace}/${o.object.metadata.name}`)).toEqual([
      'Service a/s',
    ]);
  });

  test('kind List items each become an object, whatever their kind', () => {
    const text = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: node-a}
- apiVersion: security.istio.io/v1
  kind: PeerAuthentication
  metadata: {name: default, namespace: istio-system}
`;
    const { objects } = parseManifest(text, 'list.yaml');
    expect(objects.map((o) => [o.kind, o.object.metadata.name, o.line])).toEqual([
      ['Node', 'node-a', 4],
      ['PeerAuthentication', 'default', 7],
    ]);
  });

  test('a typed list (PodList) gives its kind and apiVersion to items that omit them', () => {
    const text = `apiVersion: v1
kind: PodList
items:
- metadata: {name: p1, namespace: a}
- metadata: {name: p2, namespace: a}
`;
    const { objects } = parseManifest(text, 'pods.yaml');
    expect(objects.map((o) => [o.kind, o.object.apiVersion, o.object.kind, o.object.metadata.name])).toEqual([
      ['Pod', 'v1', 'Pod', 'p1'],
      ['Pod', 'v1', 'Pod', 'p2'],
    ]);
  });

  test('documents of kinds the store does not hold are skipped and counted', () => {
    const text = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1}
`;
    const parsed = parseManifest(text, 'x.yaml');
    expect(parsed.objects.map((o) => o.object.metadata.name)).toEqual(['web-1']);
    // The name comes along, so the report of ignored objects can say which object it is.
    expect(parsed.skipped).toEqual([{ apiVersion: 'apps/v1', kind: 'Deployment', line: 1, name: 'web' }]);
  });

  test('a served version other than the watched one is accepted (security.istio.io/v1beta1)', () => {
    const { objects } = parseManifest(
      'apiVersion: security.istio.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: {name: p, namespace: a}\n',
      'p.yaml',
    );
    expect(objects[0]?.kind).toBe('AuthorizationPolicy');
  });

  test('namespaced objects without a namespace get "default"; cluster-scoped ones lose any namespace', () => {
    const text = `apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
---
apiVersion: v1
kind: Node
metadata: {name: n, namespace: ignored}
`;
    const { objects } = parseManifest(text, 'x.yaml');
    expect(objects[0]?.object.metadata.namespace).toBe(DEFAULT_NAMESPACE);
    expect(objects[1]?.object.metadata).not.toHaveProperty('namespace');
  });

  test('uid is deterministic from kind, namespace and name unless the file sets one', () => {
    const text =
      'apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: q, namespace: a, uid: given}\n';
    const first = parseManifest(text, 'x.yaml').objects;
    const again = parseManifest(text, 'y.yaml').objects;
    expect(first[0]?.object.metadata.uid).toBe(deterministicUid('Pod', 'a', 'p'));
    expect(first[0]?.object.metadata.uid).toBe(again[0]?.object.metadata.uid);
    expect(first[0]?.object.metadata.uid).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(deterministicUid('Pod', 'a', 'p')).not.toBe(deterministicUid('Pod', 'b', 'p'));
    expect(first[1]?.object.metadata.uid).toBe('given');
  });

  test('a resourceVersion written in a file is dropped: the source assigns its own', () => {
    const { objects } = parseManifest(
      'apiVersion: v1\nkind: Pod\nmetadata: {name: p, resourceVersion: "99"}\n',
      'x.yaml',
    );
    expect(objects[0]?.object.metadata.resourceVersion).toBeUndefined();
  });

  test('empty documents and an empty file yield nothing', () => {
    expect(parseManifest('---\n---\n', 'x.yaml').objects).toEqual([]);
    expect(parseManifest('', 'x.yaml').objects).toEqual([]);
  });
});

describe('parseManifest errors name the file, the line and the reason', () => {
  test('YAML syntax error', () => {
    const err = parseError('apiVersion: v1\nkind: Pod\nmetadata:\n  name: [unclosed\n');
    expect(err.file).toBe('demo/pods.yaml');
    expect(err.line).toBeGreaterThanOrEqual(4);
    expect(err.message).toMatch(/^demo\/pods\.yaml:\d+: /);
  });

  test('a document without metadata.name, on the second document', () => {
    const err = parseError(
      'apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  namespace: a\n',
    );
    expect(err.message).toBe('demo/pods.yaml:5: Pod has no metadata.name');
  });

  test('a List item without metadata.name points at the item', () => {
    const err = parseError(
      'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: ok}\n- apiVersion: v1\n  kind: Node\n  metadata: {}\n',
    );
    expect(err.message).toBe('demo/pods.yaml:7: Node has no metadata.name');
  });

  test('missing kind and missing apiVersion', () => {
    expect(parseError('apiVersion: v1\nmetadata: {name: a}\n').message).toBe('demo/pods.yaml:1: kind is missing');
    expect(parseError('kind: Pod\nmetadata: {name: a}\n').message).toBe('demo/pods.yaml:1: apiVersion is missing');
  });

  test('a document that is not a mapping', () => {
    expect(parseError('- a\n- b\n').reason).toMatch(/not a mapping/);
  });

  test('labels must be strings (an unquoted true or number is a common slip)', () => {
    expect(parseError('apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  labels: {ready: true}\n').reason).toMatch(
      /metadata.labels must map strings to strings/,
    );
  });

  test('duplicate keys in a mapping are an error', () => {
    expect(parseError('apiVersion: v1\nkind: Pod\nkind: Pod\nmetadata: {name: a}\n').reason).toMatch(/unique/);
  });

  test('invalid JSON reports the line of the problem', () => {
    const err = parseError('{\n  "apiVersion": "v1",\n  "kind": "Pod"\n  "metadata": {}\n}\n', 'pod.json');
    expect(err.file).toBe('pod.json');
    expect(err.line).toBe(4);
  });

  test(`a file larger than MAX_MANIFEST_BYTES (${MAX_MANIFEST_BYTES}) is refused`, () => {
    const big = `# ${'x'.repeat(MAX_MANIFEST_BYTES)}\n`;
    expect(parseError(big).reason).toBe(`file is larger than ${MAX_MANIFEST_BYTES} bytes`);
  });

  test('a YAML alias bomb is refused instead of expanding', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
    ].join('\n');
    expect(parseError(bomb).reason).toMatch(/alias/i);
  });
});
