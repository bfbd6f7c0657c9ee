// Merging our conditions into an object's status.conditions: ours are replaced, added or pruned;
// every other writer's condition stays as it was, where it was. lastTransitionTime moves only when
// a condition's status changes (the Kubernetes convention), so a reworded message is not a transition.

import type { DesiredCondition } from './conditions';

/** A condition as written: the desired one plus when its status last changed; an empty message is left out. */
export interface Condition extends Omit<DesiredCondition, 'message'> {
  lastTransitionTime: string;
  message?: string;
}

export interface MergeResult {
  /** The full list to write back. */
  conditions: unknown[];
  /** False when the object already carries exactly these conditions: no write is needed. */
  changed: boolean;
}

type Fields = Record<string, unknown>;
const isFields = (v: unknown): v is Fields => v !== null && typeof v === 'object' && !Array.isArray(v);

/** metav1.Time: RFC 3339 in UTC, whole seconds. */
export function kubeTime(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * The field order of istiod's IstioCondition, observedGeneration omitted when absent and message
 * when empty (both omitempty there: a WaypointAccepted with every target bound has no message).
 */
function written(d: DesiredCondition, lastTransitionTime: string): Condition {
  return {
    type: d.type,
    status: d.status,
    lastTransitionTime,
    reason: d.reason,
    ...(d.message !== '' ? { message: d.message } : {}),
    ...(d.observedGeneration !== undefined ? { observedGeneration: d.observedGeneration } : {}),
  };
}

/** Same status, reason, message and observedGeneration (lastTransitionTime is not compared). */
function same(current: Fields, d: DesiredCondition): boolean {
  return (
    current['status'] === d.status &&
    current['reason'] === d.reason &&
    (current['message'] ?? '') === d.message &&
    (current['observedGeneration'] ?? undefined) === d.observedGeneration
  );
}

/**
 * Merges `desired` (our conditions that apply now) into `existing` (the object's
 * status.conditions, whatever shape it has). Types in `owned` that are not desired are pruned.
 */
export function mergeConditions(
  existing: unknown,
  desired: readonly DesiredCondition[],
  owned: readonly string[],
  now: Date,
): MergeResult {
  const current = Array.isArray(existing) ? (existing as unknown[]) : [];
  const wanted = new Map(desired.map((d) => [d.type, d]));
  const placed = new Set<string>();
  const out: unknown[] = [];
  // A status.conditions that is not a list is replaced only when there is something of ours to write.
  let changed = false;
  for (const c of current) {
    const type = isFields(c) && typeof c['type'] === 'string' ? c['type'] : undefined;
    if (type === undefined || !owned.includes(type)) {
      out.push(c);
      continue;
    }
    const d = wanted.get(type);
    // Ours, but no longer applies, or a second copy of one type: pruned.
    if (!d || placed.has(type) || !isFields(c)) {
      changed = true;
      continue;
    }
    placed.add(type);
    const keepTime = c['status'] === d.status && typeof c['lastTransitionTime'] === 'string';
    if (!same(c, d) || !keepTime) changed = true;
    out.push(written(d, keepTime ? (c['lastTransitionTime'] as string) : kubeTime(now)));
  }
  for (const d of desired) {
    if (placed.has(d.type)) continue;
    placed.add(d.type);
    changed = true;
    out.push(written(d, kubeTime(now)));
  }
  return { conditions: out, changed };
}

/** Only the conditions of `owned` types, for the debug page. */
export function ownedConditions(existing: unknown, owned: readonly string[]): unknown[] {
  if (!Array.isArray(existing)) return [];
  return (existing as unknown[]).filter(
    (c) => isFields(c) && typeof c['type'] === 'string' && owned.includes(c['type']),
  );
}
