// /debug/ui: one status page over the debug JSON (nodes, connected ztunnels and their sync state,
// workloads per node, certificates per minute and refusals, push latency, recent NACKs). Static
// markup; the inline script fills it in with textContent only. The Content-Security-Policy allows
// exactly this script and style by hash, fetches to this origin, and nothing else.
//
// The script is TypeScript for the browser in ui/, compiled by its own tsconfig (the DOM library,
// not Node's) into one file beside this module's; it is read once, when this module loads.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import { DEBUG_CONTINUE_HEADER } from '../contract/debug-page';
import type { DebugRegistry, DebugResponse, OnShutdown } from '../contract/host';
import {
  UI_MAX_NACKS,
  UI_MAX_NODE_PAGES,
  UI_MAX_WORKLOAD_PAGES,
  UI_OPEN_NODES,
  UI_REFRESH_SECONDS,
} from './debug-ui-limits';
import { registerUiStats, UiStatsOptions } from './debug-ui-stats';

/** The page's script as the build compiled it (src/server/ui/tsconfig.json, outFile). */
export const DEBUG_UI_SCRIPT = readFileSync(require.resolve('./ui/status-page.js'), 'utf8');

/** The page's limits as <body> data attributes, which its script reads (ui/page-data.ts). */
const LIMITS = [
  `data-max-workload-pages="${UI_MAX_WORKLOAD_PAGES}"`,
  `data-max-node-pages="${UI_MAX_NODE_PAGES}"`,
  `data-open-nodes="${UI_OPEN_NODES}"`,
  `data-refresh-seconds="${UI_REFRESH_SECONDS}"`,
  `data-max-nacks="${UI_MAX_NACKS}"`,
  `data-continue-header="${DEBUG_CONTINUE_HEADER}"`,
].join(' ');

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1d2330; background: #fafbfc; }
h1 { font-size: 1.3rem; margin: 0 0 .2rem; }
h2 { font-size: 1.05rem; margin: 1.6rem 0 .5rem; border-bottom: 1px solid #d8dde6; padding-bottom: .2rem; }
.meta, .empty { color: #5b6475; }
.error { color: #a4161a; font-weight: 600; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(28rem, 1fr)); gap: 0 2rem; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: .25rem .6rem; border-bottom: 1px solid #eceff4; vertical-align: top; }
th { font-weight: 600; background: #f1f3f7; }
td { font-family: ui-monospace, monospace; font-size: 12.5px; overflow-wrap: anywhere; }
details { margin: .3rem 0; background: #fff; border: 1px solid #eceff4; padding: .3rem .6rem; }
summary { cursor: pointer; font-weight: 600; }
.state { display: inline-block; white-space: nowrap; padding: 0 .45rem; border-radius: .6rem; font-size: 12px; font-family: system-ui; }
.state-synced { background: #d3f2dc; color: #135c2b; }
.state-stale, .state-not_sent { background: #fdf0c8; color: #6d4c00; }
.state-error { background: #fbd5d5; color: #8a1116; }
.state-none, .state-unknown { background: #eceff4; color: #5b6475; }
.bar { display: grid; grid-template-columns: 6rem 1fr 3rem; gap: .5rem; align-items: center; margin: 2px 0; }
.bar-label, .bar-value { font-family: ui-monospace, monospace; font-size: 12px; }
.bar-value { text-align: right; }
.bar-track { background: #eceff4; height: .8rem; }
.bar-fill { display: block; background: #3d6fd1; height: 100%; }
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>istiod-ts status</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body ${LIMITS}>
<h1>istiod-ts status</h1>
<p class="meta">updated <span id="updated">never</span>; the JSON behind it is under <a href="/debug/">/debug/</a></p>
<div id="errors"></div>
<div class="grid">
<section><h2>Nodes</h2><div id="nodes"></div></section>
<section><h2>Certificates issued per minute</h2><div id="certs"></div></section>
</div>
<h2>Connected ztunnels</h2><div id="ztunnels"></div>
<h2>Workloads per node</h2><div id="workloads"></div>
<div class="grid">
<section><h2>Certificate refusals by reason</h2><div id="denials"></div></section>
<section><h2>Push latency</h2><div id="latency"></div></section>
</div>
<h2>Recent NACKs</h2><div id="nacks"></div>
<script>${DEBUG_UI_SCRIPT}</script>
</body>
</html>
`;

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * Nothing but this page's own script and style runs or applies, it reads only this origin, and
 * no other page may frame it. `img-src data:` is for the empty favicon, which keeps the browser
 * from asking the server for /favicon.ico.
 */
export const DEBUG_UI_CSP = [
  "default-src 'none'",
  `script-src ${sha256(DEBUG_UI_SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function debugUiPage(): DebugResponse {
  return {
    body: PAGE,
    contentType: 'text/html; charset=utf-8',
    headers: {
      'content-security-policy': DEBUG_UI_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    },
  };
}

/** Registers /debug/ui and the one JSON page it adds, /debug/ui/stats. */
export function registerDebugUi(
  ctx: { debug: DebugRegistry; metrics: Registry; onShutdown: OnShutdown },
  statsOptions: UiStatsOptions = {},
): void {
  ctx.debug.add('ui', 'status page: nodes, ztunnels, workloads, certificates, push latency, NACKs (HTML)', () =>
    debugUiPage(),
  );
  registerUiStats(ctx, statsOptions);
}
