// istiod's xDS debug pages for what ambient has: /debug/connections (its AdsClients JSON) and
// /debug/push_status (the last pushes and current rejections, xds/debug/push-status.ts).

import type { DebugRegistry, DebugResponse } from '../contract/host';
import { byKey, pageError, pageResponse, parsePageRequest, takePage } from '../contract/debug-page';
import type { DeltaStream } from '../xds/protocol/delta-stream';
import { connectionId, type PushStatus } from '../xds/debug/push-status';

/** One connected client, as istiod's /debug/connections shows it (plus the node metadata ztunnel sends). */
export interface ConnectionEntry {
  connectionId: string;
  connectedAt: string;
  address: string;
  /** The node's metadata (NAME, NAMESPACE, NODE_NAME, CLUSTER_ID, ISTIO_VERSION, ...). */
  metadata?: Record<string, string>;
}

/** istiod's AdsClients: every client counted, this page's listed (in connection id order). */
export interface ConnectionsPage {
  totalClients: number;
  clients: ConnectionEntry[];
}

/** What the pages read of the xDS server. */
export interface XdsDebugSource {
  readonly streams: Iterable<DeltaStream>;
  readonly pushStatus: { status(streams: Iterable<DeltaStream>): PushStatus };
}

function entry(s: DeltaStream): ConnectionEntry {
  const e: ConnectionEntry = {
    connectionId: connectionId(s),
    connectedAt: s.connectedAt.toISOString(),
    address: s.peer,
  };
  if (s.node && Object.keys(s.node.metadata).length > 0) e.metadata = s.node.metadata;
  return e;
}

export function registerXdsDebug(debug: DebugRegistry, xds: XdsDebugSource): void {
  debug.add(
    'connections',
    'connected xDS clients as istiod lists them: totalClients, clients (query: limit=, continue=)',
    (req): DebugResponse => {
      const page = parsePageRequest(req.query);
      if ('error' in page) return pageError(page.error);
      // Streams that have sent their first request (they have a node), as istiod counts clients.
      const byId = new Map<string, DeltaStream>();
      for (const s of xds.streams) if (s.node) byId.set(connectionId(s), s);
      const sorted = [...byId.keys()].sort(byKey);
      const { items, next } = takePage(sorted, page, (id) => {
        const s = byId.get(id);
        return s ? entry(s) : undefined;
      });
      const body: ConnectionsPage = { totalClients: byId.size, clients: items };
      return pageResponse(req, body, next);
    },
  );
  debug.add(
    'push_status',
    'the last xDS pushes (version, trigger, resources per type, clients, timings) and current NACKs',
    () => ({ body: xds.pushStatus.status(xds.streams) }),
  );
}
