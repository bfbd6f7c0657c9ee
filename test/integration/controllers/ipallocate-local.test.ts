// Local mode: the folder stands in for the API server, so the allocation lives on the store's copy
// of each ServiceEntry and reaches ztunnel the same way; an address written in the YAML's status
// is kept, as a cluster's status would be.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AmbientIndex } from '../../../src/ambient/ambient-index';
import { decodeAddress } from '../../../src/ambient/codec';
import { ipToText } from '../../../src/ambient/ip';
import { startIpAutoallocate } from '../../../src/controllers/ipallocate';
import { ADDRESS_TYPE_URL } from '../../../src/contract/xds-resources';
import { logs } from '../../../src/log/logger';
import { SoleLeader } from '../../../src/server/leader';
import { LocalSource } from '../../../src/store/local/local-source';
import { MemoryStore } from '../../../src/store/memory-store';
import { eventually } from '../../support/apiserver';
import { meshSource } from '../../support/ambient/fixtures';

logs.configure('leader:silent,ipallocate:error');

const ENV = {
  PILOT_ENABLE_IP_AUTOALLOCATE: true,
  PILOT_IP_AUTOALLOCATE_IPV4_PREFIX: '240.240.0.0/16',
  PILOT_IP_AUTOALLOCATE_IPV6_PREFIX: '2001:2::/48',
};

function entryYaml(name: string, host: string, status = ''): string {
  return `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata:
  name: ${name}
  namespace: default
spec:
  hosts: [${host}]
  resolution: DNS
  ports: [{ number: 443, name: tls, protocol: TLS }]
${status}`;
}

describe('IP auto-allocation in local mode', () => {
  let dir: string;
  let source: LocalSource;
  let index: AmbientIndex;
  let leader: SoleLeader;
  let store: MemoryStore;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ipallocate-local-'));
    writeFileSync(path.join(dir, 'ns.yaml'), 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n');
    writeFileSync(path.join(dir, 'api.yaml'), entryYaml('api', 'api.example.com'));
    writeFileSync(
      path.join(dir, 'pinned.yaml'),
      entryYaml(
        'pinned',
        'pinned.example.com',
        'status:\n  addresses: [{ value: 240.240.9.9, host: pinned.example.com }]\n',
      ),
    );
    store = new MemoryStore();
    source = new LocalSource({ dir, writer: store, debounceMs: 20 });
    await source.start();
    index = new AmbientIndex({ store, mesh: meshSource(), clusterId: 'Kubernetes', domain: 'cluster.local' });
    leader = new SoleLeader();
    startIpAutoallocate({ env: ENV, store, leader, localStore: store });
  });

  afterEach(async () => {
    await leader.stop();
    index.close();
    await source.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const vips = (host: string) => {
    const r = index.get(ADDRESS_TYPE_URL, `default/${host}`);
    return (r ? (decodeAddress(r.bytes).service?.addresses ?? []) : []).map((a) => ipToText(a.address));
  };

  test('an entry without addresses gets its VIPs in the Service ztunnel receives; one with status in its YAML keeps them', async () => {
    await eventually('api has VIPs', () => vips('api.example.com').length === 2);
    expect(vips('api.example.com')).toEqual(['240.240.0.1', '2001:2::1']);
    expect(vips('pinned.example.com')).toEqual(['240.240.9.9']);
  });

  test('editing an entry’s file (which carries no status) keeps its VIPs', async () => {
    await eventually('api has VIPs', () => vips('api.example.com').length === 2);
    const before = vips('api.example.com');
    const edited = entryYaml('api', 'api.example.com').replace(
      '  namespace: default\n',
      '  namespace: default\n  labels: { team: a }\n',
    );
    writeFileSync(path.join(dir, 'api.yaml'), edited);
    await eventually(
      'the edit is in',
      () => store.get('ServiceEntry', 'default', 'api')?.metadata.labels?.['team'] === 'a',
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(vips('api.example.com')).toEqual(before);
  });

  test('an entry added to the folder later gets the next address; a deleted one’s are quarantined, not handed to the next', async () => {
    await eventually('api has VIPs', () => vips('api.example.com').length === 2);
    writeFileSync(path.join(dir, 'web.yaml'), entryYaml('web', 'web.example.com'));
    await eventually('web has VIPs', () => vips('web.example.com').length === 2);
    expect(vips('web.example.com')).toEqual(['240.240.0.2', '2001:2::2']);
    rmSync(path.join(dir, 'api.yaml'));
    await eventually('api is gone', () => vips('api.example.com').length === 0);
    writeFileSync(path.join(dir, 'db.yaml'), entryYaml('db', 'db.example.com'));
    await eventually('db has VIPs', () => vips('db.example.com').length === 2);
    expect(vips('db.example.com')).toEqual(['240.240.0.3', '2001:2::3']);
  });
});
