// Local mode against files an attacker or a careless operator could leave in --configDir, and
// against the ways editors and scripts really save files. A file that cannot be loaded is listed
// (the /debug/localconfig page shows LocalSource.errors()) and every other file keeps reloading.

import { renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { logs } from '../../../src/log/logger';
import { LocalSource } from '../../../src/store/local/local-source';
import { MAX_MANIFEST_BYTES, MAX_MANIFEST_DEPTH, MAX_MANIFEST_OBJECTS } from '../../../src/store/local/manifest';
import { MemoryStore } from '../../../src/store/memory-store';
import { configMap, TempFolder } from './folder';

/**
 * How long a watched change may take to reach the store: the debounce (50 ms here) and one
 * reload, with a wide margin for a loaded machine. Node 20's recursive fs.watch on Linux polls
 * every file every 5 s, so a watcher built on it misses this deadline most of the time.
 */
const WATCH_DEADLINE_MS = 1_500;
/** Longer than any test: a change seen in time was seen by the watcher, not by the rescan. */
const NO_RESCAN_MS = 3_600_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function within(store: MemoryStore, ms: number, what: string, check: () => boolean): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`not seen within ${ms} ms: ${what}`));
    }, ms);
    const off = store.subscribe(() => {
      if (!check()) return;
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

/** A JSON ConfigMap whose `deep` field nests `levels` objects. */
function deepJson(levels: number): string {
  return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","namespace":"apps"},"deep":${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}`;
}

/** About `bytes` of multi-document YAML: pods of ~1 KB each. */
function podsManifest(bytes: number): { text: string; pods: number } {
  const pad = 'x'.repeat(600);
  const docs: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes - 1100; i++) {
    const doc = `apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-${i}\n  namespace: ns-${i % 50}\n  labels: {app: app-${i % 100}}\n  annotations: {note: "${pad}"}\nspec:\n  nodeName: node-${i % 20}\n  serviceAccountName: sa-${i % 10}\n  containers:\n  - name: app\n    image: registry.example/app:1.0\n    ports: [{containerPort: 8080}]\nstatus:\n  podIP: 10.0.${(i >> 8) & 255}.${i & 255}\n  phase: Running\n---\n`;
    docs.push(doc);
    size += doc.length;
  }
  return { text: docs.join(''), pods: docs.length };
}

describe('LocalSource against hostile and awkward files', () => {
  let folder: TempFolder;
  let store: MemoryStore;
  let source: LocalSource | undefined;

  beforeEach(() => {
    folder = new TempFolder();
    store = new MemoryStore();
  });

  afterEach(async () => {
    await source?.stop();
    source = undefined;
    logs.setDestination(process.stderr);
    folder.cleanup();
  });

  const start = async () => {
    source = new LocalSource({ dir: folder.dir, writer: store, debounceMs: 50, rescanIntervalMs: NO_RESCAN_MS });
    await source.start();
    return source;
  };
  const value = (name: string) => store.get('ConfigMap', 'apps', name)?.data?.['value'];
  const abs = (rel: string) => path.join(folder.dir, rel);

  test(`a manifest nested deeper than MAX_MANIFEST_DEPTH (${MAX_MANIFEST_DEPTH}) is listed as failed naming the limit, logged once, and other files keep reloading`, async () => {
    folder.write('deep.json', deepJson(4000));
    folder.write(
      'deep.yaml',
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep-yaml, namespace: apps}\ndata:\n  x: ${'['.repeat(4000)}${']'.repeat(4000)}\n`,
    );
    folder.write('ok.yaml', configMap('ok', '1'));
    const lines: string[] = [];
    logs.setDestination({ write: (line: string) => void lines.push(line) });
    const s = await start();
    const reason = `nested deeper than MAX_MANIFEST_DEPTH (${MAX_MANIFEST_DEPTH} levels)`;
    expect(s.errors()).toEqual([
      { file: 'deep.json', line: 1, message: expect.stringContaining(reason) as unknown },
      { file: 'deep.yaml', line: expect.any(Number) as unknown, message: expect.stringContaining(reason) as unknown },
    ]);
    expect(value('ok')).toBe('1');

    folder.write('ok.yaml', configMap('ok', '2'));
    await within(store, WATCH_DEADLINE_MS, 'ok updated to 2', () => value('ok') === '2');
    folder.write('later.yaml', configMap('later', '1'));
    await within(store, WATCH_DEADLINE_MS, 'later added', () => value('later') === '1');
    await s.rescan();
    expect(lines.filter((l) => l.includes('deep.json') && l.includes('MAX_MANIFEST_DEPTH'))).toHaveLength(1);
    expect(store.get('ConfigMap', 'apps', 'deep')).toBeUndefined();
  });

  test(`a file with more than MAX_MANIFEST_OBJECTS (${MAX_MANIFEST_OBJECTS}) objects, and one over MAX_MANIFEST_BYTES, are listed naming the limit`, async () => {
    folder.write('many.yaml', `${configMap('m', '1')}---\n`.repeat(MAX_MANIFEST_OBJECTS + 1));
    folder.write('huge.yaml', `# ${'x'.repeat(MAX_MANIFEST_BYTES)}\n`);
    folder.write('ok.yaml', configMap('ok', '1'));
    const s = await start();
    expect(s.errors()).toEqual([
      { file: 'huge.yaml', line: 1, message: expect.stringContaining(`${MAX_MANIFEST_BYTES} bytes`) as unknown },
      {
        file: 'many.yaml',
        line: expect.any(Number) as unknown,
        message: expect.stringContaining(`MAX_MANIFEST_OBJECTS (${MAX_MANIFEST_OBJECTS})`) as unknown,
      },
    ]);
    expect(value('ok')).toBe('1');
    expect(value('m')).toBeUndefined();
  });

  test('an 8 MB manifest is parsed off the event loop: a timer due during the load fires before the load ends, and every pod arrives', async () => {
    const { text, pods } = podsManifest(7.9e6);
    folder.write('big.yaml', text);
    let fired = false;
    const timer = setTimeout(() => (fired = true), 200);
    await start();
    clearTimeout(timer);
    expect(fired).toBe(true);
    expect(store.list('Pod')).toHaveLength(pods);
  });

  test('an edit saved by rename-over (editor atomic save, sed -i) is seen without waiting for the periodic rescan', async () => {
    folder.write('a.yaml', configMap('a', '0'));
    await start();
    for (let v = 1; v <= 4; v++) {
      if (v % 2) {
        folder.write('a.yaml', configMap('a', String(v))); // hidden temp file, then rename
      } else {
        writeFileSync(abs('sedX1b2c3'), configMap('a', String(v))); // sed -i: a visible temp name, then rename
        renameSync(abs('sedX1b2c3'), abs('a.yaml'));
      }
      await within(store, WATCH_DEADLINE_MS, `a = ${v}`, () => value('a') === String(v));
    }
  });

  test('files written and removed at once converge to absent, also a file an editor saved by rename before', async () => {
    folder.write('edited.yaml', configMap('edited', '0'));
    await start();
    for (let i = 0; i < 30; i++) {
      writeFileSync(abs(`gone-${i}.yaml`), configMap(`gone-${i}`, '1'));
      rmSync(abs(`gone-${i}.yaml`));
      if (i % 5 === 4) await sleep(15); // let some reloads run between the writes and the unlinks
    }
    folder.write('sentinel.yaml', configMap('sentinel', '1'));
    await within(store, WATCH_DEADLINE_MS, 'sentinel added', () => value('sentinel') === '1');
    expect(
      store
        .list('ConfigMap')
        .map((c) => c.metadata.name)
        .sort(),
    ).toEqual(['edited', 'sentinel']);

    folder.write('edited.yaml', configMap('edited', '1')); // an editor's save: a new inode renamed over the old
    await within(store, WATCH_DEADLINE_MS, 'edited = 1', () => value('edited') === '1');
    writeFileSync(abs('edited.yaml'), configMap('edited', '2'));
    rmSync(abs('edited.yaml'));
    await within(store, WATCH_DEADLINE_MS, 'edited removed', () => value('edited') === undefined);
  });

  test('a burst of 200 writes (in place and by rename) to files loaded at start converges to the final content of every file', async () => {
    const files = 10;
    for (let f = 0; f < files; f++) folder.write(`burst-${f}.yaml`, configMap(`burst-${f}`, 'start'));
    await start();
    for (let n = 0; n < 200; n++) {
      const f = n % files;
      const text = configMap(`burst-${f}`, String(n));
      if (n % 3 === 0) folder.write(`burst-${f}.yaml`, text);
      else writeFileSync(abs(`burst-${f}.yaml`), text); // truncate and write: a reload may see it half written
      if (n % 10 === 9) await sleep(20); // spread over several debounce windows
    }
    const final = (f: number) => String(190 + f);
    await within(store, WATCH_DEADLINE_MS, 'every burst file at its final value', () =>
      Array.from({ length: files }, (_, f) => f).every((f) => value(`burst-${f}`) === final(f)),
    );
    expect(source?.errors()).toEqual([]);
  });
});
