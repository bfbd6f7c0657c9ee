import {
  FairnessDenial,
  NODE_QUEUE_LIMIT,
  NODE_RATE_MIN_BURST,
  NODE_RATE_WINDOW_MS,
  NodeFairQueue,
} from '../../../src/ca/signing/fair-queue';

/** Tasks that finish only when the test says so; `started` records which node ran, in order. */
function gatedTasks() {
  const started: string[] = [];
  const gates: (() => void)[] = [];
  const task = (node: string) => () => {
    started.push(node);
    return new Promise<string>((resolve) => gates.push(() => resolve(node)));
  };
  /** Finishes the oldest running task and lets the queue hand its slot on. */
  const finishOne = async () => {
    gates.shift()?.();
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { started, task, finishOne };
}

describe('NodeFairQueue', () => {
  test('alone, a call starts at once, without waiting for a turn', () => {
    const q = new NodeFairQueue({ slots: 2 });
    let ran = false;
    void q.run('node-a', () => {
      ran = true;
      return Promise.resolve();
    });
    expect(ran).toBe(true);
  });

  test('work-conserving: a lone node runs as many calls at once as there are slots, with no per-node cap', async () => {
    const q = new NodeFairQueue({ slots: 64 });
    const { started, task, finishOne } = gatedTasks();
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 80; i++) calls.push(q.run('node-a', task('node-a')));
    // Every slot is taken by the one node at once; only the calls beyond the slots wait.
    expect(started).toHaveLength(64);
    expect(q.view().running).toBe(64);
    expect(q.view().queued).toBe(16);
    // A finished call's slot goes straight to the same node's next call.
    await finishOne();
    expect(started).toHaveLength(65);
    while (started.length < 80) await finishOne();
    for (let i = 0; i < 64; i++) await finishOne();
    await Promise.all(calls);
  });

  test('a node with one call waits for at most one call of each other busy node, never behind a whole flood', async () => {
    const q = new NodeFairQueue({ slots: 1 });
    const { started, task, finishOne } = gatedTasks();
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 20; i++) calls.push(q.run('node-a', task('node-a')));
    for (let i = 0; i < 5; i++) calls.push(q.run('node-c', task('node-c')));
    calls.push(q.run('node-b', task('node-b')));
    while (started.length < 26) await finishOne();
    await finishOne();
    await Promise.all(calls);
    // node-a's first call held the slot; then one call per busy node in turn.
    expect(started.slice(0, 4)).toEqual(['node-a', 'node-a', 'node-c', 'node-b']);
    expect(started.slice(4, 12)).toEqual([
      'node-a',
      'node-c',
      'node-a',
      'node-c',
      'node-a',
      'node-c',
      'node-a',
      'node-c',
    ]);
    expect(started.slice(12)).toEqual(Array(14).fill('node-a'));
  });

  test('a node renewing one at a time is served between the flood, call after call', async () => {
    const q = new NodeFairQueue({ slots: 2 });
    const { started, task, finishOne } = gatedTasks();
    const flood: Promise<unknown>[] = [];
    for (let i = 0; i < 64; i++) flood.push(q.run('node-a', task('node-a')));
    const waitedBehind: number[] = [];
    for (let i = 0; i < 5; i++) {
      const enqueuedAt = started.length;
      const renewal = q.run('node-b', task('node-b'));
      expect(q.view().nodes.find((n) => n.node === 'node-b')?.queued).toBe(1);
      while (started.lastIndexOf('node-b') < enqueuedAt) await finishOne();
      waitedBehind.push(started.lastIndexOf('node-b') - enqueuedAt);
      while (started.length - started.lastIndexOf('node-b') < 3) await finishOne();
      await finishOne();
      await renewal;
    }
    // Each renewal started after at most one of node-a's calls, while dozens of them waited.
    for (const n of waitedBehind) expect(n).toBeLessThanOrEqual(1);
    expect(q.view().nodes.find((n) => n.node === 'node-a')!.queued).toBeGreaterThan(30);
    while (started.length < 69) await finishOne();
    while (q.view().running > 0) await finishOne();
    await Promise.all(flood);
  });

  test(`a node with NODE_QUEUE_LIMIT (${NODE_QUEUE_LIMIT}) calls waiting gets queue_full for its next call; other nodes still queue and run`, async () => {
    const q = new NodeFairQueue({ slots: 1 });
    const { started, task, finishOne } = gatedTasks();
    const accepted: Promise<unknown>[] = [];
    for (let i = 0; i < NODE_QUEUE_LIMIT + 1; i++) accepted.push(q.run('node-a', task('node-a')));
    const refused = q.run('node-a', task('node-a'));
    await expect(refused).rejects.toBeInstanceOf(FairnessDenial);
    await expect(refused).rejects.toMatchObject({
      reason: 'queue_full',
      node: 'node-a',
      message: expect.stringContaining(`${NODE_QUEUE_LIMIT}`) as unknown,
    });
    const other = q.run('node-b', task('node-b'));
    await finishOne();
    await finishOne();
    // node-a's turn came first (it was waiting first), then node-b's, ahead of node-a's other 510.
    expect(started).toEqual(['node-a', 'node-a', 'node-b']);
    while (started.length < NODE_QUEUE_LIMIT + 2) await finishOne();
    while (q.view().running > 0) await finishOne();
    await expect(other).resolves.toBe('node-b');
    await Promise.all(accepted);
  });

  test('a denied call is reported once to onDenied, and never run', async () => {
    const denials: FairnessDenial[] = [];
    const q = new NodeFairQueue({ slots: 1, queueLimit: 1, onDenied: (d) => denials.push(d) });
    const { started, task, finishOne } = gatedTasks();
    const first = q.run('n', task('n'));
    const second = q.run('n', task('n'));
    await expect(q.run('n', task('n'))).rejects.toMatchObject({ reason: 'queue_full' });
    expect(denials.map((d) => [d.node, d.reason])).toEqual([['n', 'queue_full']]);
    await finishOne();
    await finishOne();
    await Promise.all([first, second]);
    expect(started).toHaveLength(2);
  });

  test('an inline call (signed on the event loop, no worker) starts at once with every slot taken, ahead of nobody it would delay', async () => {
    const q = new NodeFairQueue({ slots: 2 });
    const { started, task, finishOne } = gatedTasks();
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 5; i++) calls.push(q.run('node-a', task('node-a')));
    expect(started).toEqual(['node-a', 'node-a']);
    // node-b's lone call would wait for one of node-a's two running calls; inline, it runs now.
    let ranB = false;
    const b = q.run(
      'node-b',
      () => {
        ranB = true;
        return Promise.resolve('b');
      },
      true,
    );
    expect(ranB).toBe(true);
    await expect(b).resolves.toBe('b');
    // It held no slot past its own run: node-a's waiting calls still get the two slots, in order.
    expect(q.view().running).toBe(2);
    expect(q.view().queued).toBe(3);
    while (started.length < 5) await finishOne();
    for (let i = 0; i < 2; i++) await finishOne();
    await Promise.all(calls);
    expect(q.view().running).toBe(0);
  });

  test("an inline call is still held to its node's rate limit", async () => {
    const q = new NodeFairQueue({ slots: 1000, ratePerSecond: 1, now: () => 0 });
    const ok = () => Promise.resolve('ok');
    for (let i = 0; i < NODE_RATE_MIN_BURST; i++) await q.run('node-b', ok, true);
    await expect(q.run('node-b', ok, true)).rejects.toMatchObject({ reason: 'rate_limited', node: 'node-b' });
  });

  test('a task that throws frees its slot for the next waiting call', async () => {
    const q = new NodeFairQueue({ slots: 1 });
    const failing = q.run('a', () => {
      throw new Error('boom');
    });
    await expect(failing).rejects.toThrow('boom');
    await expect(q.run('b', () => Promise.resolve('ran'))).resolves.toBe('ran');
    expect(q.view().running).toBe(0);
  });

  describe('CA_NODE_RATE_LIMIT token bucket', () => {
    test(`with the limit above ${NODE_RATE_MIN_BURST}/s a node gets one second of burst, then the limit; other nodes keep theirs`, async () => {
      let now = 1_000_000;
      const q = new NodeFairQueue({ slots: 1000, ratePerSecond: 200, now: () => now });
      const ok = () => Promise.resolve('ok');
      for (let i = 0; i < 200; i++) await q.run('node-a', ok);
      await expect(q.run('node-a', ok)).rejects.toMatchObject({
        reason: 'rate_limited',
        node: 'node-a',
        message: expect.stringContaining('CA_NODE_RATE_LIMIT') as unknown,
      });
      await expect(q.run('node-b', ok)).resolves.toBe('ok');
      now += 5; // one token at 200/s
      await expect(q.run('node-a', ok)).resolves.toBe('ok');
      await expect(q.run('node-a', ok)).rejects.toMatchObject({ reason: 'rate_limited' });
    });

    test(`a low limit still allows a burst of NODE_RATE_MIN_BURST (${NODE_RATE_MIN_BURST}), so a restarted ztunnel gets every pod's certificate`, async () => {
      let now = 0;
      const q = new NodeFairQueue({ slots: 1000, ratePerSecond: 1, now: () => now });
      const ok = () => Promise.resolve('ok');
      for (let i = 0; i < NODE_RATE_MIN_BURST; i++) await q.run('node-a', ok);
      await expect(q.run('node-a', ok)).rejects.toMatchObject({ reason: 'rate_limited' });
      now += 1000;
      await expect(q.run('node-a', ok)).resolves.toBe('ok');
    });

    test('without a limit (0, the default) no call is rate limited', async () => {
      const q = new NodeFairQueue({ slots: 1000 });
      const ok = () => Promise.resolve('ok');
      for (let i = 0; i < 2000; i++) await q.run('node-a', ok);
      expect(q.view().ratePerSecond).toBe('off');
    });
  });

  test('view shows per-node queue depth and recent rate, busiest first, and forgets idle nodes after a window', async () => {
    let now = 0;
    const q = new NodeFairQueue({ slots: 1, now: () => now });
    const { task, finishOne } = gatedTasks();
    const calls = [
      q.run('node-a', task('node-a')),
      q.run('node-a', task('node-a')),
      q.run('node-a', task('node-a')),
      q.run('node-b', task('node-b')),
    ];
    const v = q.view();
    expect(v).toMatchObject({ slots: 1, running: 1, queued: 3, queueLimit: NODE_QUEUE_LIMIT, ratePerSecond: 'off' });
    expect(v.nodes.map((n) => [n.node, n.queued, n.running])).toEqual([
      ['node-a', 2, 1],
      ['node-b', 1, 0],
    ]);
    for (let i = 0; i < 4; i++) await finishOne();
    await Promise.all(calls);
    now += NODE_RATE_WINDOW_MS;
    const later = q.view();
    expect(later.nodes.find((n) => n.node === 'node-a')!.recentPerSecond).toBeCloseTo(3000 / NODE_RATE_WINDOW_MS, 5);
    now += 2 * NODE_RATE_WINDOW_MS;
    expect(q.view().nodesTracked).toBe(0);
  });
});
