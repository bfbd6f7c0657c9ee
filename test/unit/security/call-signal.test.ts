import { EventEmitter } from 'node:events';
import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';
import { callSignal } from '../../../src/security/call-signal';

function call(deadline: Date | number): ServerSurfaceCall {
  return Object.assign(new EventEmitter(), {
    cancelled: false,
    getDeadline: () => deadline,
  }) as unknown as ServerSurfaceCall;
}

describe('the signal of a gRPC call', () => {
  test('fires when the client cancels', () => {
    const c = call(Infinity);
    const { signal } = callSignal(c);
    expect(signal.aborted).toBe(false);
    c.emit('cancelled', 'cancelled');
    expect(signal.aborted).toBe(true);
  });

  test('fires when the call deadline passes', async () => {
    const { signal } = callSignal(call(new Date(Date.now() + 30)));
    expect(signal.aborted).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(signal.aborted).toBe(true);
  });

  describe('once disposed', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    test('it stops listening to the call and clears the deadline timer', () => {
      const c = call(Date.now() + 60_000);
      const lifetime = callSignal(c);
      expect(lifetime.signal.aborted).toBe(false);
      expect(c.listenerCount('cancelled')).toBe(1);
      expect(jest.getTimerCount()).toBe(1);
      lifetime.dispose();
      expect(c.listenerCount('cancelled')).toBe(0);
      expect(jest.getTimerCount()).toBe(0);
      c.emit('cancelled', 'cancelled');
      expect(lifetime.signal.aborted).toBe(false);
    });

    test('a signal first read after it never starts listening (it left a 60 s timer behind)', () => {
      const c = call(Date.now() + 60_000);
      const lifetime = callSignal(c);
      lifetime.dispose();
      expect(lifetime.signal.aborted).toBe(false);
      expect(c.listenerCount('cancelled')).toBe(0);
      expect(jest.getTimerCount()).toBe(0);
      c.emit('cancelled', 'cancelled');
      jest.advanceTimersByTime(120_000);
      expect(lifetime.signal.aborted).toBe(false);
    });
  });
});
