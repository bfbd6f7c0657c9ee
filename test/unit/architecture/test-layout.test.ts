// The layout of test/ and bench/, read from their import statements. Fixtures used by more than one
// suite live in test/support/; a suite reaches only downward into it. A unit test that imports an
// integration fixture would drag a server, sockets or openssl into the fast suite, and moving or
// deleting an integration test would break unit tests that have nothing to do with it.

import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

/** Static imports and re-exports across lines (`import type` included), dynamic import() and require(). */
const IMPORT_RE =
  /^[ \t]*(?:import|export)\b(?:[^;'"]*?\bfrom[ \t]*)?['"]([^'"\n]+)['"]|\b(?:import|require)\(\s*['"]([^'"\n]+)['"]\s*\)/gm;

const rel = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  const pending = [dir];
  while (pending.length > 0) {
    const d = pending.pop()!;
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else if (entry.name.endsWith('.ts')) out.push(full);
    }
  }
  return out.sort();
}

/** Every relative import of every .ts file under the given top-level folders, as `from -> target` paths. */
function importEdges(...folders: string[]): { from: string; to: string }[] {
  const edges: { from: string; to: string }[] = [];
  for (const file of folders.flatMap((f) => tsFiles(path.join(ROOT, f)))) {
    for (const m of fs.readFileSync(file, 'utf8').matchAll(IMPORT_RE)) {
      const spec = m[1] ?? m[2]!;
      if (spec.startsWith('.')) edges.push({ from: rel(file), to: rel(path.resolve(path.dirname(file), spec)) });
    }
  }
  return edges;
}

const edges = importEdges('test', 'bench');

/** Edges from files under `from` into any of the `into` folders, printed so a failure names both files. */
function crossing(from: string, into: string[]): string[] {
  return edges
    .filter((e) => e.from.startsWith(from) && into.some((folder) => e.to.startsWith(folder)))
    .map((e) => `${e.from} -> ${e.to}`);
}

describe('imports under test/ and bench/', () => {
  it('are read, multi-line imports included', () => {
    // Guards the reader itself: if these edges vanished, the rules below would pass vacuously.
    const targetsOf = (from: string) => edges.filter((e) => e.from === from).map((e) => e.to);
    expect(targetsOf('test/unit/xds/push.test.ts')).toEqual(
      expect.arrayContaining(['src/xds/protocol/push', 'test/support/xds/fake-cache']),
    );
    expect(targetsOf('bench/scenarios/ca.ts')).toEqual(
      expect.arrayContaining(['test/support/ca/harness', 'test/support/ca/fixtures']),
    );
  });

  it('never reach test/integration/ or test/e2e/ from a unit test', () => {
    expect(crossing('test/unit/', ['test/integration/', 'test/e2e/'])).toEqual([]);
  });

  it('never reach test/unit/ from an integration or end-to-end test (shared fixtures live in test/support/)', () => {
    expect(crossing('test/integration/', ['test/unit/'])).toEqual([]);
    expect(crossing('test/e2e/', ['test/unit/', 'test/integration/'])).toEqual([]);
  });

  it('never reach a test suite from test/support/ (shared fixtures sit below every suite)', () => {
    expect(crossing('test/support/', ['test/unit/', 'test/integration/', 'test/e2e/'])).toEqual([]);
  });

  it('never reach a test suite from bench/ (benchmarks share fixtures through test/support/ only)', () => {
    expect(crossing('bench/', ['test/unit/', 'test/integration/', 'test/e2e/'])).toEqual([]);
  });
});
