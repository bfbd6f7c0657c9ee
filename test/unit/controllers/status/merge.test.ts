// Merging our conditions into status.conditions: others' stay, ours are replaced or pruned, and
// lastTransitionTime moves only when the status does.

import { kubeTime, mergeConditions, ownedConditions } from '../../../../src/controllers/status/merge';
import type { DesiredCondition } from '../../../../src/controllers/status/conditions';

const OWNED = ['ZtunnelAccepted'];
const NOW = new Date('2026-12-03T10:00:00.123Z');
const accepted: DesiredCondition = {
  type: 'ZtunnelAccepted',
  status: 'True',
  reason: 'Accepted',
  message: 'attached to ztunnel',
  observedGeneration: 2,
};
const written = { ...accepted, lastTransitionTime: '2026-01-01T00:00:00Z' };
const theirs = {
  type: 'WaypointAccepted',
  status: 'True',
  reason: 'Accepted',
  message: 'bound',
  lastTransitionTime: 'x',
};

describe('merging status conditions', () => {
  test('an empty message is left out (istiod’s omitempty), and a stored condition without one is the same', () => {
    const quiet: DesiredCondition = { type: 'ZtunnelAccepted', status: 'True', reason: 'Accepted', message: '' };
    const added = mergeConditions([], [quiet], OWNED, NOW);
    expect(added.conditions).toEqual([
      { type: 'ZtunnelAccepted', status: 'True', lastTransitionTime: '2026-12-03T10:00:00Z', reason: 'Accepted' },
    ]);
    expect(mergeConditions(added.conditions, [quiet], OWNED, NOW).changed).toBe(false);
  });

  test('a new condition is added after the others, stamped now in whole seconds', () => {
    const r = mergeConditions([theirs], [accepted], OWNED, NOW);
    expect(r).toEqual({
      changed: true,
      conditions: [theirs, { ...accepted, lastTransitionTime: '2026-12-03T10:00:00Z' }],
    });
    expect(kubeTime(NOW)).toBe('2026-12-03T10:00:00Z');
  });

  test('an object already carrying the condition needs no write', () => {
    expect(mergeConditions([written, theirs], [accepted], OWNED, NOW)).toEqual({
      changed: false,
      conditions: [written, theirs],
    });
  });

  test('a new message or generation with the same status keeps lastTransitionTime', () => {
    const r = mergeConditions([written], [{ ...accepted, message: 'other', observedGeneration: 3 }], OWNED, NOW);
    expect(r.changed).toBe(true);
    expect(r.conditions).toEqual([
      { ...accepted, message: 'other', observedGeneration: 3, lastTransitionTime: written.lastTransitionTime },
    ]);
  });

  test('a status change moves lastTransitionTime to now', () => {
    const r = mergeConditions([written], [{ ...accepted, status: 'False' }], OWNED, NOW);
    expect(r.conditions).toEqual([{ ...accepted, status: 'False', lastTransitionTime: '2026-12-03T10:00:00Z' }]);
  });

  test('our condition that no longer applies is pruned; others are kept in place', () => {
    expect(mergeConditions([theirs, written, 'junk'], [], OWNED, NOW)).toEqual({
      changed: true,
      conditions: [theirs, 'junk'],
    });
    expect(mergeConditions([theirs], [], OWNED, NOW)).toEqual({ changed: false, conditions: [theirs] });
  });

  test('a second copy of our type is dropped', () => {
    expect(mergeConditions([written, written], [accepted], OWNED, NOW)).toEqual({
      changed: true,
      conditions: [written],
    });
  });

  test('conditions that are not a list are replaced only when we have something to write', () => {
    expect(mergeConditions('oops', [], OWNED, NOW)).toEqual({ changed: false, conditions: [] });
    expect(mergeConditions('oops', [accepted], OWNED, NOW).changed).toBe(true);
  });

  test('the debug view keeps only our types', () => {
    expect(ownedConditions([theirs, written, 7], OWNED)).toEqual([written]);
    expect(ownedConditions(undefined, OWNED)).toEqual([]);
  });
});
