// istiod's own ambient index as the judge: for each fixture, the Address and Authorization resources
// that istiod's fake discovery server sent a ztunnel on each node (recorded by docs/interop.md's
// part 3, with the istio commit in the file) against what istiod-ts derives from the same folder.
// Every difference must be listed in interop/compare/known-differences.ts with its docs/compat.md row.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { compareWithGolden, renderGoldenDifference, type IstiodGolden } from '../../interop/compare/goldens';
import { fixtureNamed, GOLDEN_FIXTURES, materialize } from '../../interop/fixtures';
import { deriveFromFolder, featuresFromEnv } from '../../interop/ours';

const GOLDENS = path.join(__dirname, '../golden/istiod');
const files = readdirSync(GOLDENS).filter((f) => f.endsWith('.json'));

describe("istiod's goldens", () => {
  it('has a golden for every fixture', () => {
    expect(files.sort()).toEqual(GOLDEN_FIXTURES.map((f) => `${f.name}.json`).sort());
  });

  for (const file of files) {
    it(`${file}: istiod-ts answers every node as istiod did, but for the listed differences`, async () => {
      const golden = JSON.parse(readFileSync(path.join(GOLDENS, file), 'utf8')) as IstiodGolden;
      const dir = mkdtempSync(path.join(tmpdir(), `golden-${golden.fixture}-`));
      try {
        const fixture = fixtureNamed(golden.fixture);
        const digest = materialize(fixture, dir);
        // A changed fixture (or switch) needs a new golden from istiod, not a new reading of the old one.
        expect({ fixture: golden.fixture, digest, env: golden.env ?? {} }).toEqual({
          fixture: golden.fixture,
          digest: golden.inputDigest,
          env: fixture.env ?? {},
        });
        expect(Object.keys(golden.nodes).length).toBeGreaterThan(0);
        const report = compareWithGolden(
          golden,
          await deriveFromFolder(dir, golden.cluster, featuresFromEnv(fixture.env)),
        );
        const unexplained = report.differences.filter((d) => !d.known).map(renderGoldenDifference);
        expect(unexplained).toEqual([]);
        expect(report.unused.map((k) => k.compat)).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
