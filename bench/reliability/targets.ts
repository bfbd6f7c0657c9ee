// Every fuzz target by name, in the order a full run takes them.

import { admissionTarget } from './fuzz-admission';
import { csrTarget } from './fuzz-csr';
import { deltaRequestTarget } from './fuzz-delta-request';
import { http1Target } from './fuzz-http1';
import { manifestTarget } from './fuzz-manifest';
import type { FuzzTarget } from './target';

export const TARGET_NAMES = ['admission', 'delta-request', 'csr', 'manifest', 'http1'] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

/**
 * Share of a run's inputs per target. The cheap in-process parsers get more; the manifest target
 * is bound by the YAML library (~250 inputs/s) and the xDS target runs a whole stream per input,
 * so an even split would make a 1M run take most of an hour for no more coverage.
 */
export const TARGET_WEIGHTS: Readonly<Record<TargetName, number>> = {
  admission: 0.3,
  'delta-request': 0.1,
  csr: 0.2,
  manifest: 0.1,
  http1: 0.3,
};

/** Inputs per target for a run of `total` over `names`, by weight. */
export function splitInputs(total: number, names: readonly TargetName[]): Map<TargetName, number> {
  const sum = names.reduce((n, t) => n + TARGET_WEIGHTS[t], 0);
  return new Map(names.map((t) => [t, Math.ceil((total * TARGET_WEIGHTS[t]) / sum)]));
}

export async function createTarget(name: TargetName): Promise<FuzzTarget> {
  switch (name) {
    case 'admission':
      return admissionTarget();
    case 'delta-request':
      return deltaRequestTarget();
    case 'csr':
      return csrTarget();
    case 'manifest':
      return manifestTarget();
    case 'http1':
      return http1Target();
  }
}
