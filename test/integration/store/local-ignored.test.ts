// Local mode says what it does not use: a document of a kind the server does not read (a
// Deployment, an Istio Gateway) or one local mode never reads (a ConfigMap) is logged once with
// file:line, counted, and listed on /debug/ignored until the file stops holding it.

import { Registry } from 'prom-client';
import { logs } from '../../../src/log/logger';
import { DebugRouter } from '../../../src/server/debug';
import { IgnoredObjects, registerIgnoredDebug, type IgnoredListing } from '../../../src/store/ignored';
import { LocalSource } from '../../../src/store/local/local-source';
import { MemoryStore } from '../../../src/store/memory-store';
import { TempFolder, waitFor } from './folder';

/** Longer than any test: changes are seen by the watcher, not by a rescan. */
const NO_RESCAN_MS = 3_600_000;

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
spec: {}
`;
const POD = `apiVersion: v1
kind: Pod
metadata:
  name: web-1
  namespace: apps
`;
const ISTIO_GATEWAY = `apiVersion: networking.istio.io/v1
kind: Gateway
metadata:
  name: ingress
  namespace: apps
`;
const CONFIG_MAP = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: apps
`;

describe('local mode reports the objects it does not use', () => {
  const folder = new TempFolder();
  const store = new MemoryStore();
  const metrics = new Registry();
  const ignored = new IgnoredObjects({ metrics });
  const debug = new DebugRouter();
  registerIgnoredDebug(debug, ignored);
  const lines: { msg: string; level: string }[] = [];
  let source: LocalSource | undefined;

  beforeAll(() => logs.setDestination({ write: (line: string) => void lines.push(JSON.parse(line) as never) }));
  afterAll(async () => {
    await source?.stop();
    logs.setDestination(process.stderr);
    folder.cleanup();
  });

  const page = async (): Promise<IgnoredListing> =>
    (await debug.handle('ignored', { path: '/debug/ignored', query: new URLSearchParams(), method: 'GET', body: '' }))
      .body as IgnoredListing;
  const counted = async (): Promise<number> =>
    (await metrics.getSingleMetric('istiod_ts_ignored_objects_total')?.get())?.values[0]?.value ?? 0;
  const ignoredLines = () => lines.filter((l) => l.msg.includes(' ignored: ')).map((l) => l.msg);

  test('each unused object is logged once with file:line, counted, and listed; used kinds are not', async () => {
    folder.write('apps.yaml', `${POD}---\n${DEPLOYMENT}---\n${ISTIO_GATEWAY}`);
    folder.write('settings.yaml', CONFIG_MAP);
    source = new LocalSource({
      dir: folder.dir,
      writer: store,
      debounceMs: 20,
      rescanIntervalMs: NO_RESCAN_MS,
      ignored,
    });
    await source.start();
    expect(store.get('Pod', 'apps', 'web-1')).toBeDefined();

    expect(ignoredLines().sort()).toEqual([
      'apps.yaml:14: Gateway apps/ingress ignored: networking.istio.io/v1 Gateway is not read; istiod-ts reads Gateway only as gateway.networking.k8s.io/v1, gateway.networking.k8s.io/v1beta1',
      'apps.yaml:7: Deployment apps/web ignored: istiod-ts does not use kind Deployment (apps/v1)',
      'settings.yaml:1: ConfigMap apps/settings ignored: local mode reads no ConfigMaps (meshConfig comes from --meshConfig)',
    ]);
    expect(lines.find((l) => l.msg.startsWith('apps.yaml:7:'))?.level).toBe('warn');
    expect(await counted()).toBe(3);
    const listing = await page();
    expect(listing.total).toBe(3);
    expect(listing.objects.map((o) => [o.kind, o.name, o.source?.file, o.source?.line])).toEqual([
      ['ConfigMap', 'apps/settings', 'settings.yaml', 1],
      ['Deployment', 'apps/web', 'apps.yaml', 7],
      ['Gateway', 'apps/ingress', 'apps.yaml', 14],
    ]);

    // A rescan, or an edit elsewhere in the file, does not report them again.
    await source.rescan();
    folder.write('apps.yaml', `${POD}  labels: {app: web}\n---\n${DEPLOYMENT}---\n${ISTIO_GATEWAY}`);
    await waitFor(store, 'the pod label', () => store.get('Pod', 'apps', 'web-1')?.metadata.labels?.['app'] === 'web');
    expect(ignoredLines()).toHaveLength(3);
    expect(await counted()).toBe(3);
    expect((await page()).objects.find((o) => o.kind === 'Deployment')?.source?.line).toBe(8);
  });

  test('an object taken out of its file leaves the page; a deleted file takes its objects with it', async () => {
    folder.write('apps.yaml', `${POD}  labels: {app: v2}\n---\n${ISTIO_GATEWAY}`);
    await waitFor(store, 'the second edit', () => store.get('Pod', 'apps', 'web-1')?.metadata.labels?.['app'] === 'v2');
    expect((await page()).objects.map((o) => o.kind)).toEqual(['ConfigMap', 'Gateway']);

    folder.remove('settings.yaml');
    await waitFor(store, 'the ConfigMap gone', () => store.get('ConfigMap', 'apps', 'settings') === undefined);
    expect((await page()).objects.map((o) => o.kind)).toEqual(['Gateway']);

    // Put back, it is reported again: it is a new finding.
    folder.write('apps.yaml', `${POD}  labels: {app: v3}\n---\n${DEPLOYMENT}---\n${ISTIO_GATEWAY}`);
    await waitFor(store, 'the third edit', () => store.get('Pod', 'apps', 'web-1')?.metadata.labels?.['app'] === 'v3');
    expect(ignoredLines().filter((l) => l.includes('Deployment apps/web'))).toHaveLength(2);
    expect(await counted()).toBe(4);
  });
});
