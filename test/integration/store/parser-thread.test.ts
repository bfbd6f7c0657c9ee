// The parser thread's own limits: a file that takes too long or needs too much heap is refused
// with the limit's name, and the thread that replaces it parses the files after it.

import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { LOCAL_PARSE_TIMEOUT_MS, LOCAL_PARSER_HEAP_MB, ManifestParser } from '../../../src/store/local/parser-thread';
import { configMap, TempFolder } from './folder';

/** About `bytes` of multi-document YAML pods: seconds of parsing and ~33x its size in heap. */
function pods(bytes: number): string {
  const doc = (i: number) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-${i}\n  namespace: ns\n  annotations: {note: "${'x'.repeat(600)}"}\nspec:\n  nodeName: node-${i % 20}\n---\n`;
  const out: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) size += out[out.push(doc(i)) - 1]!.length;
  return out.join('');
}

describe('ManifestParser', () => {
  let folder: TempFolder;
  let parser: ManifestParser | undefined;
  beforeEach(() => (folder = new TempFolder()));
  afterEach(async () => {
    await parser?.close();
    folder.cleanup();
  });
  const file = (rel: string, text: string) => {
    writeFileSync(path.join(folder.dir, rel), text);
    return [rel, path.join(folder.dir, rel)] as const;
  };

  test('objects come back fingerprinted, and content equal to the known hash is answered unchanged without parsing', async () => {
    parser = new ManifestParser();
    const [rel, abs] = file('a.yaml', configMap('a', '1'));
    const first = await parser.parse(rel, abs, undefined);
    expect(first).toMatchObject({
      type: 'parsed',
      objects: [{ kind: 'ConfigMap', fingerprint: expect.any(String) as unknown }],
    });
    const hash = first.type === 'parsed' ? first.hash : '';
    expect(await parser.parse(rel, abs, hash)).toMatchObject({ type: 'unchanged', hash });
    expect(await parser.parse('gone.yaml', path.join(folder.dir, 'gone.yaml'), undefined)).toMatchObject({
      type: 'missing',
    });
  });

  test(`a file still parsing after LOCAL_PARSE_TIMEOUT_MS (${LOCAL_PARSE_TIMEOUT_MS} ms by default) is refused naming the limit; the next file is parsed by a new thread`, async () => {
    parser = new ManifestParser({ timeoutMs: 50 });
    const slow = parser.parse(...file('slow.yaml', pods(4e6)), undefined);
    const next = parser.parse(...file('next.yaml', configMap('n', '1')), undefined);
    expect(await slow).toMatchObject({
      type: 'failed',
      message: 'parsing took longer than LOCAL_PARSE_TIMEOUT_MS (50 ms)',
      objects: [],
    });
    expect(await next).toMatchObject({ type: 'parsed', objects: [{ object: { metadata: { name: 'n' } } }] });
  });

  test(`a file that needs more than LOCAL_PARSER_HEAP_MB (${LOCAL_PARSER_HEAP_MB} MB by default) is refused naming the limit`, async () => {
    parser = new ManifestParser({ heapMb: 32 });
    const big = parser.parse(...file('big.yaml', pods(4e6)), undefined);
    const next = parser.parse(...file('next.yaml', configMap('n', '1')), undefined);
    expect(await big).toMatchObject({
      type: 'failed',
      message: 'parsing needs more than LOCAL_PARSER_HEAP_MB (32 MB) of heap',
    });
    expect(await next).toMatchObject({ type: 'parsed' });
  });

  test('close answers the jobs still waiting as stopped', async () => {
    parser = new ManifestParser();
    const pending = parser.parse(...file('a.yaml', pods(1e6)), undefined);
    await parser.close();
    expect(await pending).toEqual({ type: 'stopped' });
  });
});
