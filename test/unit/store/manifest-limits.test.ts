// The limits parseManifest enforces on a file: nesting depth and number of objects. Each limit is
// hit exactly: the largest allowed input loads, one more is refused with a reason naming it.

import { exceedsDepth } from '../../../src/store/local/depth';
import {
  MAX_MANIFEST_DEPTH,
  MAX_MANIFEST_OBJECTS,
  ManifestError,
  parseManifest,
  TOO_DEEP,
  TOO_MANY_OBJECTS,
} from '../../../src/store/local/manifest';

function refusal(text: string, file: string): ManifestError {
  try {
    parseManifest(text, file);
  } catch (err) {
    if (err instanceof ManifestError) return err;
    throw err;
  }
  throw new Error('expected a ManifestError');
}

const HEAD = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'a' } };

/** A ConfigMap as JSON whose mapping nests `depth` levels in all (the document is level 1). */
function jsonAtDepth(depth: number): string {
  const inner = depth - 1; // levels under the document's own mapping
  return `${JSON.stringify(HEAD).slice(0, -1)},"x":${'{"a":'.repeat(inner)}1${'}'.repeat(inner)}}`;
}

/** The same as YAML: block mappings for the first levels, then flow lists. */
function yamlAtDepth(depth: number): string {
  const block = Math.min(depth - 1, 20);
  const flow = depth - block;
  const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata: {name: c, namespace: a}'];
  for (let i = 0; i < block; i++)
    lines.push(`${'  '.repeat(i)}k${i}:${i === block - 1 ? ` ${'['.repeat(flow)}1${']'.repeat(flow)}` : ''}`);
  return `${lines.join('\n')}\n`;
}

describe(`MAX_MANIFEST_DEPTH (${MAX_MANIFEST_DEPTH})`, () => {
  test('a JSON document exactly at the limit loads; one level more is refused naming the limit', () => {
    expect(parseManifest(jsonAtDepth(MAX_MANIFEST_DEPTH), 'ok.json').objects).toHaveLength(1);
    expect(refusal(jsonAtDepth(MAX_MANIFEST_DEPTH + 1), 'deep.json')).toMatchObject({
      file: 'deep.json',
      line: 1,
      reason: TOO_DEEP,
    });
    expect(TOO_DEEP).toContain(`MAX_MANIFEST_DEPTH (${MAX_MANIFEST_DEPTH} levels)`);
  });

  test('a YAML document exactly at the limit loads; one level more is refused naming the limit', () => {
    expect(parseManifest(yamlAtDepth(MAX_MANIFEST_DEPTH), 'ok.yaml').objects).toHaveLength(1);
    expect(refusal(yamlAtDepth(MAX_MANIFEST_DEPTH + 1), 'deep.yaml').reason).toBe(TOO_DEEP);
  });

  test('YAML nested a million levels is refused by the parser with its line, not by a stack overflow', () => {
    const text = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nx: ${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}\n`;
    expect(refusal(text, 'deep.yaml')).toMatchObject({ line: 4, reason: TOO_DEEP });
  });

  test('JSON nested a million levels is refused naming the limit', () => {
    expect(refusal(jsonAtDepth(1_000_000), 'deep.json').reason).toBe(TOO_DEEP);
  });

  test('depth built from an alias (a shallow anchor used deep down) counts as the value the store would hold', () => {
    const half = 60;
    const text = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nanchor: &x ${'['.repeat(half)}1${']'.repeat(half)}\nuse: ${'['.repeat(half)}*x${']'.repeat(half)}\n`;
    expect(refusal(text, 'alias.yaml').reason).toBe(TOO_DEEP);
  });

  test('exceedsDepth counts a top-level mapping as level 1 and scalars as no level', () => {
    expect(exceedsDepth('text', 0)).toBe(false);
    expect(exceedsDepth({}, 1)).toBe(false);
    expect(exceedsDepth({ a: [{}] }, 3)).toBe(false);
    expect(exceedsDepth({ a: [{}] }, 2)).toBe(true);
  });
});

describe(`MAX_MANIFEST_OBJECTS (${MAX_MANIFEST_OBJECTS})`, () => {
  const cm = (i: number) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c${i}, namespace: a}\n`;

  test('a file with exactly the limit of documents loads; one more document is refused naming the limit', () => {
    const docs = Array.from({ length: MAX_MANIFEST_OBJECTS }, (_, i) => cm(i));
    expect(parseManifest(docs.join('---\n'), 'ok.yaml').objects).toHaveLength(MAX_MANIFEST_OBJECTS);
    docs.push(cm(MAX_MANIFEST_OBJECTS));
    const err = refusal(docs.join('---\n'), 'many.yaml');
    expect(err.reason).toBe(TOO_MANY_OBJECTS);
    expect(err.reason).toContain(`MAX_MANIFEST_OBJECTS (${MAX_MANIFEST_OBJECTS})`);
  });

  test('empty documents count, so a file of bare "---" lines stops at the limit', () => {
    expect(refusal('---\n'.repeat(MAX_MANIFEST_OBJECTS + 2), 'dashes.yaml').reason).toBe(TOO_MANY_OBJECTS);
  });

  test('List items count like documents', () => {
    const items = (n: number) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: Array.from({ length: n }, (_, i) => ({ ...HEAD, metadata: { name: `c${i}`, namespace: 'a' } })),
      });
    expect(parseManifest(items(MAX_MANIFEST_OBJECTS), 'ok.json').objects).toHaveLength(MAX_MANIFEST_OBJECTS);
    expect(refusal(items(MAX_MANIFEST_OBJECTS + 1), 'list.json').reason).toBe(TOO_MANY_OBJECTS);
  });
});

describe('duplicate keys', () => {
  test('a mapping of 100,000 distinct keys loads: duplicates are found with a Set, not by rescanning the mapping per key', () => {
    const keys = Array.from({ length: 100_000 }, (_, i) => `  k${i}: v`).join('\n');
    const { objects } = parseManifest(
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: wide, namespace: a}\ndata:\n${keys}\n`,
      'wide.yaml',
    );
    expect(Object.keys(objects[0]?.object.data ?? {})).toHaveLength(100_000);
  });

  test('a key repeated inside a nested mapping is refused with the key and the line of the repeat', () => {
    const err = refusal(
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  list:\n  - {a: 1, b: 2}\n  - a: 1\n    a: 2\n',
      'dup.yaml',
    );
    expect(err).toMatchObject({ line: 8, reason: 'Map keys must be unique; "a" appears twice' });
  });
});

describe('keys that are not plain values', () => {
  test.each([
    ['a list', 'data:\n  ? [a, b]\n  : v\n', 'not a list'],
    ['a mapping', 'data:\n  ? {a: 1}\n  : v\n', 'not a mapping'],
    ['an alias', 'x: &k key\ndata:\n  *k : v\n', 'not an alias'],
  ])('a mapping key that is %s is refused with its line, and no process warning is printed', (_what, body, reason) => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      const err = refusal(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\n${body}`, 'keys.yaml');
      expect(err.reason).toContain(`a mapping key must be a plain value, ${reason}`);
      expect(err.line).toBeGreaterThanOrEqual(4);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });
});
