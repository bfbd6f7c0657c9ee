// Turns what the goldens recorder wrote (istiod's answers per node, as Go protojson) into the
// committed golden: the fixture's name and input digest added, keys in a stable order, so a
// re-recording shows as a reviewable diff.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { IstiodGolden, IstiodMulticlusterGolden } from './compare/goldens';
import type { ClusterFolder } from './fixtures';
import { REPO_ROOT } from '../test/support/cli';

export const GOLDEN_DIR = path.join(REPO_ROOT, 'test/golden/istiod');
export const MULTICLUSTER_GOLDEN_DIR = path.join(REPO_ROOT, 'test/golden/istiod-multicluster');

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  return value;
}

type Recorded = Partial<IstiodGolden> & Record<string, unknown> & { istioCommit: string; nodes: IstiodGolden['nodes'] };

function readRecorded(recorded: string): Recorded {
  const raw = JSON.parse(readFileSync(recorded, 'utf8')) as Partial<IstiodGolden> & Record<string, unknown>;
  if (typeof raw.istioCommit !== 'string' || !/^[0-9a-f]{40}$/.test(raw.istioCommit))
    throw new Error(`${recorded}: istioCommit is not a commit id`);
  if (!raw.nodes || typeof raw.nodes !== 'object') throw new Error(`${recorded}: no nodes`);
  return raw as Recorded;
}

export function adoptGolden(
  recorded: string,
  fixture: string,
  inputDigest: string,
  env?: Readonly<Record<string, string>>,
): string {
  const raw = readRecorded(recorded);
  const golden: IstiodGolden = {
    istioCommit: raw.istioCommit,
    cluster: typeof raw.cluster === 'string' ? raw.cluster : 'Kubernetes',
    fixture,
    inputDigest,
    ...(env ? { env: { ...env } } : {}),
    nodes: raw.nodes,
  };
  const out = path.join(GOLDEN_DIR, `${fixture}.json`);
  writeFileSync(out, `${JSON.stringify(sortKeys(golden), null, 1)}\n`);
  return out;
}

/**
 * The multicluster recorder's output for a fixture laid out as `folders`: the recorder's clusters
 * must be the fixture's (same ids, networks and local one, in order), since its input paths are
 * scratch folders that the golden does not keep.
 */
export function adoptMulticlusterGolden(
  recorded: string,
  fixture: string,
  inputDigest: string,
  env: Readonly<Record<string, string>>,
  folders: readonly ClusterFolder[],
): string {
  const raw = readRecorded(recorded);
  const expected = folders.map((f) => ({ id: f.clusterId, network: f.network, local: f.local }));
  const got = (Array.isArray(raw['clusters']) ? (raw['clusters'] as Record<string, unknown>[]) : []).map((c) => ({
    id: c['id'],
    network: c['network'],
    local: c['local'],
  }));
  if (JSON.stringify(got) !== JSON.stringify(expected))
    throw new Error(`${recorded}: clusters ${JSON.stringify(got)} are not the fixture's ${JSON.stringify(expected)}`);
  const local = expected.find((c) => c.local);
  if (!local || raw.cluster !== local.id)
    throw new Error(`${recorded}: recorded for cluster ${String(raw.cluster)}, not ${String(local?.id)}`);
  const golden: IstiodMulticlusterGolden = {
    istioCommit: raw.istioCommit,
    cluster: local.id,
    clusters: expected,
    fixture,
    inputDigest,
    env: { ...env },
    nodes: raw.nodes,
  };
  mkdirSync(MULTICLUSTER_GOLDEN_DIR, { recursive: true });
  const out = path.join(MULTICLUSTER_GOLDEN_DIR, `${fixture}.json`);
  writeFileSync(out, `${JSON.stringify(sortKeys(golden), null, 1)}\n`);
  return out;
}
