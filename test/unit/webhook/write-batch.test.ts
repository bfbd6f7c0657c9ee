import type { TLSSocket } from 'node:tls';
import { MAX_BATCH_HOLD_MS, MAX_BATCHED_ANSWERS, WriteBatch } from '../../../src/webhook/connection';

/** What WriteBatch uses of a socket: Node's cork count, and a log of when each socket was uncorked. */
function fakeSocket(log: string[], name: string): TLSSocket {
  const s = {
    writableCorked: 0,
    cork() {
      s.writableCorked++;
    },
    uncork() {
      if (s.writableCorked === 0) return;
      s.writableCorked--;
      log.push(name);
    },
  };
  return s as unknown as TLSSocket;
}

const nextCheckPhase = () => new Promise<void>((r) => setImmediate(r));

describe('WriteBatch', () => {
  test('answers written in one round are held and sent together right after it', async () => {
    const log: string[] = [];
    const batch = new WriteBatch();
    const a = fakeSocket(log, 'a');
    const b = fakeSocket(log, 'b');
    batch.hold(a);
    batch.hold(b);
    // A second answer on the same socket in the same round joins the batch, corked once.
    batch.hold(a);
    expect(a.writableCorked).toBe(1);
    expect(log).toEqual([]);
    await nextCheckPhase();
    expect(log).toEqual(['a', 'b']);
    expect(a.writableCorked + b.writableCorked).toBe(0);
    // The next round opens a new batch.
    batch.hold(b);
    expect(b.writableCorked).toBe(1);
    await nextCheckPhase();
    expect(log).toEqual(['a', 'b', 'b']);
  });

  test(`at most MAX_BATCHED_ANSWERS (${MAX_BATCHED_ANSWERS}) answers are held: the next one sends the batch first`, () => {
    const log: string[] = [];
    const batch = new WriteBatch();
    const sockets = Array.from({ length: MAX_BATCHED_ANSWERS + 1 }, (_, i) => fakeSocket(log, `s${i}`));
    for (const s of sockets.slice(0, MAX_BATCHED_ANSWERS)) batch.hold(s);
    expect(log).toEqual([]);
    batch.hold(sockets[MAX_BATCHED_ANSWERS]!);
    expect(log).toEqual(sockets.slice(0, MAX_BATCHED_ANSWERS).map((_, i) => `s${i}`));
    expect(sockets[MAX_BATCHED_ANSWERS]!.writableCorked).toBe(1);
    batch.flush();
  });

  test(`an answer held longer than MAX_BATCH_HOLD_MS (${MAX_BATCH_HOLD_MS} ms) is sent when the next one is written`, () => {
    const log: string[] = [];
    const batch = new WriteBatch();
    batch.hold(fakeSocket(log, 'first'));
    // A review that takes longer than the hold time (a busy wait: no event loop turn in between).
    const start = performance.now();
    while (performance.now() - start <= MAX_BATCH_HOLD_MS + 1);
    batch.hold(fakeSocket(log, 'second'));
    expect(log).toEqual(['first']);
    batch.flush();
    expect(log).toEqual(['first', 'second']);
  });

  test('a socket already uncorked (ended or destroyed meanwhile) is passed over', async () => {
    const log: string[] = [];
    const batch = new WriteBatch();
    const a = fakeSocket(log, 'a');
    batch.hold(a);
    // socket.end() uncorks everything itself.
    a.uncork();
    await nextCheckPhase();
    expect(log).toEqual(['a']);
    expect(a.writableCorked).toBe(0);
  });
});
