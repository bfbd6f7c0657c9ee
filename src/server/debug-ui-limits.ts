// The status page's bounds (/debug/ui). debug-ui.ts puts them on the page's <body> as data
// attributes, where its script (ui/page-data.ts) reads them.

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
