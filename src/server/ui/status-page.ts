// The status page's main loop: every PageLimits.refreshMs it reads the debug JSON pages (nodes,
// ztunnels, UI stats, sync status), loads the workloads of the open nodes and redraws every
// section. The last of the page's scripts (tsconfig.json "files"): the others only declare.

async function getJson(path: string): Promise<unknown> {
  return (await getResponse(path)).body;
}

function nodesFrom(objects: NodeObject[], clients: Client[]): NodeRow[] {
  const byName = new Map<string, NodeRow>();
  for (const o of objects) {
    const labels = o.metadata.labels ?? {};
    byName.set(o.metadata.name, { name: o.metadata.name, zone: labels['topology.kubernetes.io/zone'] || '' });
  }
  for (const c of clients)
    if (c.nodeName && !byName.has(c.nodeName)) byName.set(c.nodeName, { name: c.nodeName, zone: '' });
  return Array.from(byName.values()).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Each source on its own: one that fails is named at the top and the others still show. */
async function refresh(limits: PageLimits): Promise<void> {
  const problems: unknown[] = [];
  const soft = <T>(p: Promise<T>): Promise<T | null> =>
    p.catch((err: unknown) => {
      problems.push(err);
      return null;
    });
  const [nodePages, ztunnels, stats, syncz] = await Promise.all([
    soft(
      getPages(
        limits,
        '/debug/config?kind=Node',
        limits.maxNodePages,
        (b) => (b as { objects?: NodeObject[] }).objects ?? [],
      ),
    ),
    soft(getJson('/debug/ztunnels') as Promise<{ clients?: Client[] }>),
    soft(getJson('/debug/ui/stats') as Promise<UiStats>),
    soft(getJson('/debug/syncz')),
  ]);
  const clients = ztunnels?.clients ?? [];
  setStatuses(Array.isArray(syncz) ? (syncz as SyncEntry[]) : []);
  const nodes = nodesFrom(nodePages ? nodePages.items : [], clients);
  noteNodes(limits, nodes);
  const open = nodes.filter((n) => opened.get(n.name));
  await Promise.all(open.map((n) => soft(loadWorkloads(limits, n.name))));
  renderNodes(nodes, clients, workloads);
  renderWorkloads(limits, nodes);
  if (ztunnels) {
    renderZtunnels(clients);
    renderNacks(clients, limits.maxNacks);
  } else {
    unavailable('ztunnels');
    unavailable('nacks');
  }
  if (stats) renderStats(stats);
  else ['certs', 'denials', 'latency'].forEach(unavailable);
  showProblems(problems);
  section('updated').textContent = new Date().toISOString();
  document.body.setAttribute('data-loaded', 'true');
}

async function loop(limits: PageLimits): Promise<void> {
  try {
    await refresh(limits);
  } catch (err) {
    failed(err);
  }
  setTimeout(() => void loop(limits), limits.refreshMs);
}

void loop(pageLimits());
