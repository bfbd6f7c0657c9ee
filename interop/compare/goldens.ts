// istiod's answers for a fixture (recorded by its own ambient index, per ztunnel node) against
// istiod-ts's for the same folder, field by field in one shape. A difference either is a defect or is
// listed in known-differences.ts with the reason docs/compat.md gives.

import type { DerivedResources } from '../ours';
import { diff, type Difference } from './diff';
import { KNOWN_DIFFERENCES, type KnownDifference } from './known-differences';
import { addressFromGoProtoJson, authorizationFromGoProtoJson } from './proto-json';

export interface GoldenResource {
  name: string;
  resource: unknown;
}

export interface IstiodGolden {
  istioCommit: string;
  cluster: string;
  fixture: string;
  inputDigest: string;
  /** The switches the recorder ran under (the fixture's env); absent for none. */
  env?: Record<string, string>;
  nodes: Record<string, { address?: GoldenResource[]; authorization?: GoldenResource[] }>;
}

/** A multicluster golden: what a ztunnel of the local cluster (`cluster`) was sent. */
export interface IstiodMulticlusterGolden extends IstiodGolden {
  /** Each cluster as the recorder loaded it, the local one first. */
  clusters: { id: string; network: string; local: boolean }[];
}

export interface GoldenDifference extends Difference {
  node: string;
  type: 'address' | 'authorization';
  resource: string;
  /** The listed difference that explains it, if any. */
  known?: KnownDifference;
}

export interface GoldenReport {
  differences: GoldenDifference[];
  /** Listed differences that this fixture was expected to show and did not: the list is stale. */
  unused: KnownDifference[];
}

const TYPES = ['address', 'authorization'] as const;

export function compareWithGolden(
  golden: IstiodGolden,
  ours: DerivedResources,
  known: readonly KnownDifference[] = KNOWN_DIFFERENCES,
): GoldenReport {
  const differences: GoldenDifference[] = [];
  for (const [node, byType] of Object.entries(golden.nodes)) {
    for (const type of TYPES) {
      const fromGo = type === 'address' ? addressFromGoProtoJson : authorizationFromGoProtoJson;
      const theirs = new Map((byType[type] ?? []).map((r) => [r.name, fromGo(r.resource)]));
      const mine = ours[type];
      for (const name of new Set([...theirs.keys(), ...mine.keys()])) {
        for (const d of diff(mine.get(name), theirs.get(name))) {
          const entry: GoldenDifference = { ...d, node, type, resource: name };
          const listed = known.find((k) => k.fixtures.includes(golden.fixture) && k.matches(entry, golden.fixture));
          differences.push(listed ? { ...entry, known: listed } : entry);
        }
      }
    }
  }
  const used = new Set(differences.flatMap((d) => (d.known ? [d.known] : [])));
  const unused = known.filter((k) => k.fixtures.includes(golden.fixture) && !used.has(k));
  return { differences, unused };
}

export function renderGoldenDifference(d: GoldenDifference): string {
  const show = (v: unknown) => (v === undefined ? '(absent)' : JSON.stringify(v));
  return `${d.node} ${d.type} ${d.resource} ${d.path || '(whole resource)'}: istiod-ts ${show(d.ours)}, istiod ${show(d.theirs)}`;
}
