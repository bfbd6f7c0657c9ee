// The sync status rule shared by the gRPC and HTTP syncz views.

import { currentError, syncStatus } from '../../../src/xds/protocol/sync-status';

const t0 = new Date('2026-12-03T10:00:00.000Z');
const t1 = new Date('2026-12-03T10:00:01.000Z');

test('nothing sent is NOT_SENT', () => {
  expect(syncStatus({ nonceSent: '' })).toBe('NOT_SENT');
});

test('the last nonce sent, ACKed, is SYNCED', () => {
  expect(syncStatus({ nonceSent: 'n2', lastAck: { nonce: 'n2', at: t1 } })).toBe('SYNCED');
});

test('a nonce sent and not answered yet is STALE, even with an older ACK', () => {
  expect(syncStatus({ nonceSent: 'n1' })).toBe('STALE');
  expect(syncStatus({ nonceSent: 'n2', lastAck: { nonce: 'n1', at: t0 } })).toBe('STALE');
});

test('a NACK is ERROR until an ACK follows it, and the error carries the NACK details', () => {
  const lastNack = { nonce: 'n1', at: t0, message: 'bad address' };
  expect(syncStatus({ nonceSent: 'n1', lastNack })).toBe('ERROR');
  // A newer response went out but the client has not answered: the error stands, as in istiod.
  expect(syncStatus({ nonceSent: 'n2', lastNack })).toBe('ERROR');
  expect(currentError({ nonceSent: 'n2', lastNack })).toEqual(lastNack);
  expect(syncStatus({ nonceSent: 'n2', lastNack, lastAck: { nonce: 'n2', at: t1 } })).toBe('SYNCED');
});

test('an ACK and a NACK in the same millisecond: the one for the nonce last sent decides', () => {
  expect(
    syncStatus({ nonceSent: 'n2', lastAck: { nonce: 'n1', at: t0 }, lastNack: { nonce: 'n2', at: t0, message: 'x' } }),
  ).toBe('ERROR');
  expect(
    syncStatus({ nonceSent: 'n2', lastAck: { nonce: 'n2', at: t0 }, lastNack: { nonce: 'n1', at: t0, message: 'x' } }),
  ).toBe('SYNCED');
});
