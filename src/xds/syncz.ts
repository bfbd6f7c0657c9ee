// /debug/ztunnels: what each connected client holds and owes, for operators (istiod's
// /debug/syncz shape is sync-status.ts).

import type { DeltaStream } from './delta-stream';

export interface SynczType {
  typeUrl: string;
  wildcard: boolean;
  /** Explicitly watched names (on-demand); empty for wildcard. */
  subscriptions: string[];
  lastNonceSent: string;
  lastAck?: { nonce: string; at: string };
  lastNack?: { nonce: string; at: string; message: string };
  pendingNames: number;
}

export interface SynczClient {
  id: string;
  node: string;
  nodeName: string;
  peer: string;
  identity: string[];
  connectedSince: string;
  writing: boolean;
  types: SynczType[];
}

/** Shown subscriptions per type; the count beyond it is still reported. */
export const SYNCZ_MAX_NAMES = 100;

export function synczEntry(stream: DeltaStream): SynczClient {
  return {
    id: stream.id,
    node: stream.node?.id ?? '',
    nodeName: stream.node?.nodeName ?? '',
    peer: stream.peer,
    identity: stream.identity?.identities ?? [],
    connectedSince: stream.connectedAt.toISOString(),
    writing: stream.busy,
    types: [...stream.subs.values()].map((s) => {
      const t: SynczType = {
        typeUrl: s.typeUrl,
        wildcard: s.wildcard,
        subscriptions: [...s.watched].slice(0, SYNCZ_MAX_NAMES),
        lastNonceSent: s.nonceSent,
        pendingNames: s.pendingCount(),
      };
      if (s.lastAck) t.lastAck = { nonce: s.lastAck.nonce, at: s.lastAck.at.toISOString() };
      if (s.lastNack)
        t.lastNack = { nonce: s.lastNack.nonce, at: s.lastNack.at.toISOString(), message: s.lastNack.message };
      return t;
    }),
  };
}

export interface Syncz {
  /**
   * Full-state responses in flight holding a slot, streams waiting for a slot, and stalled full
   * responses kept without a slot until they drain or are cut (MAX_STALLED_FULL_SYNCS).
   */
  fullSyncs: { active: number; queued: number; limit: number; stalled: number };
  clients: SynczClient[];
}

export function syncz(streams: Iterable<DeltaStream>, fullSyncs: Syncz['fullSyncs']): Syncz {
  return { fullSyncs, clients: [...streams].filter((s) => s.node).map(synczEntry) };
}
