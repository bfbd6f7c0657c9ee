// istiod's own ambient index as the judge of a multicluster, multi-network mesh: for each multicluster
// fixture, the Address and Authorization resources that istiod's fake discovery server sent a ztunnel
// of the local cluster when the other clusters were attached through remote secrets (recorded as
// docs/interop.md's part 3b says, with the istio commit in the file), against what istiod-ts derives
// from the same folders. Every difference must be listed in interop/compare/known-differences.ts.
// The fixture checks come first: a generator change that would make these goldens stale fails there,
// not as a wall of differences.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  compareWithGolden,
  renderGoldenDifference,
  type IstiodMulticlusterGolden,
} from '../../interop/compare/goldens';
import {
  materializeMulticluster,
  MULTICLUSTER_FIXTURES,
  multiclusterFixtureNamed,
  type MulticlusterLayout,
} from '../../interop/fixtures';
import { deriveFromClusterFolders, featuresFromEnv } from '../../interop/ours';

const GOLDENS = path.join(__dirname, '../golden/istiod-multicluster');
const files = readdirSync(GOLDENS).filter((f) => f.endsWith('.json'));

function readGolden(file: string): IstiodMulticlusterGolden {
  return JSON.parse(readFileSync(path.join(GOLDENS, file), 'utf8')) as IstiodMulticlusterGolden;
}

/** Lays the golden's fixture out in a scratch folder for `use`, then removes it. */
async function withLayout<T>(
  golden: IstiodMulticlusterGolden,
  use: (layout: MulticlusterLayout) => Promise<T> | T,
): Promise<T> {
  const dir = mkdtempSync(path.join(tmpdir(), `golden-mc-${golden.fixture}-`));
  try {
    return await use(materializeMulticluster(multiclusterFixtureNamed(golden.fixture), dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("istiod's multicluster goldens: fixtures", () => {
  it('has a golden for every multicluster fixture', () => {
    expect(files.sort()).toEqual(MULTICLUSTER_FIXTURES.map((f) => `${f.name}.json`).sort());
  });

  for (const file of files) {
    it(`${file}: was recorded from the fixture's current folders, clusters and switches`, async () => {
      const golden = readGolden(file);
      const fixture = multiclusterFixtureNamed(golden.fixture);
      await withLayout(golden, (layout) => {
        // A changed fixture (or switch) needs a new golden from istiod, not a new reading of the old one.
        expect({
          digest: layout.digest,
          clusters: layout.folders.map((f) => ({ id: f.clusterId, network: f.network, local: f.local })),
          cluster: layout.folders[0]?.clusterId,
          env: fixture.env,
        }).toEqual({ digest: golden.inputDigest, clusters: golden.clusters, cluster: golden.cluster, env: golden.env });
        expect(Object.keys(golden.nodes).length).toBeGreaterThan(0);
      });
    });
  }
});

describe("istiod's multicluster goldens: istiod-ts's answers", () => {
  for (const file of files) {
    it(`${file}: istiod-ts answers every node of the local cluster as istiod did, but for the listed differences`, async () => {
      const golden = readGolden(file);
      const fixture = multiclusterFixtureNamed(golden.fixture);
      const ours = await withLayout(golden, (layout) =>
        deriveFromClusterFolders(
          layout.folders.map((f) => ({ clusterId: f.clusterId, dir: f.dir, local: f.local })),
          featuresFromEnv(fixture.env),
          layout.meshConfigFile,
        ),
      );
      const report = compareWithGolden(golden, ours);
      const unexplained = report.differences.filter((d) => !d.known).map(renderGoldenDifference);
      expect(unexplained).toEqual([]);
      expect(report.unused.map((k) => k.compat)).toEqual([]);
    });
  }
});
