// A short slice of `npm run fuzz`: every target, a fixed seed, a few thousand inputs. Every input
// must be accepted or cleanly refused: no crash, no 5xx, no disagreement with llhttp, no hang, and
// the heap must not keep growing. Each target must also produce both verdicts, which shows its
// mutations reach past the first check without losing every input to it.

import { logs } from '../../../src/log/logger';
import { formatFailure, MAX_HEAP_GROWTH_BYTES, runFuzz } from '../../../bench/reliability/fuzz-runner';
import { createTarget, TARGET_NAMES, TargetName } from '../../../bench/reliability/targets';

const SEED = 20260101;
/** Inputs per target; the manifest target is bound by the YAML library and gets fewer. */
const SLICE: Record<TargetName, number> = {
  admission: 2000,
  'delta-request': 2000,
  csr: 2000,
  manifest: 1000,
  http1: 2000,
};

beforeAll(() => logs.configure('default:none'));
afterAll(() => logs.configure('default:info'));

describe('fuzz slice', () => {
  test.each([...TARGET_NAMES])(
    '%s: every mutated input is accepted or cleanly refused',
    async (name) => {
      const target = await createTarget(name);
      try {
        const report = await runFuzz([target], { seed: SEED, inputs: new Map([[name, SLICE[name]]]) });
        const stats = report.targets[0]!;
        expect(report.failures.map(formatFailure)).toEqual([]);
        expect(stats.inputs).toBe(SLICE[name]);
        expect(stats.accepted).toBeGreaterThan(0);
        expect(stats.refused).toBeGreaterThan(0);
        expect(report.heap.growthMiB * 1048576).toBeLessThanOrEqual(MAX_HEAP_GROWTH_BYTES);
      } finally {
        await target.close?.();
      }
    },
    120_000,
  );
});
