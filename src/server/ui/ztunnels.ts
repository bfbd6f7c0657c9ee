// The status page's node, ztunnel and NACK tables, from /debug/ztunnels and /debug/syncz.

/**
 * Sync state per proxy and type as the server computes it for istiod's /debug/syncz (one rule,
 * xds/protocol/sync-status.ts), by proxy id; a stream that connected between the two fetches is
 * UNKNOWN until the next refresh.
 */
let statuses = new Map<string, Record<string, { status?: string } | undefined>>();

const RANK: Record<string, number | undefined> = { SYNCED: 0, NOT_SENT: 1, UNKNOWN: 2, STALE: 3, ERROR: 4 };

function setStatuses(entries: SyncEntry[]): void {
  statuses = new Map(entries.map((e) => [e.proxy, e.resources ?? {}]));
}

function typeName(url: string): string {
  const i = url.lastIndexOf('.');
  return i >= 0 ? url.slice(i + 1) : url;
}

/** /debug/syncz names a proxy as istiod does, pod.namespace: the third part of the node id. */
function proxyIdOf(nodeId: string): string {
  const parts = nodeId.split('~');
  return parts.length === 4 ? (parts[2] ?? nodeId) : nodeId;
}

function syncState(c: Client, t: TypeState): string {
  return statuses.get(proxyIdOf(c.node))?.[t.typeUrl]?.status || 'UNKNOWN';
}

function worst(states: string[]): string {
  return states.reduce((a, b) => ((RANK[b] ?? 0) > (RANK[a] ?? 0) ? b : a), 'SYNCED');
}

function clientState(c: Client): string {
  return worst(c.types.map((t) => syncState(c, t)));
}

function clientNode(c: Client): string {
  return c.nodeName || '(no node)';
}

function renderNodes(nodes: NodeRow[], clients: Client[], workloads: Map<string, Paged<Workload>>): void {
  const perNode = new Map<string, Client[]>();
  for (const c of clients) {
    const n = clientNode(c);
    perNode.set(n, [...(perNode.get(n) ?? []), c]);
  }
  const rows = nodes.map((n) => {
    const cs = perNode.get(n.name) ?? [];
    const w = workloads.get(n.name);
    return row(
      [
        n.name,
        n.zone,
        String(cs.length),
        cs.length ? badge(worst(cs.map(clientState))) : el('span', 'no ztunnel', { class: 'state state-none' }),
        w ? String(w.items.length) + (w.cut ? '+' : '') : '',
      ],
      { 'data-node': n.name },
    );
  });
  fill('nodes', table(['node', 'zone', 'ztunnels', 'sync', 'workloads'], rows, 'no nodes'));
}

function renderZtunnels(clients: Client[]): void {
  const rows: HTMLElement[] = [];
  for (const c of clients) {
    c.types.forEach((t, i) => {
      rows.push(
        row(
          [
            i === 0 ? clientNode(c) : '',
            i === 0 ? c.node : '',
            i === 0 ? (c.connectedSince ?? '') : '',
            typeName(t.typeUrl),
            badge(syncState(c, t)),
            t.lastAck ? t.lastAck.at : '',
            String(t.pendingNames),
          ],
          { 'data-ztunnel': c.node, 'data-type': typeName(t.typeUrl) },
        ),
      );
    });
  }
  fill(
    'ztunnels',
    table(
      ['node', 'ztunnel', 'connected since', 'type', 'state', 'last ACK', 'pending'],
      rows,
      'no ztunnel is connected',
    ),
  );
}

function renderNacks(clients: Client[], maxNacks: number): void {
  const nacks: { c: Client; t: TypeState; at: string }[] = [];
  for (const c of clients) for (const t of c.types) if (t.lastNack) nacks.push({ c, t, at: t.lastNack.at });
  nacks.sort((a, b) => (a.at < b.at ? 1 : -1));
  const rows = nacks
    .slice(0, maxNacks)
    .map((n) =>
      row([
        n.at,
        clientNode(n.c),
        n.c.node,
        typeName(n.t.typeUrl),
        n.t.lastNack?.nonce ?? '',
        n.t.lastNack?.message ?? '',
      ]),
    );
  fill('nacks', table(['at', 'node', 'ztunnel', 'type', 'nonce', 'message'], rows, 'no NACKs from connected ztunnels'));
}
