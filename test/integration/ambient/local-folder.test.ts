// The ambient index fed by the local source watching a real folder: editing a manifest on disk
// yields exactly the change set of the resources it alters.

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AmbientIndex } from '../../../src/ambient/ambient-index';
import { decodeAddress } from '../../../src/ambient/codec';
import { LocalSource } from '../../../src/store/local/local-source';
import { MemoryStore } from '../../../src/store/memory-store';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL, ChangeSet } from '../../../src/contract/xds-resources';
import { meshSource } from '../../support/ambient/fixtures';

const DEMO = path.join(__dirname, '../../../examples/demo');
const PRODUCTPAGE = 'Kubernetes//Pod/bookinfo/productpage-v1-5b8f6d9c4-x7k2p';
/** Longest wait for a file change to reach the index; generous because the machine is shared. */
const WAIT_MS = 10_000;

function nextChange(index: AmbientIndex): Promise<readonly ChangeSet[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no change set within ${WAIT_MS} ms`)), WAIT_MS);
    const off = index.subscribe((changes) => {
      clearTimeout(timer);
      off();
      resolve(changes);
    });
  });
}

describe('ambient index over a watched folder', () => {
  let dir: string;
  let source: LocalSource;
  let index: AmbientIndex;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ambient-demo-'));
    cpSync(DEMO, dir, { recursive: true });
    const store = new MemoryStore();
    source = new LocalSource({ dir, writer: store, debounceMs: 20 });
    await source.start();
    index = new AmbientIndex({ store, mesh: meshSource(), clusterId: 'Kubernetes', domain: 'cluster.local' });
  });

  afterEach(async () => {
    index.close();
    await source.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('removing the redirection annotation in a file pushes that one workload with tunnel NONE', async () => {
    expect(decodeAddress(index.get(ADDRESS_TYPE_URL, PRODUCTPAGE)!.bytes).workload!.tunnelProtocol).toBe(1);
    const file = path.join(dir, 'bookinfo-pods.yaml');
    const text = readFileSync(file, 'utf8');
    const edited = text.replace('  annotations:\n    ambient.istio.io/redirection: enabled\n', '');
    expect(edited).not.toBe(text);
    const change = nextChange(index);
    writeFileSync(file, edited);
    expect(await change).toEqual([{ typeUrl: ADDRESS_TYPE_URL, updated: [PRODUCTPAGE], removed: [] }]);
    expect(decodeAddress(index.get(ADDRESS_TYPE_URL, PRODUCTPAGE)!.bytes).workload!.tunnelProtocol).toBeUndefined();
  });

  it('deleting the policies file removes the policies and their references', async () => {
    const change = nextChange(index);
    rmSync(path.join(dir, 'bookinfo-policies.yaml'));
    const changes = await change;
    const authz = changes.find((c) => c.typeUrl === AUTHORIZATION_TYPE_URL)!;
    expect(authz.removed).toEqual(['bookinfo/ratings-from-reviews', 'istio-system/istio_converted_static_strict']);
    const addresses = changes.find((c) => c.typeUrl === ADDRESS_TYPE_URL)!;
    expect(addresses.updated.every((n) => n.startsWith('Kubernetes//Pod/bookinfo/'))).toBe(true);
    expect(addresses.updated).toHaveLength(5);
  });
});
