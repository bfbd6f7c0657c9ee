// Differences from istiod's answers that are kept on purpose. Each one names the fixtures that show
// it, says exactly which resources and fields it covers, and points at its row in docs/compat.md.
// A difference not matched here fails the goldens test; an entry that its fixtures no longer show
// fails it too, so the list cannot outlive the difference.

import type { GoldenDifference } from './goldens';

export interface KnownDifference {
  /** The row in docs/compat.md that says why. */
  compat: string;
  fixtures: readonly string[];
  matches(d: GoldenDifference, fixture: string): boolean;
}

export const KNOWN_DIFFERENCES: readonly KnownDifference[] = [];
