// /debug/ztunnels: what each connected client holds and owes, for operators (istiod's
// /debug/syncz shape is sync-status.ts).

import type { DeltaStream } from '../protocol/delta-stream';
import { SyncStatus, currentError, syncStatus } from '../protocol/sync-status';

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

/** One type's state in istiod's /debug/syncz (ResourceStatus), plus the computed status. */
export interface SyncStatusResource {
  sent?: string;
  acked?: string;
  sentTime?: string;
  lastError?: string;
  status: SyncStatus;
}

/** One proxy in istiod's /debug/syncz shape (SyncStatus); empty fields are left out as istiod does. */
export interface SyncStatusEntry {
  cluster_id?: string;
  proxy: string;
  proxy_type: string;
  istio_version?: string;
  resources: Record<string, SyncStatusResource>;
}

export function syncStatusEntry(stream: DeltaStream): SyncStatusEntry | undefined {
  const node = stream.node;
  if (!node) return undefined;
  // istiod's `proxy` is the proxy id (pod.namespace, the node id's third part), not the whole node id.
  const entry: SyncStatusEntry = { proxy: node.proxyId, proxy_type: node.type, resources: {} };
  if (node.clusterId) entry.cluster_id = node.clusterId;
  const version = node.metadata['ISTIO_VERSION'];
  if (version) entry.istio_version = version;
  for (const sub of stream.subs.values()) {
    const r: SyncStatusResource = { status: syncStatus(sub) };
    if (sub.nonceSent) r.sent = sub.nonceSent;
    if (sub.lastAck) r.acked = sub.lastAck.nonce;
    if (sub.sentAt) r.sentTime = sub.sentAt.toISOString();
    const error = currentError(sub);
    if (error) r.lastError = error.message;
    entry.resources[sub.typeUrl] = r;
  }
  return entry;
}

/** Every connected proxy's entry, by proxy id; only one namespace's when `namespace` is set. */
export function syncStatusEntries(streams: Iterable<DeltaStream>, namespace = ''): SyncStatusEntry[] {
  const out: SyncStatusEntry[] = [];
  for (const s of streams) {
    if (namespace !== '' && s.node?.namespace !== namespace) continue;
    const entry = syncStatusEntry(s);
    if (entry) out.push(entry);
  }
  return out.sort((a, b) => (a.proxy < b.proxy ? -1 : a.proxy > b.proxy ? 1 : 0));
}
