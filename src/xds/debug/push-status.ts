// /debug/push_status: what the last pushes did, in istiod's spirit (its LastPushStatus JSON is a map
// from a metric name to the proxies it concerns). Ambient has no PushContext to dump; what it has is
// each push's time, version, trigger and size, and the clients that rejected what they were sent.

import type { ResourceCache, XdsTypeUrl } from '../../contract/xds-resources';
import { XDS_TYPE_ORDER } from '../../contract/xds-resources';
import { clientText } from '../wire/client-limits';
import type { PushRequest } from '../protocol/debounce';
import type { DeltaStream } from '../protocol/delta-stream';
import { metricType } from '../protocol/metrics';

/** Pushes kept for the page, newest first: enough for a latency view, a fixed few KB. */
export const PUSH_STATUS_HISTORY = 20;

/** Rejections listed at most; the count beyond is still reported (one per stream and type at most). */
export const MAX_PUSH_STATUS_ERRORS = 100;

/** istiod's metric name for rejected responses, the key its push status files them under. */
export const REJECTS_KEY = 'pilot_total_xds_rejects';

export interface PushRecord {
  /** istiod's push version: start time (RFC 3339, seconds) and a counter. */
  version: string;
  /** When the push started fanning out. */
  at: string;
  /** `meshConfig` for a full push (every resource resent), `config` for changed resources. */
  trigger: 'meshConfig' | 'config';
  full: boolean;
  /** Resources in the push per type (metric type label): changed names, or all held for a full push. */
  resources: Record<string, number>;
  /** Clients the push was fanned out to. */
  clients: number;
  /** From the oldest change merged into the push to its start (the debounce wait). */
  debounceMs: number;
  /** The fan-out itself (istiod's pilot_xds_push_time). */
  durationMs: number;
}

export interface PushError {
  proxy: string;
  message: string;
}

export interface PushStatus {
  totalPushes: number;
  lastPush: PushRecord | null;
  recentPushes: PushRecord[];
  /** Current rejections: one per client and type whose last answer was a NACK, keyed "<connectionId>/<type>". */
  [REJECTS_KEY]: Record<string, PushError>;
  rejectsTotal: number;
}

function rfc3339Seconds(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function countAll(cache: ResourceCache, typeUrl: XdsTypeUrl): number {
  let n = 0;
  const it = cache.all(typeUrl)[Symbol.iterator]();
  while (!it.next().done) n++;
  return n;
}

export class PushStatusRecorder {
  private total = 0;
  private readonly recent: PushRecord[] = [];

  constructor(private readonly now: () => Date = () => new Date()) {}

  /**
   * Records one push. `startedMs` and `durationMs` are on the xDS server's clock (the one
   * PushRequest.eventAt uses); the cache is read only for a full push's sizes.
   */
  record(req: PushRequest, startedMs: number, durationMs: number, clients: number, cache: ResourceCache): void {
    this.total++;
    const at = this.now();
    const resources: Record<string, number> = {};
    if (req.full) for (const t of XDS_TYPE_ORDER) resources[metricType(t)] = countAll(cache, t);
    else for (const [t, names] of req.changes) resources[metricType(t)] = (resources[metricType(t)] ?? 0) + names.size;
    this.recent.unshift({
      version: `${rfc3339Seconds(at)}/${this.total}`,
      at: at.toISOString(),
      trigger: req.full ? 'meshConfig' : 'config',
      full: req.full,
      resources,
      clients,
      debounceMs: Math.max(0, startedMs - req.eventAt),
      durationMs,
    });
    if (this.recent.length > PUSH_STATUS_HISTORY) this.recent.pop();
  }

  /** The page: pushes recorded, and the rejections the connected clients hold now. */
  status(streams: Iterable<DeltaStream>): PushStatus {
    const rejects: Record<string, PushError> = {};
    let rejectsTotal = 0;
    for (const s of streams) {
      if (!s.node) continue;
      for (const sub of s.subs.values()) {
        const nack = sub.lastNack;
        if (!nack || (sub.lastAck && sub.lastAck.at >= nack.at)) continue;
        rejectsTotal++;
        if (rejectsTotal > MAX_PUSH_STATUS_ERRORS) continue;
        rejects[`${connectionId(s)}/${metricType(sub.typeUrl)}`] = {
          proxy: clientText(s.node.id),
          message: clientText(nack.message),
        };
      }
    }
    return {
      totalPushes: this.total,
      lastPush: this.recent[0] ?? null,
      recentPushes: [...this.recent],
      [REJECTS_KEY]: rejects,
      rejectsTotal,
    };
  }
}

/** istiod's connection id: the proxy id ("<pod>.<namespace>") and a per-process counter. */
export function connectionId(stream: DeltaStream): string {
  return stream.node ? `${clientText(stream.node.proxyId)}-${stream.id}` : stream.id;
}
