// What an operator sees when a meshConfig goes bad: a file at start is a usage error naming the
// field; a bad reload keeps the last good config and says so; a bad ConfigMap with no good one
// before it runs on the defaults and says that instead; unknown fields and istiod's warnings are
// logged once, not on every reload.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { UsageError } from '../../../src/config/settings';
import { logs } from '../../../src/log/logger';
import { MESH_CONFIG_KEY } from '../../../src/mesh/layers';
import {
  checkMeshConfigFile,
  createMeshConfigSource,
  MAX_REMEMBERED_MESH_NOTES,
  MAX_UNKNOWN_FIELDS_PER_LINE,
  MeshWatcher,
} from '../../../src/mesh/source';
import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';

const WAIT_LIMIT_MS = 10_000;

interface Line {
  level: string;
  msg: string;
}

function captureLogs(): Line[] {
  const lines: Line[] = [];
  logs.setDestination({ write: (line: string) => void lines.push(JSON.parse(line) as Line) });
  return lines;
}

const warnings = (lines: Line[]) => lines.filter((l) => l.level === 'warn').map((l) => l.msg);

function configMap(mesh: string, rv: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'istio', namespace: 'istio-system', uid: 'u-istio', resourceVersion: rv },
    data: { [MESH_CONFIG_KEY]: mesh },
  };
}

async function waitUntil(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !check(); waited += 20) {
    if (waited > WAIT_LIMIT_MS) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let watcher: MeshWatcher | undefined;
let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'istiod-ts-mesh-reload-'))));
afterEach(() => {
  watcher?.stop();
  watcher = undefined;
  logs.setDestination(process.stderr);
  rmSync(dir, { recursive: true, force: true });
});

describe('--meshConfig at start', () => {
  test('an invalid file is a usage error: one line naming the file, the field and the problem', () => {
    const file = path.join(dir, 'mesh');
    writeFileSync(file, 'ingressControllerMode: FASTEST\n');
    expect(() => checkMeshConfigFile(file)).toThrow(UsageError);
    expect(() => checkMeshConfigFile(file)).toThrow(
      `invalid value for --meshConfig: ${file}: ingressControllerMode: unknown value "FASTEST" for enum istio.mesh.v1alpha1.MeshConfig.IngressControllerMode (one of UNSPECIFIED, OFF, DEFAULT, STRICT)`,
    );
  });

  test('a valid file, a missing file and unknown fields pass', () => {
    const file = path.join(dir, 'mesh');
    writeFileSync(file, 'trustDomain: a.example\nsomeFutureField: 1\n');
    expect(() => checkMeshConfigFile(file)).not.toThrow();
    expect(() => checkMeshConfigFile(path.join(dir, 'absent'))).not.toThrow();
  });

  test('a file that exists but cannot be read (a folder) is a usage error', () => {
    expect(() => checkMeshConfigFile(dir)).toThrow(/^invalid value for --meshConfig: cannot read /);
  });
});

describe('meshConfig file reloads', () => {
  test('an invalid rewrite keeps the last good config and the log line says so', async () => {
    const file = path.join(dir, 'mesh');
    writeFileSync(file, 'rootNamespace: good-root\n');
    const lines = captureLogs();
    watcher = await createMeshConfigSource({
      file,
      mode: 'local',
      podNamespace: 'istio-system',
      revision: 'default',
      store: new MemoryStore(),
      debounceMs: 20,
    });
    writeFileSync(file, 'rootNamespace: bad-root\naccessLogEncoding: XML\n');
    await waitUntil(() => watcher?.lastError() !== undefined, 'the refusal');
    expect(watcher.current().rootNamespace).toBe('good-root');
    expect(warnings(lines)).toEqual([
      `invalid meshConfig, keeping the last good one: ${file}: accessLogEncoding: unknown value "XML" for enum istio.mesh.v1alpha1.MeshConfig.AccessLogEncoding (one of TEXT, JSON)`,
    ]);
  });
});

describe('meshConfig ConfigMap (Kubernetes mode)', () => {
  const start = async (store: MemoryStore) => {
    watcher = await createMeshConfigSource({
      file: path.join(dir, 'absent'),
      mode: 'kubernetes',
      podNamespace: 'istio-system',
      revision: 'default',
      store,
    });
    await watcher.ready;
    return watcher;
  };

  const synced = (...objects: KubeObject[]) => {
    const store = new MemoryStore();
    store.expectSync('configmaps');
    store.upsert('ConfigMap', objects);
    store.markSynced('configmaps');
    return store;
  };

  test('a bad ConfigMap with no good one before it runs on the defaults and says so, not "keeping the last good one"', async () => {
    const lines = captureLogs();
    const w = await start(synced(configMap('trustDomain: "Not Valid"\n', '1')));
    expect(w.current().trustDomain).toBe('cluster.local');
    const said = warnings(lines);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      /^invalid meshConfig and no valid one was loaded from ConfigMap istio-system\/istio yet, so the built-in defaults are in force: ConfigMap istio-system\/istio key mesh: trustDomain: /,
    );
    expect(said[0]).not.toContain('keeping the last good one');
  });

  test('after a good ConfigMap, a bad one keeps it and says "keeping the last good one"', async () => {
    const store = synced(configMap('rootNamespace: r1\n', '1'));
    const w = await start(store);
    const lines = captureLogs();
    store.upsert('ConfigMap', [configMap('rootNamespace: r2\nproxyListenPort: 0\n', '2')]);
    expect(w.current().rootNamespace).toBe('r1');
    expect(warnings(lines)).toEqual([
      'invalid meshConfig, keeping the last good one: ConfigMap istio-system/istio key mesh: proxyListenPort: port 0 must be in the range 1..65535',
    ]);
  });

  test('unknown fields are warned about once each, however often the config reloads; a new one is warned about', async () => {
    const store = synced(configMap('trustDomian: a.example\n', '1'));
    const lines = captureLogs();
    const w = await start(store);
    store.upsert('ConfigMap', [configMap('trustDomian: a.example\nrootNamespace: r2\n', '2')]);
    store.upsert('ConfigMap', [configMap('trustDomian: b.example\nrootNamespace: r3\n', '3')]);
    expect(w.current().rootNamespace).toBe('r3');
    store.upsert('ConfigMap', [configMap('trustDomian: b.example\ndefaultConfig: {discoveryAdress: x}\n', '4')]);
    const unknown = warnings(lines).filter((m) => m.includes('does not know'));
    expect(unknown).toEqual([
      'meshConfig has fields this version does not know; they are kept but have no effect (a typo?): trustDomian',
      'meshConfig has fields this version does not know; they are kept but have no effect (a typo?): defaultConfig.discoveryAdress',
    ]);
  });

  test(`one line lists at most MAX_UNKNOWN_FIELDS_PER_LINE (${MAX_UNKNOWN_FIELDS_PER_LINE}) unknown fields and counts the rest`, async () => {
    const fields = Array.from({ length: MAX_UNKNOWN_FIELDS_PER_LINE + 5 }, (_, i) => `unknown${i}: 1`).join('\n');
    const lines = captureLogs();
    await start(synced(configMap(`${fields}\n`, '1')));
    const [line, ...rest] = warnings(lines).filter((m) => m.includes('does not know'));
    expect(rest).toEqual([]);
    expect(line).toMatch(/unknown19 and 5 more$/);
  });

  test(`istiod's warnings are logged once each; past MAX_REMEMBERED_MESH_NOTES (${MAX_REMEMBERED_MESH_NOTES}) distinct findings the memory starts over`, async () => {
    const store = synced(configMap('tlsDefaults: {ecdhCurves: [P-999]}\n', '1'));
    const lines = captureLogs();
    await start(store);
    store.upsert('ConfigMap', [configMap('tlsDefaults: {ecdhCurves: [P-999]}\nrootNamespace: x\n', '2')]);
    expect(warnings(lines).filter((m) => m.includes('P-999'))).toHaveLength(1);

    // Enough distinct unknown fields to fill the memory, then the first warning comes back once.
    const many = Array.from({ length: MAX_REMEMBERED_MESH_NOTES }, (_, i) => `f${i}: 1`).join('\n');
    store.upsert('ConfigMap', [configMap(`${many}\n`, '3')]);
    store.upsert('ConfigMap', [configMap('tlsDefaults: {ecdhCurves: [P-999]}\n', '4')]);
    expect(warnings(lines).filter((m) => m.includes('P-999'))).toHaveLength(2);
  });
});
