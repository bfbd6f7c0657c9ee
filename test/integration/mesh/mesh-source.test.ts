import { mkdtempSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { meshConfigMapName, MESH_CONFIG_KEY } from '../../../src/mesh/layers';
import { createMeshConfigSource, MeshWatcher } from '../../../src/mesh/source';
import type { MeshConfig } from '../../../src/mesh/types';
import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';

const WAIT_LIMIT_MS = 10_000;

/** Resolves with the next announced change, or rejects naming what was awaited. */
function nextChange(watcher: MeshWatcher, what: string): Promise<{ mesh: MeshConfig; previous: MeshConfig }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out waiting for ${what}`));
    }, WAIT_LIMIT_MS);
    const off = watcher.subscribe((mesh, previous) => {
      clearTimeout(timer);
      off();
      resolve({ mesh, previous });
    });
  });
}

function configMap(name: string, mesh: string | undefined, rv: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'istio-system', uid: `u-${name}`, resourceVersion: rv },
    data: mesh === undefined ? {} : { [MESH_CONFIG_KEY]: mesh },
  };
}

describe('meshConfig source selection', () => {
  let dir: string;
  let watcher: MeshWatcher | undefined;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'istiod-ts-mesh-'))));
  afterEach(() => {
    watcher?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const common = { podNamespace: 'istio-system', revision: 'default', store: new MemoryStore() };

  test('local mode without the file uses the defaults', async () => {
    watcher = await createMeshConfigSource({ ...common, file: path.join(dir, 'missing'), mode: 'local' });
    await watcher.ready;
    expect(watcher.origin).toBe('defaults');
    expect(watcher.current().trustDomain).toBe('cluster.local');
  });

  test('an existing file is used in either mode, before any ConfigMap', async () => {
    const file = path.join(dir, 'mesh');
    writeFileSync(file, 'trustDomain: file.example\n');
    const store = new MemoryStore();
    store.upsert('ConfigMap', [configMap('istio', 'trustDomain: cm.example\n', '1')]);
    watcher = await createMeshConfigSource({ ...common, store, file, mode: 'kubernetes' });
    expect(watcher.origin).toBe(`file ${file}`);
    expect(watcher.current().trustDomain).toBe('file.example');
  });

  test('the ConfigMap is istio, or istio-<rev> for a revision', () => {
    expect(meshConfigMapName('default')).toBe('istio');
    expect(meshConfigMapName('')).toBe('istio');
    expect(meshConfigMapName('canary')).toBe('istio-canary');
  });

  test('an invalid file at startup leaves the defaults in force and says why', async () => {
    const file = path.join(dir, 'mesh');
    writeFileSync(file, 'trustDomain: "not valid"\n');
    watcher = await createMeshConfigSource({ ...common, file, mode: 'local' });
    expect(watcher.current().trustDomain).toBe('cluster.local');
    expect(watcher.lastError()).toMatch(/trustDomain: trust domain name "not valid" invalid/);
  });

  test('the effective config is frozen so no consumer can change it for the others', async () => {
    watcher = await createMeshConfigSource({ ...common, file: path.join(dir, 'missing'), mode: 'local' });
    expect(() => (watcher!.current().defaultConfig.discoveryAddress = 'x')).toThrow(TypeError);
  });
});

describe('meshConfig file source', () => {
  let dir: string;
  let watcher: MeshWatcher | undefined;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'istiod-ts-mesh-'))));
  afterEach(() => {
    watcher?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (file: string) =>
    createMeshConfigSource({
      file,
      mode: 'local',
      podNamespace: 'istio-system',
      revision: 'default',
      store: new MemoryStore(),
      debounceMs: 20,
    });

  test('a valid rewrite is applied live and announced with the new and previous config', async () => {
    const file = path.join(dir, 'mesh');
    writeFileSync(file, 'trustDomain: one.example\n');
    watcher = await start(file);
    const change = nextChange(watcher, 'the rewrite');
    writeFileSync(file, 'trustDomain: two.example\ntrustDomainAliases: [one.example]\n');
    const { mesh, previous } = await change;
    expect(mesh.trustDomain).toBe('two.example');
    expect(mesh.trustDomainAliases).toEqual(['one.example']);
    expect(previous.trustDomain).toBe('one.example');
    expect(watcher.current()).toBe(mesh);
  });

  test('an invalid rewrite is refused with its reason and the last good config stays; a later valid one applies', async () => {
    const file = path.join(dir, 'mesh');
    writeFileSync(file, 'rootNamespace: good-root\n');
    watcher = await start(file);
    const announced: string[] = [];
    watcher.subscribe((m) => announced.push(m.rootNamespace));

    writeFileSync(file, 'rootNamespace: bad-root\ndefaultConfig: {discoveryAddress: "no-port"}\n');
    await waitUntil(() => watcher!.lastError() !== undefined, 'the error');
    expect(watcher.lastError()).toMatch(/defaultConfig\.discoveryAddress: "no-port" is not host:port/);
    expect(watcher.current().rootNamespace).toBe('good-root');

    const change = nextChange(watcher, 'the fix');
    writeFileSync(file, 'rootNamespace: fixed-root\n');
    await change;
    expect(watcher.current().rootNamespace).toBe('fixed-root');
    expect(watcher.lastError()).toBeUndefined();
    expect(announced).toEqual(['fixed-root']);
  });

  test('a Kubernetes ConfigMap mount update (..data symlink swap) is seen', async () => {
    // The kubelet layout: mesh -> ..data/mesh, ..data -> ..<timestamp>/, swapped atomically by rename.
    mkdirSync(path.join(dir, '..v1'));
    writeFileSync(path.join(dir, '..v1', 'mesh'), 'trustDomain: v1.example\n');
    symlinkSync('..v1', path.join(dir, '..data'));
    symlinkSync(path.join('..data', 'mesh'), path.join(dir, 'mesh'));
    watcher = await start(path.join(dir, 'mesh'));
    expect(watcher.current().trustDomain).toBe('v1.example');

    const change = nextChange(watcher, 'the symlink swap');
    mkdirSync(path.join(dir, '..v2'));
    writeFileSync(path.join(dir, '..v2', 'mesh'), 'trustDomain: v2.example\n');
    symlinkSync('..v2', path.join(dir, '..data_tmp'));
    renameSync(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
    expect((await change).mesh.trustDomain).toBe('v2.example');
  });
});

describe('meshConfig ConfigMap source (Kubernetes mode, no file)', () => {
  let watcher: MeshWatcher | undefined;
  afterEach(() => watcher?.stop());

  const start = (store: MemoryStore, extra: { revision?: string; sharedConfigMap?: string } = {}) =>
    createMeshConfigSource({
      file: '/nonexistent/mesh',
      mode: 'kubernetes',
      podNamespace: 'istio-system',
      revision: extra.revision ?? 'default',
      store,
      sharedConfigMap: extra.sharedConfigMap,
    });

  test('ready waits for the store to sync, then the ConfigMap is in force', async () => {
    const store = new MemoryStore();
    store.expectSync('configmaps');
    watcher = await start(store);
    expect(watcher.origin).toBe('ConfigMap istio-system/istio');
    let ready = false;
    const readyDone = watcher.ready.then(() => (ready = true));
    store.upsert('ConfigMap', [configMap('istio', 'trustDomain: cm.example\n', '1')]);
    await Promise.resolve();
    expect(ready).toBe(false);
    store.markSynced('configmaps');
    await readyDone;
    expect(watcher.current().trustDomain).toBe('cm.example');
  });

  test('ConfigMap updates apply live; an invalid one keeps the last good; deleting it returns to the defaults', async () => {
    const store = new MemoryStore();
    store.expectSync('configmaps');
    store.upsert('ConfigMap', [configMap('istio', 'rootNamespace: r1\n', '1')]);
    store.markSynced('configmaps');
    watcher = await start(store);
    await watcher.ready;
    expect(watcher.current().rootNamespace).toBe('r1');

    const seen: [string, string][] = [];
    watcher.subscribe((m, prev) => seen.push([prev.rootNamespace, m.rootNamespace]));
    store.upsert('ConfigMap', [configMap('istio', 'rootNamespace: r2\n', '2')]);
    store.upsert('ConfigMap', [configMap('istio', 'rootNamespace: r3\nproxyListenPort: 0\n', '3')]);
    expect(watcher.current().rootNamespace).toBe('r2');
    expect(watcher.lastError()).toMatch(
      /^ConfigMap istio-system\/istio key mesh: proxyListenPort: port 0 must be in the range 1\.\.65535/,
    );
    store.remove('ConfigMap', [configMap('istio', undefined, '3')]);
    expect(seen).toEqual([
      ['r1', 'r2'],
      ['r2', 'istio-system'],
    ]);
  });

  test('a ConfigMap update that changes nothing effective announces nothing', async () => {
    const store = new MemoryStore();
    store.expectSync('configmaps');
    store.upsert('ConfigMap', [configMap('istio', 'trustDomain: same.example\n', '1')]);
    store.markSynced('configmaps');
    watcher = await start(store);
    await watcher.ready;
    const announced: string[] = [];
    watcher.subscribe((m) => announced.push(m.trustDomain));
    store.upsert('ConfigMap', [configMap('istio', '# reformatted\n{"trustDomain": "same.example"}\n', '2')]);
    store.upsert('ConfigMap', [configMap('istio', 'trustDomain: other.example\n', '3')]);
    expect(announced).toEqual(['other.example']);
  });

  test('other ConfigMaps do not matter; a revision reads istio-<rev>', async () => {
    const store = new MemoryStore();
    store.expectSync('configmaps');
    store.markSynced('configmaps');
    watcher = await start(store, { revision: 'canary' });
    store.upsert('ConfigMap', [configMap('istio', 'trustDomain: wrong.example\n', '1')]);
    expect(watcher.current().trustDomain).toBe('cluster.local');
    store.upsert('ConfigMap', [configMap('istio-canary', 'trustDomain: canary.example\n', '2')]);
    expect(watcher.current().trustDomain).toBe('canary.example');
  });

  test('a shared ConfigMap sits between the defaults and the primary one', async () => {
    const store = new MemoryStore();
    store.expectSync('configmaps');
    store.upsert('ConfigMap', [
      configMap('shared-mesh', 'trustDomain: shared.example\ndefaultConfig: {proxyMetadata: {A: "shared"}}\n', '1'),
      configMap('istio', 'defaultConfig: {proxyMetadata: {B: "primary"}}\n', '1'),
    ]);
    store.markSynced('configmaps');
    watcher = await start(store, { sharedConfigMap: 'shared-mesh' });
    await watcher.ready;
    expect(watcher.current().trustDomain).toBe('shared.example');
    expect(watcher.current().defaultConfig.proxyMetadata).toEqual({ A: 'shared', B: 'primary' });
  });
});

async function waitUntil(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !check(); waited += 20) {
    if (waited > WAIT_LIMIT_MS) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
