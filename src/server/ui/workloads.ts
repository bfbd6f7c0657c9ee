// The status page's workloads per node: a <details> per node, whose workloads load when it is
// open (the first PageLimits.openNodes nodes on first view, any other once opened).

/** Per node, whether its <details> is open; kept across refreshes. */
const opened = new Map<string, boolean>();
/** Per node, its workloads as last loaded. */
const workloads = new Map<string, Paged<Workload>>();

interface JsonResponse {
  body: unknown;
  headers: Headers;
}

async function getResponse(path: string): Promise<JsonResponse> {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`${path} answered ${res.status}`);
  return { body: (await res.json()) as unknown, headers: res.headers };
}

/**
 * A paged list, following the continue token in each page's headers (contract/debug-page.ts)
 * for at most maxPages pages; `cut` says more pages were left.
 */
async function getPages<T>(
  limits: PageLimits,
  path: string,
  maxPages: number,
  itemsOf: (body: unknown) => T[],
): Promise<Paged<T>> {
  let items: T[] = [];
  let token = '';
  for (let n = 0; ; n++) {
    const r = await getResponse(path + (token ? '&continue=' + encodeURIComponent(token) : ''));
    items = items.concat(itemsOf(r.body));
    const next = r.headers.get(limits.continueHeader);
    if (!next || n + 1 >= maxPages) return { items, cut: Boolean(next) };
    token = next;
  }
}

async function loadWorkloads(limits: PageLimits, node: string): Promise<Paged<Workload>> {
  const path = '/debug/ambient/workloads?node=' + encodeURIComponent(node);
  const w = await getPages(limits, path, limits.maxPages, (b) => (Array.isArray(b) ? (b as Workload[]) : []));
  workloads.set(node, w);
  return w;
}

function workloadRows(items: Workload[]): HTMLElement[] {
  return items.map((w) => {
    const addrs = Array.isArray(w.addresses) ? w.addresses.join(', ') : '';
    return row(
      [
        w.namespace || '',
        w.name || '',
        addrs,
        w.serviceAccount || '',
        w.tunnelProtocol || 'NONE',
        w.status || 'HEALTHY',
      ],
      { 'data-workload': `${w.namespace || ''}/${w.name || ''}` },
    );
  });
}

function showWorkloads(limits: PageLimits, body: HTMLElement, w: Paged<Workload>): void {
  body.replaceChildren(
    table(
      ['namespace', 'name', 'addresses', 'service account', 'protocol', 'status'],
      workloadRows(w.items),
      'no workloads on this node',
    ),
  );
  if (w.cut) body.appendChild(el('p', `only the first ${limits.maxPages} pages are shown`, { class: 'empty' }));
}

/** Remembers which nodes start open: the first openNodes the page sees. */
function noteNodes(limits: PageLimits, nodes: NodeRow[]): void {
  nodes.forEach((n, i) => {
    if (!opened.has(n.name)) opened.set(n.name, i < limits.openNodes);
  });
}

function renderWorkloads(limits: PageLimits, nodes: NodeRow[]): void {
  noteNodes(limits, nodes);
  const box = el('div');
  for (const n of nodes) {
    const d = document.createElement('details');
    d.setAttribute('data-node', n.name);
    d.open = opened.get(n.name) ?? false;
    d.appendChild(el('summary', n.name));
    const body = el('div');
    d.appendChild(body);
    const loaded = workloads.get(n.name);
    if (loaded) showWorkloads(limits, body, loaded);
    d.addEventListener('toggle', () => {
      opened.set(n.name, d.open);
      if (d.open && !workloads.has(n.name)) {
        body.replaceChildren(el('p', 'loading', { class: 'empty' }));
        loadWorkloads(limits, n.name).then((w) => {
          showWorkloads(limits, body, w);
        }, failed);
      }
    });
    box.appendChild(d);
  }
  fill('workloads', nodes.length ? box : el('p', 'no nodes', { class: 'empty' }));
}
