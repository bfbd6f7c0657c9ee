// The status page's inputs: its limits, which the server puts on <body> as data attributes
// (debug-ui.ts, from debug-ui-limits.ts), and the shapes of the debug JSON pages it reads. The
// shapes mirror the server's (debug-ui-stats.ts UiStats, xds/debug's /debug/ztunnels, the store's
// /debug/config) as far as the page uses them; every field may be missing from an older server.

interface PageLimits {
  /** Pages of /debug/ambient/workloads followed per node. */
  maxPages: number;
  /** Pages of /debug/config?kind=Node followed. */
  maxNodePages: number;
  /** Nodes whose workloads load on first view. */
  openNodes: number;
  refreshMs: number;
  maxNacks: number;
  /** The response header that carries a paged list's continue token (contract/debug-page.ts). */
  continueHeader: string;
}

/** A positive integer data attribute of <body>; the server always sets them. */
function bodyNumber(name: string): number {
  const value = Number(document.body.dataset[name]);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`the page has no data-${name} limit`);
  return value;
}

function pageLimits(): PageLimits {
  const continueHeader = document.body.dataset['continueHeader'];
  if (!continueHeader) throw new Error('the page has no data-continue-header');
  return {
    maxPages: bodyNumber('maxWorkloadPages'),
    maxNodePages: bodyNumber('maxNodePages'),
    openNodes: bodyNumber('openNodes'),
    refreshMs: bodyNumber('refreshSeconds') * 1000,
    maxNacks: bodyNumber('maxNacks'),
    continueHeader,
  };
}

interface TypeState {
  typeUrl: string;
  pendingNames?: number;
  lastAck?: { at: string } | null;
  lastNack?: { at: string; nonce?: string; message?: string } | null;
}

/** One connected ztunnel of /debug/ztunnels. */
interface Client {
  node: string;
  nodeName?: string;
  connectedSince?: string;
  types: TypeState[];
}

/** One proxy of /debug/syncz: its sync status per type URL. */
interface SyncEntry {
  proxy: string;
  resources?: Record<string, { status?: string } | undefined>;
}

interface Workload {
  namespace?: string;
  name?: string;
  addresses?: unknown;
  serviceAccount?: string;
  tunnelProtocol?: string;
  status?: string;
}

interface NodeObject {
  metadata: { name: string; labels?: Record<string, string | undefined> };
}

interface UiStats {
  ca: boolean;
  issuedTotal: number;
  deniedTotal: number;
  perMinute: { minute: string; issued: number }[];
  denials: { source: string; reason: string; count: number }[];
  pushLatency: { buckets: { le: string; count: number }[]; count: number; sumSeconds: number } | null;
}

/** A node as the page lists it. */
interface NodeRow {
  name: string;
  zone: string;
}

/** The workloads of one node: as many pages as the page followed, and whether more were left. */
interface Paged<T> {
  items: T[];
  cut: boolean;
}
