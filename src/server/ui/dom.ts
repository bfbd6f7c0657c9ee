// The status page's DOM helpers. Text from the cluster goes in through textContent and
// setAttribute only, never as markup; bar widths are set through the CSSOM, which the page's
// style-src policy does not govern (a style attribute it would block).

type Cell = string | Node;

function el(tag: string, text?: string | null, attrs?: Record<string, string>): HTMLElement {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (attrs) for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

function wrap(tag: string, child: Node): HTMLElement {
  const e = el(tag);
  e.appendChild(child);
  return e;
}

function row(cells: Cell[], attrs?: Record<string, string>): HTMLElement {
  const tr = el('tr', null, attrs);
  for (const c of cells) tr.appendChild(c instanceof Node ? wrap('td', c) : el('td', c));
  return tr;
}

function table(headers: string[], rows: HTMLElement[], empty: string): HTMLElement {
  if (rows.length === 0) return el('p', empty, { class: 'empty' });
  const t = el('table');
  const tr = el('tr');
  for (const h of headers) tr.appendChild(el('th', h));
  t.appendChild(wrap('thead', tr));
  const body = el('tbody');
  for (const r of rows) body.appendChild(r);
  t.appendChild(body);
  return t;
}

/** The page's element with this id; the markup (debug-ui.ts) has every one the script names. */
function section(id: string): HTMLElement {
  const e = document.getElementById(id);
  if (!e) throw new Error(`the page has no #${id}`);
  return e;
}

function fill(id: string, child: Node): void {
  section(id).replaceChildren(child);
}

function badge(state: string): HTMLElement {
  return el('span', state, { class: 'state state-' + state.toLowerCase() });
}

function bars(entries: { label: string; value: number }[], label: string): HTMLElement {
  const max = entries.reduce((m, e) => Math.max(m, e.value), 0);
  const list = el('div', null, { class: 'bars', 'aria-label': label });
  for (const e of entries) {
    const line = el('div', null, { class: 'bar' });
    line.appendChild(el('span', e.label, { class: 'bar-label' }));
    const fillBar = el('span', null, { class: 'bar-fill' });
    // Set through the CSSOM, which the style-src policy does not govern (style attributes it would).
    fillBar.style.width = `${max > 0 ? (100 * e.value) / max : 0}%`;
    const track = el('span', null, { class: 'bar-track' });
    track.appendChild(fillBar);
    line.appendChild(track);
    line.appendChild(el('span', String(e.value), { class: 'bar-value' }));
    list.appendChild(line);
  }
  return list;
}

function message(err: unknown): string {
  return err instanceof Error && err.message ? err.message : String(err);
}

/** Names a failure at the top of the page. */
function failed(err: unknown): void {
  section('errors').appendChild(el('p', message(err), { class: 'error' }));
}

function showProblems(problems: unknown[]): void {
  fill('errors', el('div'));
  problems.forEach(failed);
}

/** A section whose source failed keeps what it last showed, or says it has nothing yet. */
function unavailable(id: string): void {
  if (!section(id).hasChildNodes()) fill(id, el('p', 'not available (see above)', { class: 'empty' }));
}
