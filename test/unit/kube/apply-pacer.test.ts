import {
  STORE_APPLY_FIRST_STEP,
  STORE_APPLY_MAX_CHUNK,
  STORE_APPLY_MIN_CHUNK,
  STORE_APPLY_TURN_MS,
  type PacedSource,
} from '../../../src/store/kube/apply-pacer';
import { manualPacer } from '../../support/store/manual-pacer';

/** A fake clock and a queue of deferred turns the test runs one at a time. */
function harness() {
  const { clock, turns, pacer } = manualPacer();
  const runTurn = () => {
    const fn = turns.shift();
    if (!fn) throw new Error('no turn scheduled');
    fn();
  };
  return { clock, turns, pacer, runTurn };
}

/** A source of `n` changes costing `costMs` each on the clock; records each step's size. */
function source(clock: { t: number }, n: number, costMs: number): PacedSource & { steps: number[] } {
  let left = n;
  const steps: number[] = [];
  return {
    steps,
    drain(max: number) {
      const k = Math.min(max, left);
      left -= k;
      clock.t += k * costMs;
      steps.push(k);
      return k;
    },
    hasPending: () => left > 0,
  };
}

test("the limits are named: a 20 ms turn, steps of 16 to 2000 changes, 16 changes in a source's first step", () => {
  expect([STORE_APPLY_TURN_MS, STORE_APPLY_MIN_CHUNK, STORE_APPLY_MAX_CHUNK, STORE_APPLY_FIRST_STEP]).toEqual([
    20, 16, 2000, 16,
  ]);
});

test('nothing is applied in the turn that asks: the changes wait for a later turn', () => {
  const { clock, turns, pacer } = harness();
  const s = source(clock, 10, 0.1);
  pacer.request(s);
  pacer.request(s);
  expect(s.steps).toEqual([]);
  expect(turns).toHaveLength(1);
});

test('each turn spends about its budget: steps are sized from the measured cost per change', () => {
  const { clock, turns, pacer, runTurn } = harness();
  const s = source(clock, 5000, 1);
  pacer.request(s);
  const perTurn: number[] = [];
  while (turns.length > 0) {
    const before = clock.t;
    runTurn();
    perTurn.push(clock.t - before);
  }
  expect(s.steps.reduce((a, b) => a + b, 0)).toBe(5000);
  // The first step is small (its cost unknown); a step that costs more than estimated corrects
  // the estimate at once, so every turn fits the budget but for one least step.
  expect(s.steps[0]).toBe(STORE_APPLY_FIRST_STEP);
  for (const ms of perTurn) expect(ms).toBeLessThanOrEqual(STORE_APPLY_TURN_MS + STORE_APPLY_MIN_CHUNK * 1);
  expect(pacer.costPerChangeMs).toBe(1);
});

test('kinds share one budget per turn, round-robin', () => {
  const { clock, pacer, runTurn } = harness();
  const pods = source(clock, 10_000, 0.01);
  const services = source(clock, 10_000, 0.01);
  pacer.request(pods);
  pacer.request(services);
  for (let i = 0; i < 5; i++) runTurn();
  clock.t = 0;
  const before = [pods.steps.length, services.steps.length];
  runTurn();
  expect(clock.t).toBeLessThanOrEqual(STORE_APPLY_TURN_MS + STORE_APPLY_MIN_CHUNK * 0.01);
  expect(pods.steps.length).toBeGreaterThan(before[0]!);
  expect(services.steps.length).toBeGreaterThan(before[1]!);
});

test('a store slower than the whole budget still advances STORE_APPLY_MIN_CHUNK changes per turn', () => {
  const { clock, pacer, runTurn } = harness();
  const s = source(clock, 200, 50);
  pacer.request(s);
  for (let i = 0; i < 4; i++) runTurn();
  expect(s.steps.slice(1)).toEqual([STORE_APPLY_MIN_CHUNK, STORE_APPLY_MIN_CHUNK, STORE_APPLY_MIN_CHUNK]);
});

test('a fast store is capped at STORE_APPLY_MAX_CHUNK per step', () => {
  const { clock, pacer, runTurn } = harness();
  const s = source(clock, 100_000, 1e-6);
  pacer.request(s);
  // On this clock the changes cost next to nothing, so one turn takes them all, in growing steps.
  runTurn();
  expect(Math.max(...s.steps)).toBe(STORE_APPLY_MAX_CHUNK);
});

test('a source that applies nothing leaves the queue until it asks again', () => {
  const { clock, turns, pacer, runTurn } = harness();
  const stuck: PacedSource = { drain: () => 0, hasPending: () => true };
  pacer.request(stuck);
  runTurn();
  expect(turns).toHaveLength(0);
  expect(clock.t).toBe(0);
});

test("each source's steps are sized from its own cost: cheap pods do not make a step of costly Services overrun", () => {
  const { clock, pacer, runTurn } = harness();
  const pods = source(clock, 100_000, 0.01);
  pacer.request(pods);
  for (let i = 0; i < 3; i++) runTurn();
  const serviceCostMs = 0.2;
  const services = source(clock, 5_000, serviceCostMs);
  pacer.request(services);
  const perTurn: number[] = [];
  for (let i = 0; i < 6; i++) {
    const before = clock.t;
    runTurn();
    perTurn.push(clock.t - before);
  }
  // The Services' first step is small; sized by the pods' 0.01 ms it would have been 2,000
  // changes, 400 ms on this clock. A turn overruns by at most one least step.
  expect(services.steps[0]).toBe(STORE_APPLY_FIRST_STEP);
  for (const ms of perTurn) expect(ms).toBeLessThanOrEqual(STORE_APPLY_TURN_MS + STORE_APPLY_MIN_CHUNK * serviceCostMs);
});
