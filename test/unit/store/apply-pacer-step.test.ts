// The store's apply pacer (src/store/kube/apply-pacer.ts) sizes each step for at most
// STORE_APPLY_STEP_MS, so a step that costs several times its estimate overruns the turn by a few
// steps' worth, not by several whole turns.

import { STORE_APPLY_STEP_MS, STORE_APPLY_TURN_MS, type PacedSource } from '../../../src/store/kube/apply-pacer';
import { manualPacer } from '../../support/store/manual-pacer';

function harness() {
  const { clock, turns, pacer } = manualPacer();
  /** Runs every scheduled turn; returns each turn's duration on the clock. */
  const runAll = () => {
    const took: number[] = [];
    for (let fn = turns.shift(); fn; fn = turns.shift()) {
      const before = clock.t;
      fn();
      took.push(clock.t - before);
    }
    return took;
  };
  return { clock, pacer, runAll };
}

/** `n` changes, the i-th costing costOf(i) ms on the clock; records each step's size. */
function source(clock: { t: number }, n: number, costOf: (i: number) => number): PacedSource & { steps: number[] } {
  let done = 0;
  const steps: number[] = [];
  return {
    steps,
    drain(max: number) {
      const k = Math.min(max, n - done);
      for (let i = 0; i < k; i++) clock.t += costOf(done + i);
      done += k;
      steps.push(k);
      return k;
    },
    hasPending: () => done < n,
  };
}

test('a step is sized for at most STORE_APPLY_STEP_MS (5 ms): a turn is several steps', () => {
  expect(STORE_APPLY_STEP_MS).toBe(5);
  expect(STORE_APPLY_STEP_MS).toBeLessThan(STORE_APPLY_TURN_MS);
  const { clock, pacer, runAll } = harness();
  const s = source(clock, 20_000, () => 0.01);
  pacer.request(s);
  const turns = runAll();
  expect(s.steps.reduce((a, b) => a + b, 0)).toBe(20_000);
  // After the first step (its cost unknown), no step is sized for more than 5 ms at 0.01 ms per
  // change (the last of a turn gets what is left); sized for the whole turn, they were ~2,000.
  for (const k of s.steps.slice(1)) expect(k).toBeLessThanOrEqual(STORE_APPLY_STEP_MS / 0.01);
  expect(s.steps.length).toBeGreaterThanOrEqual(3 * turns.length);
  for (const ms of turns) expect(ms).toBeLessThanOrEqual(STORE_APPLY_TURN_MS + STORE_APPLY_STEP_MS);
});

test('changes that suddenly cost 6x their estimate overrun a turn by a few steps, not by several turns', () => {
  const { clock, pacer, runAll } = harness();
  // Cheap for a while (the estimate settles at 0.01 ms), then 6x as costly: a GC or incremental
  // marking inside the step, or the host slowing down.
  const s = source(clock, 20_000, (i) => (i < 5_000 ? 0.01 : 0.06));
  pacer.request(s);
  const turns = runAll();
  // Sized for what was left of the turn, a costly step of ~1,200 changes made a turn of 71 ms.
  expect(Math.max(...turns)).toBeLessThanOrEqual(STORE_APPLY_TURN_MS + 6 * STORE_APPLY_STEP_MS);
});
