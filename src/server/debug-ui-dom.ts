// The status page's DOM helpers and its charts, part of the page's one inline script
// (debug-ui-script.ts puts them inside its function). Text from the cluster goes in through
// textContent and setAttribute only; bar widths are set through the CSSOM, which the page's
// style-src policy does not govern (a style attribute it would block).

export const DEBUG_UI_DOM = String.raw`
  function el(tag, text, attrs) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (attrs) for (var k in attrs) e.setAttribute(k, String(attrs[k]));
    return e;
  }
  function row(cells, attrs) {
    var tr = el('tr', null, attrs);
    cells.forEach(function (c) {
      tr.appendChild(c instanceof Node ? wrap('td', c) : el('td', c));
    });
    return tr;
  }
  function wrap(tag, child) {
    var e = el(tag);
    e.appendChild(child);
    return e;
  }
  function table(headers, rows, empty) {
    if (rows.length === 0) return el('p', empty, { class: 'empty' });
    var t = el('table');
    var tr = el('tr');
    headers.forEach(function (h) { tr.appendChild(el('th', h)); });
    t.appendChild(wrap('thead', tr));
    var body = el('tbody');
    rows.forEach(function (r) { body.appendChild(r); });
    t.appendChild(body);
    return t;
  }
  function fill(id, child) {
    document.getElementById(id).replaceChildren(child);
  }
  function badge(state) {
    return el('span', state, { class: 'state state-' + state.toLowerCase() });
  }
  function bars(entries, label) {
    var max = entries.reduce(function (m, e) { return Math.max(m, e.value); }, 0);
    var list = el('div', null, { class: 'bars', 'aria-label': label });
    entries.forEach(function (e) {
      var line = el('div', null, { class: 'bar' });
      line.appendChild(el('span', e.label, { class: 'bar-label' }));
      var fillBar = el('span', null, { class: 'bar-fill' });
      // Set through the CSSOM, which the style-src policy does not govern (style attributes it would).
      fillBar.style.width = (max > 0 ? (100 * e.value) / max : 0) + '%';
      var track = el('span', null, { class: 'bar-track' });
      track.appendChild(fillBar);
      line.appendChild(track);
      line.appendChild(el('span', String(e.value), { class: 'bar-value' }));
      list.appendChild(line);
    });
    return list;
  }

  function renderStats(s) {
    var certs = el('div');
    if (!s.ca) certs.appendChild(el('p', 'the CA does not run in this server', { class: 'empty' }));
    certs.appendChild(el('p', 'issued: ' + s.issuedTotal + ', refused: ' + s.deniedTotal, { id: 'cert-totals' }));
    certs.appendChild(bars(s.perMinute.map(function (m) {
      return { label: m.minute.slice(11, 16), value: m.issued };
    }), 'certificates issued per minute'));
    fill('certs', certs);
    fill('denials', table(['source', 'reason', 'count'], s.denials.map(function (d) {
      return row([d.source, d.reason, String(d.count)], { 'data-denial': d.reason });
    }), 'no refusals'));
    var h = s.pushLatency;
    if (!h) fill('latency', el('p', 'the xDS server does not run in this server', { class: 'empty' }));
    else {
      var box = el('div');
      box.appendChild(el('p', h.count + ' pushes, mean ' + (h.count ? (1000 * h.sumSeconds / h.count).toFixed(2) : '0') +
        ' ms'));
      box.appendChild(bars(h.buckets.map(function (b) {
        return { label: b.le === '+Inf' ? '> last' : '\u2264 ' + (1000 * Number(b.le)) + ' ms', value: b.count };
      }), 'push latency'));
      fill('latency', box);
    }
  }

  function message(err) {
    return String(err && err.message ? err.message : err);
  }
  function failed(err) {
    document.getElementById('errors').appendChild(el('p', message(err), { class: 'error' }));
  }
  function showProblems(problems) {
    fill('errors', el('div'));
    problems.forEach(failed);
  }
  // A section whose source failed keeps what it last showed, or says it has nothing yet.
  function unavailable(id) {
    if (!document.getElementById(id).hasChildNodes()) fill(id, el('p', 'not available (see above)', { class: 'empty' }));
  }

`;
