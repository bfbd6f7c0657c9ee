// The rejections /debug/push_status lists: current NACKs only, one per client and type, bounded.

import type { DeltaStream } from '../../../src/xds/protocol/delta-stream';
import { MAX_PUSH_STATUS_ERRORS, PushStatusRecorder, REJECTS_KEY } from '../../../src/xds/debug/push-status';

const ADDRESS = 'type.googleapis.com/istio.workload.Address';

/** A connected stream as the page reads it: node, id and one subscription's ACK/NACK state. */
function stream(i: number, state: { nackAt?: number; ackAt?: number }): DeltaStream {
  const sub = {
    typeUrl: ADDRESS,
    lastNack: state.nackAt === undefined ? undefined : { nonce: 'n', at: new Date(state.nackAt), message: `bad ${i}` },
    lastAck: state.ackAt === undefined ? undefined : { nonce: 'a', at: new Date(state.ackAt) },
  };
  return {
    id: String(i),
    node: {
      id: `ztunnel~10.0.0.${i}~zt-${i}.istio-system~istio-system.svc.cluster.local`,
      proxyId: `zt-${i}.istio-system`,
    },
    subs: new Map([[ADDRESS, sub]]),
  } as unknown as DeltaStream;
}

test('a NACK answered by a later ACK is no longer listed', () => {
  const status = new PushStatusRecorder().status([
    stream(1, { nackAt: 1, ackAt: 2 }),
    stream(2, { nackAt: 2, ackAt: 1 }),
  ]);
  expect(Object.keys(status[REJECTS_KEY])).toEqual(['zt-2.istio-system-2/address']);
  expect(status.rejectsTotal).toBe(1);
});

test(`at most MAX_PUSH_STATUS_ERRORS (${MAX_PUSH_STATUS_ERRORS}) rejections are listed; rejectsTotal counts them all`, () => {
  const streams = Array.from({ length: MAX_PUSH_STATUS_ERRORS + 5 }, (_, i) => stream(i, { nackAt: 1 }));
  const status = new PushStatusRecorder().status(streams);
  expect(Object.keys(status[REJECTS_KEY])).toHaveLength(MAX_PUSH_STATUS_ERRORS);
  expect(status.rejectsTotal).toBe(MAX_PUSH_STATUS_ERRORS + 5);
});

test('before any push the page says so: no last push, no history', () => {
  expect(new PushStatusRecorder().status([])).toEqual({
    totalPushes: 0,
    lastPush: null,
    recentPushes: [],
    [REJECTS_KEY]: {},
    rejectsTotal: 0,
  });
});
