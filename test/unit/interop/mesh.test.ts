// The generated mesh is the one input istiod-ts, istiod's recorder and ztunnel all read: it must be
// the same bytes for the same options, and fit local mode's per-file limits at any size.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { generateMesh } from '../../../interop/mesh/generate';
import { folderDigest, OBJECTS_PER_FILE, writeMesh } from '../../../interop/mesh/write';
import { MAX_MANIFEST_BYTES, MAX_MANIFEST_OBJECTS } from '../../../src/store/local/limits';

let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'mesh-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('the same options give the same folder, byte for byte', () => {
  writeMesh(path.join(dir, 'a'), generateMesh({ workloads: 200, nodes: 3, namespaces: 4 }));
  writeMesh(path.join(dir, 'b'), generateMesh({ workloads: 200, nodes: 3, namespaces: 4 }));
  expect(folderDigest(path.join(dir, 'a'))).toBe(folderDigest(path.join(dir, 'b')));
});

test('uses every kind the ambient index derives from', () => {
  const kinds = new Set(generateMesh({ workloads: 60, nodes: 3, namespaces: 4 }).map((m) => m.kind));
  expect([...kinds].sort()).toEqual(
    [
      'AuthorizationPolicy',
      'EndpointSlice',
      'Gateway',
      'Namespace',
      'Node',
      'PeerAuthentication',
      'Pod',
      'Service',
      'ServiceEntry',
      'WorkloadEntry',
    ].sort(),
  );
});

test('splits a kind over files that each stay within local mode limits', () => {
  expect(OBJECTS_PER_FILE).toBeLessThanOrEqual(MAX_MANIFEST_OBJECTS);
  const mesh = generateMesh({ workloads: 12_000, nodes: 3, namespaces: 4 });
  writeMesh(dir, mesh);
  const podFiles = readdirSync(dir).filter((f) => f.startsWith('pod'));
  expect(podFiles.length).toBe(Math.ceil(mesh.filter((m) => m.kind === 'Pod').length / OBJECTS_PER_FILE));
  for (const f of podFiles) {
    const text = readFileSync(path.join(dir, f), 'utf8');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_MANIFEST_BYTES);
    // writeMesh separates documents with a bare '---' line.
    expect(text.split('\n---\n').length).toBeLessThanOrEqual(OBJECTS_PER_FILE);
  }
});
