// The demo mesh (examples/demo, loaded through the local source) and what ztunnel is told about
// it, checked against a reviewed golden file. Regenerate with UPDATE_GOLDEN=1 and review the diff.

import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { AmbientIndex } from '../../../src/ambient/ambient-index';
import { addressToJson, authorizationToJson } from '../../../src/ambient/codec';
import { LocalSource } from '../../../src/store/local/local-source';
import { MemoryStore } from '../../../src/store/memory-store';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL } from '../../../src/contract/xds-resources';
import { meshSource } from '../../support/ambient/fixtures';

const DEMO = path.join(__dirname, '../../../examples/demo');
const GOLDEN = path.join(__dirname, 'golden/demo.json');

async function demoResources(): Promise<Record<string, unknown>> {
  const store = new MemoryStore();
  const source = new LocalSource({
    dir: DEMO,
    writer: store,
    watch: false,
    now: () => new Date('2026-01-01T00:00:00Z'),
  });
  await source.start();
  await source.stop();
  const index = new AmbientIndex({ store, mesh: meshSource(), clusterId: 'Kubernetes', domain: 'cluster.local' });
  const byName = <T>(items: Iterable<{ name: string }>, f: (r: never) => T) =>
    Object.fromEntries([...items].sort((a, b) => (a.name < b.name ? -1 : 1)).map((r) => [r.name, f(r as never)]));
  const out = {
    addresses: byName(index.all(ADDRESS_TYPE_URL), (r: { bytes: Uint8Array }) => addressToJson(r.bytes)),
    authorizations: byName(index.all(AUTHORIZATION_TYPE_URL), (r: { bytes: Uint8Array }) =>
      authorizationToJson(r.bytes),
    ),
  };
  index.close();
  return out;
}

describe('demo mesh golden', () => {
  it('derives the reviewed Workloads, Services and Authorizations', async () => {
    const actual = await demoResources();
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(GOLDEN, `${JSON.stringify(actual, null, 2)}\n`);
    expect(actual).toEqual(JSON.parse(readFileSync(GOLDEN, 'utf8')));
  });
});
