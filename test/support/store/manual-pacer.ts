// An apply pacer (src/store/kube/apply-pacer.ts) on a fake clock: the turns it defers wait in
// `turns` until the test runs them, and `clock.t` moves only when the test (or a source) moves it.

import { ApplyPacer } from '../../../src/store/kube/apply-pacer';

export function manualPacer() {
  const clock = { t: 0 };
  const turns: (() => void)[] = [];
  const pacer = new ApplyPacer({ now: () => clock.t, defer: (fn) => turns.push(fn) });
  return { clock, turns, pacer };
}
