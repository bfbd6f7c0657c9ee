// Folders under --configDir: each is watched on its own, so folders created, renamed or removed
// after start, a Kubernetes ConfigMap volume's symlink swap, and more folders than can be watched
// all converge without waiting for the periodic rescan.

import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { logs } from '../../../src/log/logger';
import { MAX_WATCHED_FOLDERS } from '../../../src/store/local/folder-watcher';
import { LocalSource } from '../../../src/store/local/local-source';
import { MemoryStore } from '../../../src/store/memory-store';
import { configMap, TempFolder } from './folder';

/** The debounce (50 ms here) and one reload, with a wide margin for a loaded machine. */
const WATCH_DEADLINE_MS = 1_500;

function within(store: MemoryStore, what: string, check: () => boolean): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`not seen within ${WATCH_DEADLINE_MS} ms: ${what}`));
    }, WATCH_DEADLINE_MS);
    const off = store.subscribe(() => {
      if (!check()) return;
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

describe('LocalSource folders', () => {
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
    source = new LocalSource({ dir: folder.dir, writer: store, debounceMs: 50, rescanIntervalMs: 3_600_000 });
    await source.start();
  };
  const value = (name: string) => store.get('ConfigMap', 'apps', name)?.data?.['value'];
  const abs = (rel: string) => path.join(folder.dir, rel);

  test('a folder created after start is watched: files in it appear, follow it when renamed, and go when it is removed', async () => {
    await start();
    mkdirSync(abs('team'));
    writeFileSync(abs('team/a.yaml'), configMap('a', '1'));
    await within(store, 'a from team/', () => value('a') === '1');
    writeFileSync(abs('team/a.yaml'), configMap('a', '2'));
    await within(store, 'a edited in team/', () => value('a') === '2');
    renameSync(abs('team'), abs('renamed'));
    writeFileSync(abs('renamed/b.yaml'), configMap('b', '1'));
    await within(store, 'b in the renamed folder', () => value('b') === '1');
    expect(value('a')).toBe('2');
    rmSync(abs('renamed'), { recursive: true });
    await within(store, 'both gone with the folder', () => value('a') === undefined && value('b') === undefined);
  });

  test("a ConfigMap volume's update (a new ..data symlink renamed over the old) is seen", async () => {
    mkdirSync(abs('..v1'));
    writeFileSync(abs('..v1/cm.yaml'), configMap('cm', '1'));
    symlinkSync('..v1', abs('..data'));
    symlinkSync('..data/cm.yaml', abs('cm.yaml'));
    await start();
    expect(value('cm')).toBe('1');
    mkdirSync(abs('..v2'));
    writeFileSync(abs('..v2/cm.yaml'), configMap('cm', '2'));
    symlinkSync('..v2', abs('..data_tmp'));
    renameSync(abs('..data_tmp'), abs('..data'));
    rmSync(abs('..v1'), { recursive: true });
    await within(store, 'cm = 2 through the swapped symlink', () => value('cm') === '2');
  });

  test(`more than MAX_WATCHED_FOLDERS (${MAX_WATCHED_FOLDERS}) folders: a warning naming the limit, once, and every folder is still read`, async () => {
    for (let i = 0; i <= MAX_WATCHED_FOLDERS; i++) mkdirSync(abs(`f${i}`));
    writeFileSync(abs(`f${MAX_WATCHED_FOLDERS}/last.yaml`), configMap('last', '1'));
    const lines: string[] = [];
    logs.setDestination({ write: (line: string) => void lines.push(line) });
    await start();
    await source!.rescan(); // set by start() above
    expect(value('last')).toBe('1');
    expect(lines.filter((l) => l.includes(`MAX_WATCHED_FOLDERS (${MAX_WATCHED_FOLDERS})`))).toHaveLength(1);
  });
});
