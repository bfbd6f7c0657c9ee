// Whether a client holds what was last sent to it, per type: the one rule behind both views of
// sync state, the gRPC istio.io/debug/syncz (CSDS config_status) and the HTTP /debug/syncz.
// istiod's rule: a NACK not yet followed by an ACK is ERROR, nothing sent is NOT_SENT, the last
// nonce sent ACKed is SYNCED, anything else (sent, not answered yet) is STALE.

import type { AckState, NackState } from './subscription';

/** envoy.service.status.v3.ConfigStatus names (UNKNOWN is never computed). */
export type SyncStatus = 'SYNCED' | 'NOT_SENT' | 'STALE' | 'ERROR';

/** What the server knows of one type on one stream. */
export interface TypeSyncState {
  nonceSent: string;
  lastAck?: AckState | undefined;
  lastNack?: NackState | undefined;
}

/**
 * The NACK, if it is the client's latest answer. An ACK clears an earlier error, as in istiod. Both
 * are recorded only for the nonce last sent, so when they share a millisecond the one for the
 * current nonce is the later.
 */
export function currentError(s: TypeSyncState): NackState | undefined {
  const nack = s.lastNack;
  if (!nack) return undefined;
  const ack = s.lastAck;
  if (!ack) return nack;
  const nackAt = nack.at.getTime();
  const ackAt = ack.at.getTime();
  if (nackAt !== ackAt) return nackAt > ackAt ? nack : undefined;
  return nack.nonce === s.nonceSent && ack.nonce !== s.nonceSent ? nack : undefined;
}

export function syncStatus(s: TypeSyncState): SyncStatus {
  if (currentError(s)) return 'ERROR';
  if (s.nonceSent === '') return 'NOT_SENT';
  if (s.lastAck?.nonce === s.nonceSent) return 'SYNCED';
  return 'STALE';
}
