// The apply pacer's budget is per event-loop iteration: what ran between two turns (list pages
// parsed, answers written, a GC) is charged to the next turn, down to STORE_APPLY_MIN_TURN_MS.

import {
  STORE_APPLY_MIN_TURN_MS,
  STORE_APPLY_STEP_MS,
  STORE_APPLY_TURN_MS,
  type PacedSource,
} from '../../../src/store/kube/apply-pacer';
import { manualPacer } from '../../support/store/manual-pacer';

function harness() {
  const { clock, turns, pacer } = manualPacer();
  /** Runs the next turn `gapMs` after the last one ended; returns how long it took on the clock. */
  const turnAfter = (gapMs: number) => {
    clock.t += gapMs;
    const fn = turns.shift();
    if (!fn) throw new Error('no turn scheduled');
    const before = clock.t;
    fn();
    return clock.t - before;
  };
  return { clock, pacer, turns, turnAfter };
}

/** `n` changes of 0.01 ms each. */
function source(clock: { t: number }, n: number): PacedSource {
  let left = n;
  return {
    drain(max: number) {
      const k = Math.min(max, left);
      left -= k;
      clock.t += k * 0.01;
      return k;
    },
    hasPending: () => left > 0,
  };
}

test('the limits are named: at least a 5 ms turn whatever else the iteration ran', () => {
  expect(STORE_APPLY_MIN_TURN_MS).toBe(5);
  expect(STORE_APPLY_MIN_TURN_MS).toBeLessThan(STORE_APPLY_TURN_MS);
});

test('time spent elsewhere between two turns is taken from the next turn', () => {
  const { clock, pacer, turnAfter } = harness();
  pacer.request(source(clock, 100_000));
  for (let i = 0; i < 3; i++) turnAfter(0);
  // Nothing else ran: a whole turn (one step's overrun at most).
  expect(turnAfter(0)).toBeGreaterThanOrEqual(STORE_APPLY_TURN_MS);
  expect(turnAfter(0)).toBeLessThanOrEqual(STORE_APPLY_TURN_MS + STORE_APPLY_STEP_MS);
  // 12 ms of other work since the last turn: the iteration stays within the budget.
  const after12 = turnAfter(12);
  expect(after12).toBeGreaterThanOrEqual(STORE_APPLY_TURN_MS - 12);
  expect(after12).toBeLessThanOrEqual(STORE_APPLY_TURN_MS - 12 + STORE_APPLY_STEP_MS);
  // 60 ms elsewhere (a long GC): the least turn still runs, so the backlog moves.
  const after60 = turnAfter(60);
  expect(after60).toBeGreaterThanOrEqual(STORE_APPLY_MIN_TURN_MS);
  expect(after60).toBeLessThanOrEqual(STORE_APPLY_MIN_TURN_MS + STORE_APPLY_STEP_MS);
});

test('a turn asked for after the pacer went quiet gets the whole budget', () => {
  const { clock, pacer, turns, turnAfter } = harness();
  pacer.request(source(clock, 100));
  turnAfter(0);
  expect(turns).toHaveLength(0);
  // Asked for again long after: the time between was idle, not another task's, and is not charged.
  pacer.request(source(clock, 100_000));
  expect(turnAfter(1000)).toBeGreaterThanOrEqual(STORE_APPLY_TURN_MS);
});
