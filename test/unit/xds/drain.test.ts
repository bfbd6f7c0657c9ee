// The DrainMonitor cuts a response the client stopped taking, and only such a response.

import type { Clock } from '../../../src/xds/protocol/debounce';
import {
  CutReason,
  DEFAULT_FLOW_CONTROL,
  DrainMonitor,
  RESPONSE_DRAIN_DEADLINE_MS,
  RESPONSE_STALL_TIMEOUT_MS,
  SLOT_STALL_RELEASE_MS,
} from '../../../src/xds/protocol/drain';
import type { CallTransport } from '../../../src/xds/grpc/transport';

/** A clock the test advances by hand; timers fire in due order. */
class ManualClock implements Clock {
  time = 1_000;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private ids = 0;
  now(): number {
    return this.time;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const t = { at: this.time + ms, fn, id: ++this.ids };
    this.timers.push(t);
    return t.id;
  }
  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }
  /** Advances time; `each` runs before every timer, as the transport moves on between checks. */
  advance(ms: number, each: () => void = () => undefined): void {
    const end = this.time + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.timers.shift();
      this.time = Math.max(this.time, next.at); // a late timer runs late
      each();
      next.fn();
    }
    this.time = end;
  }
}

class FakeTransport implements CallTransport {
  written = 0;
  bytesWritten(): number {
    return this.written;
  }
  cancel(): void {}
}

function setup() {
  const clock = new ManualClock();
  const monitor = new DrainMonitor(DEFAULT_FLOW_CONTROL, clock);
  const cuts: CutReason[] = [];
  return { clock, monitor, cuts, onCut: (r: CutReason) => cuts.push(r) };
}

test(`a response whose connection writes nothing for RESPONSE_STALL_TIMEOUT_MS (${RESPONSE_STALL_TIMEOUT_MS} ms) is cut as stalled`, () => {
  const { clock, monitor, cuts, onCut } = setup();
  monitor.track(new FakeTransport(), onCut);
  clock.advance(RESPONSE_STALL_TIMEOUT_MS - 1);
  expect(cuts).toEqual([]);
  clock.advance(RESPONSE_STALL_TIMEOUT_MS);
  expect(cuts).toEqual(['stalled']);
  expect(monitor.size).toBe(0);
});

test(`a response that keeps moving is not cut before RESPONSE_DRAIN_DEADLINE_MS (${RESPONSE_DRAIN_DEADLINE_MS} ms), and is cut then`, () => {
  const { clock, monitor, cuts, onCut } = setup();
  const t = new FakeTransport();
  monitor.track(t, onCut);
  const trickle = () => (t.written += 10);
  clock.advance(RESPONSE_DRAIN_DEADLINE_MS - 1, trickle);
  expect(cuts).toEqual([]);
  clock.advance(RESPONSE_STALL_TIMEOUT_MS, trickle);
  expect(cuts).toEqual(['deadline']);
});

test('a response that drains in time is never cut', () => {
  const { clock, monitor, cuts, onCut } = setup();
  const drained = monitor.track(new FakeTransport(), onCut);
  clock.advance(RESPONSE_STALL_TIMEOUT_MS / 2);
  drained();
  clock.advance(RESPONSE_DRAIN_DEADLINE_MS * 2);
  expect(cuts).toEqual([]);
});

test('without a transport to ask, only the deadline cuts', () => {
  const { clock, monitor, cuts, onCut } = setup();
  monitor.track(undefined, onCut);
  clock.advance(RESPONSE_DRAIN_DEADLINE_MS - 1);
  expect(cuts).toEqual([]);
  clock.advance(RESPONSE_STALL_TIMEOUT_MS);
  expect(cuts).toEqual(['deadline']);
});

test('after an event-loop stall longer than the stall timeout, clients get a fresh stall timeout', () => {
  const { clock, monitor, cuts, onCut } = setup();
  monitor.track(new FakeTransport(), onCut);
  // The process was busy: the first check runs long after it was due, with nothing written meanwhile.
  clock.time += RESPONSE_STALL_TIMEOUT_MS * 2;
  clock.advance(0);
  expect(cuts).toEqual([]);
  clock.advance(RESPONSE_STALL_TIMEOUT_MS + RESPONSE_STALL_TIMEOUT_MS / 2);
  expect(cuts).toEqual(['stalled']);
});

test(`a slot-holding response with no progress for SLOT_STALL_RELEASE_MS (${SLOT_STALL_RELEASE_MS} ms) gives its slot up once and is kept until the stall timeout`, () => {
  expect(SLOT_STALL_RELEASE_MS).toBeLessThan(RESPONSE_STALL_TIMEOUT_MS);
  const { clock, monitor, cuts, onCut } = setup();
  let givenUp = 0;
  monitor.track(new FakeTransport(), onCut, () => (givenUp++, true));
  clock.advance(SLOT_STALL_RELEASE_MS - 1);
  expect(givenUp).toBe(0);
  clock.advance(1);
  expect(givenUp).toBe(1);
  clock.advance(RESPONSE_STALL_TIMEOUT_MS - SLOT_STALL_RELEASE_MS - 1);
  expect([givenUp, cuts]).toEqual([1, []]);
  clock.advance(1);
  expect([givenUp, cuts]).toEqual([1, ['stalled']]);
});

test('a stalled slot-holding response that cannot be kept without its slot is cut at once as crowded', () => {
  const { clock, monitor, cuts, onCut } = setup();
  monitor.track(new FakeTransport(), onCut, () => false);
  clock.advance(SLOT_STALL_RELEASE_MS);
  expect(cuts).toEqual(['crowded']);
  expect(monitor.size).toBe(0);
});

test('a slot-holding response that keeps moving keeps its slot', () => {
  const { clock, monitor, cuts, onCut } = setup();
  const t = new FakeTransport();
  const onSlotStall = jest.fn(() => true);
  const drained = monitor.track(t, onCut, onSlotStall);
  clock.advance(RESPONSE_STALL_TIMEOUT_MS * 2, () => (t.written += 10));
  drained();
  expect(onSlotStall).not.toHaveBeenCalled();
  expect(cuts).toEqual([]);
});
