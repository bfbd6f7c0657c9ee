// The status page's script, sent inline and allowed by its hash (debug-ui.ts). Plain browser
// JavaScript over the debug JSON pages; every value from the cluster reaches the DOM through
// textContent or setAttribute, never as markup. It has no backticks, and "${" only where it takes
// the limits below, the paging header and the DOM helpers, so it can live in this template string.

import { DEBUG_CONTINUE_HEADER } from '../contract/debug-page';
import { DEBUG_UI_DOM } from './debug-ui-dom';

/** Pages of /debug/ambient/workloads the page follows per node before it says the list is cut. */
export const UI_MAX_WORKLOAD_PAGES = 20;

/** Pages of /debug/config?kind=Node the page follows: 10,000 nodes at the default page size. */
export const UI_MAX_NODE_PAGES = 10;

/** Nodes whose workloads load on first view; the rest load when opened, so 5,000 nodes cost 10 requests. */
export const UI_OPEN_NODES = 10;

/** Seconds between refreshes: often enough to watch a rollout, rare enough to cost nothing. */
export const UI_REFRESH_SECONDS = 5;

/** Recent NACKs listed, newest first. */
export const UI_MAX_NACKS = 50;

export const DEBUG_UI_SCRIPT = String.raw`
'use strict';
(function () {
  var MAX_PAGES = ${UI_MAX_WORKLOAD_PAGES};
  var MAX_NODE_PAGES = ${UI_MAX_NODE_PAGES};
  var OPEN_NODES = ${UI_OPEN_NODES};
  var REFRESH_MS = ${UI_REFRESH_SECONDS} * 1000;
  var MAX_NACKS = ${UI_MAX_NACKS};
  var opened = new Map();
  var workloads = new Map();
${DEBUG_UI_DOM}

  function getResponse(path) {
    return fetch(path, { headers: { accept: 'application/json' } }).then(function (res) {
      if (!res.ok) throw new Error(path + ' answered ' + res.status);
      return res.json().then(function (body) { return { body: body, headers: res.headers }; });
    });
  }
  function getJson(path) {
    return getResponse(path).then(function (r) { return r.body; });
  }
  function typeName(url) {
    var i = String(url).lastIndexOf('.');
    return i >= 0 ? String(url).slice(i + 1) : String(url);
  }
  // Sync state per proxy and type as the server computes it for istiod's /debug/syncz (one rule,
  // xds/protocol/sync-status.ts); a stream that connected between the two fetches is UNKNOWN until the next.
  var statuses = new Map();
  // /debug/syncz names a proxy as istiod does, pod.namespace: the third part of the node id.
  function proxyIdOf(nodeId) {
    var parts = String(nodeId).split('~');
    return parts.length === 4 ? parts[2] : String(nodeId);
  }
  function syncState(c, t) {
    var resources = statuses.get(proxyIdOf(c.node));
    var r = resources && resources[t.typeUrl];
    return (r && r.status) || 'UNKNOWN';
  }
  function clientState(c) {
    return worst(c.types.map(function (t) { return syncState(c, t); }));
  }
  var RANK = { SYNCED: 0, NOT_SENT: 1, UNKNOWN: 2, STALE: 3, ERROR: 4 };
  function worst(states) {
    return states.reduce(function (a, b) { return RANK[b] > RANK[a] ? b : a; }, 'SYNCED');
  }
  function clientNode(c) {
    return c.nodeName || '(no node)';
  }

  function renderNodes(nodes, clients) {
    var perNode = new Map();
    clients.forEach(function (c) {
      var n = clientNode(c);
      if (!perNode.has(n)) perNode.set(n, []);
      perNode.get(n).push(c);
    });
    var rows = nodes.map(function (n) {
      var cs = perNode.get(n.name) || [];
      var states = cs.map(clientState);
      var w = workloads.get(n.name);
      return row([
        n.name,
        n.zone || '',
        String(cs.length),
        cs.length ? badge(worst(states)) : el('span', 'no ztunnel', { class: 'state state-none' }),
        w ? String(w.items.length) + (w.cut ? '+' : '') : '',
      ], { 'data-node': n.name });
    });
    fill('nodes', table(['node', 'zone', 'ztunnels', 'sync', 'workloads'], rows, 'no nodes'));
  }

  function renderZtunnels(clients) {
    var rows = [];
    clients.forEach(function (c) {
      c.types.forEach(function (t, i) {
        rows.push(row([
          i === 0 ? clientNode(c) : '',
          i === 0 ? c.node : '',
          i === 0 ? c.connectedSince : '',
          typeName(t.typeUrl),
          badge(syncState(c, t)),
          t.lastAck ? t.lastAck.at : '',
          String(t.pendingNames),
        ], { 'data-ztunnel': c.node, 'data-type': typeName(t.typeUrl) }));
      });
    });
    fill('ztunnels', table(['node', 'ztunnel', 'connected since', 'type', 'state', 'last ACK', 'pending'], rows,
      'no ztunnel is connected'));
  }

  function renderNacks(clients) {
    var nacks = [];
    clients.forEach(function (c) {
      c.types.forEach(function (t) {
        if (t.lastNack) nacks.push({ c: c, t: t });
      });
    });
    nacks.sort(function (a, b) { return a.t.lastNack.at < b.t.lastNack.at ? 1 : -1; });
    var rows = nacks.slice(0, MAX_NACKS).map(function (n) {
      return row([n.t.lastNack.at, clientNode(n.c), n.c.node, typeName(n.t.typeUrl), n.t.lastNack.nonce,
        n.t.lastNack.message]);
    });
    fill('nacks', table(['at', 'node', 'ztunnel', 'type', 'nonce', 'message'], rows, 'no NACKs from connected ztunnels'));
  }

  function workloadRows(items) {
    return items.map(function (w) {
      var addrs = Array.isArray(w.addresses) ? w.addresses.join(', ') : '';
      return row([w.namespace || '', w.name || '', addrs, w.serviceAccount || '', w.tunnelProtocol || 'NONE',
        w.status || 'HEALTHY'], { 'data-workload': (w.namespace || '') + '/' + (w.name || '') });
    });
  }

  // A paged list, following the continue token in each page's headers (contract/debug-page.ts)
  // for at most maxPages pages; 'cut' says more pages were left.
  function getPages(path, maxPages, itemsOf) {
    var items = [];
    function page(n, token) {
      var q = path + (token ? '&continue=' + encodeURIComponent(token) : '');
      return getResponse(q).then(function (r) {
        items = items.concat(itemsOf(r.body));
        var next = r.headers.get('${DEBUG_CONTINUE_HEADER}');
        if (next && n + 1 < maxPages) return page(n + 1, next);
        return { items: items, cut: Boolean(next) };
      });
    }
    return page(0, '');
  }
  function loadWorkloads(node) {
    var path = '/debug/ambient/workloads?node=' + encodeURIComponent(node);
    return getPages(path, MAX_PAGES, function (b) { return Array.isArray(b) ? b : []; }).then(function (w) {
      workloads.set(node, w);
      return w;
    });
  }

  function renderWorkloads(nodes) {
    var box = el('div');
    nodes.forEach(function (n, i) {
      if (!opened.has(n.name)) opened.set(n.name, i < OPEN_NODES);
      var d = el('details', null, { 'data-node': n.name });
      d.open = opened.get(n.name);
      d.appendChild(el('summary', n.name));
      var body = el('div');
      d.appendChild(body);
      if (workloads.has(n.name)) showWorkloads(body, workloads.get(n.name));
      d.addEventListener('toggle', function () {
        opened.set(n.name, d.open);
        if (d.open && !workloads.has(n.name)) {
          body.replaceChildren(el('p', 'loading', { class: 'empty' }));
          loadWorkloads(n.name).then(function (w) { showWorkloads(body, w); }, failed);
        }
      });
      box.appendChild(d);
    });
    fill('workloads', nodes.length ? box : el('p', 'no nodes', { class: 'empty' }));
  }
  function showWorkloads(body, w) {
    body.replaceChildren(table(['namespace', 'name', 'addresses', 'service account', 'protocol', 'status'],
      workloadRows(w.items), 'no workloads on this node'));
    if (w.cut) body.appendChild(el('p', 'only the first ' + MAX_PAGES + ' pages are shown', { class: 'empty' }));
  }

  function nodesFrom(objects, clients) {
    var byName = new Map();
    objects.forEach(function (o) {
      var labels = (o.metadata && o.metadata.labels) || {};
      byName.set(o.metadata.name, { name: o.metadata.name, zone: labels['topology.kubernetes.io/zone'] || '' });
    });
    clients.forEach(function (c) {
      if (c.nodeName && !byName.has(c.nodeName)) byName.set(c.nodeName, { name: c.nodeName, zone: '' });
    });
    return Array.from(byName.values()).sort(function (a, b) { return a.name < b.name ? -1 : a.name > b.name ? 1 : 0; });
  }

  // Each source on its own: one that fails is named at the top and the others still show.
  function refresh() {
    var problems = [];
    function soft(p) {
      return p.catch(function (err) { problems.push(err); return null; });
    }
    var nodePages = getPages('/debug/config?kind=Node', MAX_NODE_PAGES, function (b) { return b.objects || []; });
    var sources = [nodePages, getJson('/debug/ztunnels'), getJson('/debug/ui/stats'), getJson('/debug/syncz')];
    return Promise.all(sources.map(soft))
      .then(function (r) {
        var clients = (r[1] && r[1].clients) || [];
        statuses = new Map((Array.isArray(r[3]) ? r[3] : []).map(function (e) { return [e.proxy, e.resources || {}]; }));
        var nodes = nodesFrom(r[0] ? r[0].items : [], clients);
        nodes.forEach(function (n, i) { if (!opened.has(n.name)) opened.set(n.name, i < OPEN_NODES); });
        var open = nodes.filter(function (n) { return opened.get(n.name); });
        return Promise.all(open.map(function (n) { return soft(loadWorkloads(n.name)); })).then(function () {
          renderNodes(nodes, clients);
          renderWorkloads(nodes);
          if (r[1]) {
            renderZtunnels(clients);
            renderNacks(clients);
          } else {
            unavailable('ztunnels');
            unavailable('nacks');
          }
          if (r[2]) renderStats(r[2]);
          else ['certs', 'denials', 'latency'].forEach(unavailable);
          showProblems(problems);
        });
      })
      .then(function () {
        document.getElementById('updated').textContent = new Date().toISOString();
        document.body.setAttribute('data-loaded', 'true');
      }, failed);
  }

  function loop() {
    refresh().then(function () { setTimeout(loop, REFRESH_MS); });
  }
  loop();
})();
`;
