import { symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { isManifestFile, MAX_FOLDER_DEPTH } from '../../../src/store/local/files';
import { LocalSource, LOCAL_SYNC_PART, type ReloadStats } from '../../../src/store/local/local-source';
import { logs } from '../../../src/log/logger';
import { MemoryStore } from '../../../src/store/memory-store';
import { configMap, recordEvents, TempFolder, waitFor } from './folder';

describe('LocalSource', () => {
  let folder: TempFolder;
  let store: MemoryStore;
  let source: LocalSource;
  let reloads: ReloadStats[];

  beforeEach(() => {
    folder = new TempFolder();
    store = new MemoryStore();
    reloads = [];
  });

  afterEach(async () => {
    // Unset when a test failed before starting its source.
    await (source as LocalSource | undefined)?.stop();
    folder.cleanup();
  });

  const start = async (watch = true) => {
    source = new LocalSource({
      dir: folder.dir,
      writer: store,
      watch,
      debounceMs: 50,
      onReload: (s) => reloads.push(s),
    });
    await source.start();
  };
  const value = (name: string, ns = 'apps') => store.get('ConfigMap', ns, name)?.data?.['value'];

  test('start loads every manifest in one batch and then marks the store synced', async () => {
    folder.write('a.yaml', configMap('a', '1'));
    folder.write('nested/deeper/b.yml', configMap('b', '1'));
    folder.write('c.json', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } }));
    folder.write('README.md', '# not a manifest\nkind: Pod\n');
    const batches: number[] = [];
    store.subscribe((b) => batches.push(b.length));
    store.expectSync('other');
    await start(false);
    expect(batches).toEqual([3]);
    expect(store.unsyncedParts()).toEqual(['other']);
    expect(store.unsyncedParts()).not.toContain(LOCAL_SYNC_PART);
    expect(value('b')).toBe('1');
    expect(store.get('Namespace', undefined, 'apps')).toBeDefined();
    expect(reloads[0]).toMatchObject({ files: 3, objects: 3, errors: 0, events: { add: 3, update: 0, delete: 0 } });
  });

  test('a missing folder fails start with a message naming it', async () => {
    source = new LocalSource({ dir: `${folder.dir}/nope`, writer: store });
    await expect(source.start()).rejects.toThrow(`--configDir ${folder.dir}/nope: not a readable folder`);
  });

  test('adding a file adds its objects; changing it updates only the changed object with a new resourceVersion', async () => {
    await start();
    const log = recordEvents(store);
    folder.write('cms.yaml', `${configMap('x', '1')}---\n${configMap('y', '1')}`);
    await waitFor(store, 'x and y', () => value('x') === '1' && value('y') === '1');
    const yVersion = store.get('ConfigMap', 'apps', 'y')?.metadata.resourceVersion;
    const xVersion = store.get('ConfigMap', 'apps', 'x')?.metadata.resourceVersion;

    folder.write('cms.yaml', `${configMap('x', '2')}---\n${configMap('y', '1')}`);
    await waitFor(store, 'x updated', () => value('x') === '2');
    await source.rescan();
    expect(log.events).toEqual(['add ConfigMap apps/x', 'add ConfigMap apps/y', 'update ConfigMap apps/x']);
    expect(store.get('ConfigMap', 'apps', 'y')?.metadata.resourceVersion).toBe(yVersion);
    expect(Number(store.get('ConfigMap', 'apps', 'x')?.metadata.resourceVersion)).toBeGreaterThan(Number(xVersion));
  });

  test('rewriting a file with the same content (even reordered keys) produces no event', async () => {
    folder.write(
      'a.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: apps}\ndata: {k1: "1", k2: "2"}\n',
    );
    await start();
    const log = recordEvents(store);
    folder.write(
      'a.yaml',
      'kind: ConfigMap\napiVersion: v1\ndata: {k2: "2", k1: "1"}\nmetadata: {namespace: apps, name: a}\n',
    );
    await source.rescan();
    expect(log.events).toEqual([]);
  });

  test('deleting a file deletes its objects', async () => {
    folder.write('a.yaml', configMap('a', '1'));
    folder.write('b.yaml', configMap('b', '1'));
    await start();
    const log = recordEvents(store);
    folder.remove('a.yaml');
    await waitFor(store, 'a deleted', () => value('a') === undefined);
    expect(log.events).toEqual(['delete ConfigMap apps/a']);
    expect(value('b')).toBe('1');
  });

  test('a file that stops parsing keeps its previous objects, reports file and line once, and recovers when fixed', async () => {
    folder.write('good.yaml', configMap('good', '1'));
    folder.write('bad.yaml', configMap('kept', '1'));
    // Rescans are explicit: this is about what a failed parse keeps, not about the watcher, whose
    // timing under load once made this test time out.
    await start(false);
    const log = recordEvents(store);
    const lines: string[] = [];
    logs.setDestination({ write: (line: string) => void lines.push(line) });
    folder.write(
      'bad.yaml',
      `${configMap('kept', '2')}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: apps\n`,
    );
    await source.rescan();
    folder.write(
      'bad.yaml',
      `${configMap('kept', '2')}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: apps\n# touched\n`,
    );
    await source.rescan();
    logs.setDestination(process.stderr);
    expect(lines.filter((l) => l.includes('bad.yaml:9: ConfigMap has no metadata.name'))).toHaveLength(1);
    expect(source.errors()).toEqual([{ file: 'bad.yaml', line: 9, message: 'ConfigMap has no metadata.name' }]);
    expect(value('kept')).toBe('1');
    expect(value('good')).toBe('1');
    expect(log.events).toEqual([]);

    folder.write('bad.yaml', configMap('kept', '3'));
    await source.rescan();
    expect(value('kept')).toBe('3');
    expect(source.errors()).toEqual([]);
  });

  test('a new file that never parsed contributes nothing and leaves everything else alone', async () => {
    folder.write('good.yaml', configMap('good', '1'));
    await start();
    folder.write('broken.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [\n');
    await source.rescan();
    expect(source.errors().map((e) => e.file)).toEqual(['broken.yaml']);
    expect(store.list('ConfigMap').map((c) => c.metadata.name)).toEqual(['good']);
  });

  test('the same object in two files: the first loaded wins, the duplicate is reported, and it takes over when the first goes', async () => {
    folder.write('a.yaml', configMap('shared', 'from-a'));
    folder.write('b.yaml', configMap('shared', 'from-b'));
    await start(false);
    expect(value('shared')).toBe('from-a');
    expect(source.errors()).toEqual([
      { file: 'b.yaml', line: 1, message: 'ConfigMap apps/shared is already defined in a.yaml; this copy is ignored' },
    ]);
    const log = recordEvents(store);
    folder.remove('a.yaml');
    await source.rescan();
    expect(value('shared')).toBe('from-b');
    expect(log.events).toEqual(['update ConfigMap apps/shared']);
    expect(source.errors()).toEqual([]);
  });

  test('List kinds and nested folders created after start are picked up', async () => {
    await start();
    folder.write(
      'deep/er/list.yaml',
      `apiVersion: v1\nkind: List\nitems:\n- ${configMap('l1', '1').split('\n').join('\n  ')}\n- ${configMap('l2', '1').split('\n').join('\n  ')}\n`,
    );
    await waitFor(store, 'list items', () => value('l1') === '1' && value('l2') === '1');
  });

  test('renaming a file keeps its objects; renaming it to a non-manifest name removes them', async () => {
    folder.write('a.yaml', configMap('a', '1'));
    await start();
    const before = store.get('ConfigMap', 'apps', 'a')?.metadata.uid;
    folder.rename('a.yaml', 'renamed.yml');
    await source.rescan();
    expect(store.get('ConfigMap', 'apps', 'a')?.metadata.uid).toBe(before);
    folder.rename('renamed.yml', 'renamed.txt');
    await waitFor(store, 'a removed', () => value('a') === undefined);
  });

  test('uids are stable across restarts', async () => {
    folder.write('a.yaml', configMap('a', '1'));
    await start(false);
    const uid = store.get('ConfigMap', 'apps', 'a')?.metadata.uid;
    await source.stop();
    store = new MemoryStore();
    await start(false);
    expect(store.get('ConfigMap', 'apps', 'a')?.metadata.uid).toBe(uid);
  });
});

describe('LocalSource safety nets', () => {
  let folder: TempFolder;
  let source: LocalSource | undefined;
  afterEach(async () => {
    await source?.stop();
    folder.cleanup();
  });

  test('the periodic rescan finds changes even without watch events', async () => {
    folder = new TempFolder();
    const store = new MemoryStore();
    source = new LocalSource({ dir: folder.dir, writer: store, watch: false, rescanIntervalMs: 30 });
    await source.start();
    folder.write('late.yaml', configMap('late', '1'));
    await waitFor(store, 'the rescan to add late', () => store.get('ConfigMap', 'apps', 'late') !== undefined);
  });

  test(`folders nested deeper than MAX_FOLDER_DEPTH (${MAX_FOLDER_DEPTH}) are not read, and a symlink loop is walked once`, async () => {
    folder = new TempFolder();
    const deep = Array.from({ length: MAX_FOLDER_DEPTH + 1 }, (_, i) => `d${i}`).join('/');
    folder.write(`${deep}/too-deep.yaml`, configMap('too-deep', '1'));
    folder.write('ok/fine.yaml', configMap('fine', '1'));
    symlinkSync('..', path.join(folder.dir, 'ok', 'loop'));
    const store = new MemoryStore();
    source = new LocalSource({ dir: folder.dir, writer: store, watch: false });
    await source.start();
    expect(store.list('ConfigMap').map((c) => c.metadata.name)).toEqual(['fine']);
    expect(source.errors()).toEqual([]);
  });

  test('hidden files and files that are not .yaml, .yml or .json are ignored', () => {
    expect(['a.yaml', 'b.YML', 'dir/c.json'].every(isManifestFile)).toBe(true);
    expect(['README.md', '.a.yaml.swp', '.hidden.yaml', 'notes.txt', 'a.yaml~'].some(isManifestFile)).toBe(false);
  });
});
