// Turns what the goldens recorder wrote (istiod's answers per node, as Go protojson) into the
// committed golden: the fixture's name and input digest added, keys in a stable order, so a
// re-recording shows as a reviewable diff.

import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { IstiodGolden } from './compare/goldens';
import { REPO_ROOT } from '../test/support/cli';

export const GOLDEN_DIR = path.join(REPO_ROOT, 'test/golden/istiod');

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

export function adoptGolden(
  recorded: string,
  fixture: string,
  inputDigest: string,
  env?: Readonly<Record<string, string>>,
): string {
  const raw = JSON.parse(readFileSync(recorded, 'utf8')) as Partial<IstiodGolden> & Record<string, unknown>;
  if (typeof raw.istioCommit !== 'string' || !/^[0-9a-f]{40}$/.test(raw.istioCommit))
    throw new Error(`${recorded}: istioCommit is not a commit id`);
  if (!raw.nodes || typeof raw.nodes !== 'object') throw new Error(`${recorded}: no nodes`);
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
