import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL, XdsTypeUrl } from '../../../src/contract/xds-resources';
import { Clock, PushDebouncer, PushRequest } from '../../../src/xds/protocol/debounce';

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
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.timers.shift();
      this.time = next.at;
      next.fn();
    }
    this.time = end;
  }
}

const AFTER = 100;
const MAX = 1_000;

function setup() {
  const clock = new ManualClock();
  const pushes: { at: number; req: PushRequest }[] = [];
  const d = new PushDebouncer({ after: AFTER, max: MAX }, (req) => pushes.push({ at: clock.now(), req }), clock);
  const change = (name: string, typeUrl: XdsTypeUrl = ADDRESS_TYPE_URL) =>
    d.changed([{ typeUrl, updated: [name], removed: [] }]);
  return { clock, pushes, d, change };
}

const names = (req: PushRequest, type: string = ADDRESS_TYPE_URL) => [...(req.changes.get(type) ?? [])];

test('a lone change is pushed at once', () => {
  const { pushes, change } = setup();
  change('a');
  expect(pushes).toHaveLength(1);
  expect(names(pushes[0]!.req)).toEqual(['a']);
});

test('changes within the window after a push are merged and pushed once the window is quiet', () => {
  const { clock, pushes, change } = setup();
  change('a');
  clock.advance(10);
  change('b');
  clock.advance(50);
  change('c');
  expect(pushes).toHaveLength(1);
  clock.advance(AFTER - 1);
  expect(pushes).toHaveLength(1);
  clock.advance(1);
  expect(pushes).toHaveLength(2);
  expect(names(pushes[1]!.req).sort()).toEqual(['b', 'c']);
  expect(pushes[1]!.at - pushes[0]!.at).toBe(10 + 50 + AFTER);
});

test('a change after a quiet window since the last push is again pushed at once', () => {
  const { clock, pushes, change } = setup();
  change('a');
  clock.advance(AFTER);
  change('b');
  expect(pushes).toHaveLength(2);
});

test('steady churn is pushed about once per PILOT_DEBOUNCE_AFTER, never held back for a quiet window', () => {
  const { clock, pushes, change } = setup();
  for (let i = 0; i < 40; i++) {
    change(`n${i}`);
    clock.advance(AFTER / 4);
  }
  // 40 changes over 10 windows: one push per window, each carrying the changes merged in it.
  expect(pushes).toHaveLength(10);
  const gaps = pushes.slice(1).map((p, i) => p.at - pushes[i]!.at);
  expect(new Set(gaps)).toEqual(new Set([AFTER]));
  // When the churn stops, the last merged changes go out after a quiet window.
  clock.advance(AFTER);
  expect(pushes).toHaveLength(11);
  expect(pushes.reduce((n, p) => n + names(p.req).length, 0)).toBe(40);
});

test('PILOT_DEBOUNCE_MAX bounds the wait when it is shorter than the quiet window', () => {
  const clock = new ManualClock();
  const pushes: number[] = [];
  const d = new PushDebouncer({ after: 100, max: 30 }, () => pushes.push(clock.now()), clock);
  const change = () => d.changed([{ typeUrl: ADDRESS_TYPE_URL, updated: ['x'], removed: [] }]);
  change();
  clock.advance(10);
  change();
  clock.advance(10);
  change();
  clock.advance(100);
  expect(pushes).toEqual([1_000, 1_040]);
});

test('merged changes keep names per type and the time of the oldest change', () => {
  const { clock, pushes, change } = setup();
  change('a');
  clock.advance(10);
  change('x', AUTHORIZATION_TYPE_URL);
  clock.advance(10);
  change('y');
  clock.advance(AFTER);
  const req = pushes[1]!.req;
  expect(names(req)).toEqual(['y']);
  expect(names(req, AUTHORIZATION_TYPE_URL)).toEqual(['x']);
  expect(req.eventAt).toBe(1_010);
  expect(req.full).toBe(false);
});

test('a full push request is marked full and merged with pending changes', () => {
  const { clock, pushes, d, change } = setup();
  change('a');
  clock.advance(5);
  d.fullPush();
  change('b');
  clock.advance(AFTER);
  expect(pushes[1]!.req.full).toBe(true);
  expect(names(pushes[1]!.req)).toEqual(['b']);
});

test('after close nothing is pushed', () => {
  const { clock, pushes, d, change } = setup();
  change('a');
  change('b');
  d.close();
  clock.advance(MAX * 2);
  change('c');
  expect(pushes).toHaveLength(1);
});
