// The process's pacer clock (realClock) takes the turns in the timers phase, so work that I/O
// queues for the check phase (the webhook's write batch is uncorked by an immediate queued while
// its request is read) runs right after that I/O, not after one more whole turn.

import { stat } from 'node:fs';
import { ApplyPacer, realClock, STORE_APPLY_TURN_MS, type PacedSource } from '../../../src/store/kube/apply-pacer';

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

test('an immediate queued by I/O that completed during a turn runs before the next turn', async () => {
  const events: string[] = [];
  let turns = 0;
  const pacer = new ApplyPacer({
    now: () => realClock.now(),
    defer: (fn) =>
      realClock.defer(() => {
        events.push(`turn ${++turns}`);
        // I/O that completes while the first turn runs: its callback runs in the poll phase after
        // the turn and queues an answer for the check phase.
        if (turns === 1) stat(__filename, () => setImmediate(() => events.push('answer')));
        fn();
      }),
  });
  // 2 ms per change, three turns' worth: whatever the step sizes, each turn is several steps.
  let left = Math.ceil((3 * STORE_APPLY_TURN_MS) / 2);
  await new Promise<void>((resolve) => {
    const source: PacedSource = {
      drain(max: number) {
        const k = Math.min(max, left);
        for (let i = 0; i < k; i++) spin(2);
        left -= k;
        if (left === 0) setImmediate(resolve);
        return k;
      },
      hasPending: () => left > 0,
    };
    pacer.request(source);
  });
  expect(turns).toBeGreaterThanOrEqual(2);
  // With the turn an immediate, the next turn was queued ahead of the I/O's answer and ran first.
  expect(events.slice(0, 3)).toEqual(['turn 1', 'answer', 'turn 2']);
});
