// The paging contract every /debug/ page that lists workloads or objects follows, shared by the
// modules that register such pages (ambient, server). A page is `?limit=N&continue=TOKEN`; items
// come in a stable order (their key, compared by UTF-16 code units, never by locale); the token
// names the last key scanned, so walking every page returns each item present for the whole walk
// exactly once, whatever changes meanwhile. The body keeps the page's own JSON shape; the next
// page is announced in headers (DEBUG_CONTINUE_HEADER and a `Link: <...>; rel="next"`), and the
// last page has neither.

import type { DebugRequest, DebugResponse } from './host';

/**
 * Items on one page at most, and the page size when no limit is given. A page is built and
 * serialised in one turn of the event loop: 1,000 workloads are about 1 MB of JSON and 20 ms,
 * which keeps xDS and the CA answering while an operator walks 100k workloads.
 */
export const MAX_DEBUG_PAGE_SIZE = 1_000;

/**
 * Keys looked at for one page at most when a filter (namespace=) drops items: a page may then hold
 * fewer than `limit` items and still carry a continue token, as Kubernetes list pages do. Bounds
 * the work of one request at ten full pages whatever the filter matches.
 */
export const MAX_DEBUG_PAGE_SCAN = 10 * MAX_DEBUG_PAGE_SIZE;

/** A continue token longer than this is refused before it is decoded (keys are names, ≤ 1 KiB). */
export const MAX_CONTINUE_TOKEN_CHARS = 4_096;

/** Response header carrying the next page's continue token. */
export const DEBUG_CONTINUE_HEADER = 'x-debug-continue';

const TOKEN_PREFIX = 'v1:';

export interface PageRequest {
  limit: number;
  /** Items with keys after this one; undefined for the first page. */
  after: string | undefined;
}

/** Opaque to callers: today base64url of a version tag and the last key scanned. */
export function encodeContinue(key: string): string {
  return Buffer.from(TOKEN_PREFIX + key, 'utf8').toString('base64url');
}

/** Reads ?limit= and ?continue=; an error names the parameter and what it must be. */
export function parsePageRequest(query: URLSearchParams): PageRequest | { error: string } {
  const limitText = query.get('limit');
  let limit = MAX_DEBUG_PAGE_SIZE;
  if (limitText !== null) {
    if (!/^[0-9]{1,9}$/.test(limitText) || Number(limitText) < 1) {
      return {
        error: `limit must be a whole number from 1 to ${MAX_DEBUG_PAGE_SIZE}, not "${limitText.slice(0, 32)}"`,
      };
    }
    // Larger limits are served as the largest page, as the page's own limit says.
    limit = Math.min(Number(limitText), MAX_DEBUG_PAGE_SIZE);
  }
  const token = query.get('continue');
  if (token === null || token === '') return { limit, after: undefined };
  const invalid = { error: 'continue is not a token this server gave; start again without continue=' };
  if (token.length > MAX_CONTINUE_TOKEN_CHARS || !/^[A-Za-z0-9_-]+$/.test(token)) return invalid;
  const text = Buffer.from(token, 'base64url').toString('utf8');
  if (!text.startsWith(TOKEN_PREFIX)) return invalid;
  return { limit, after: text.slice(TOKEN_PREFIX.length) };
}

/** Index of the first key greater than `after` in keys sorted by code units. */
export function firstAfter(sorted: readonly string[], after: string | undefined): number {
  if (after === undefined) return 0;
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as string) <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Code-unit order, the one order tokens are compared in. */
export function byKey(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface Page<T> {
  items: T[];
  /** The token for the next page, or undefined on the last page. */
  next: string | undefined;
}

/**
 * Walks sorted keys from the request's position: `pick` turns a key into an item or drops it
 * (undefined). Stops at `limit` items or MAX_DEBUG_PAGE_SCAN keys, whichever comes first.
 */
export function takePage<T>(
  sorted: readonly string[],
  req: PageRequest,
  pick: (key: string) => T | undefined,
  maxScan: number = MAX_DEBUG_PAGE_SCAN,
): Page<T> {
  const items: T[] = [];
  let i = firstAfter(sorted, req.after);
  let scanned = 0;
  let last: string | undefined;
  while (i < sorted.length && items.length < req.limit && scanned < maxScan) {
    const key = sorted[i++] as string;
    scanned++;
    last = key;
    const item = pick(key);
    if (item !== undefined) items.push(item);
  }
  return { items, next: i < sorted.length && last !== undefined ? encodeContinue(last) : undefined };
}

/**
 * Keys sorted once and kept until the source changes: every page of a walk over 100k items is a
 * binary search and a slice, not a sort. The owner calls invalidate() on every change.
 */
export class SortedKeys {
  private sorted: string[] | undefined;

  constructor(private readonly keys: () => Iterable<string>) {}

  invalidate(): void {
    this.sorted = undefined;
  }

  get(): readonly string[] {
    return (this.sorted ??= [...this.keys()].sort(byKey));
  }
}

/** The page's response: its body as the page shapes it, the next page in headers. */
export function pageResponse(req: DebugRequest, body: unknown, next: string | undefined): DebugResponse {
  if (next === undefined) return { body };
  const query = new URLSearchParams(req.query);
  query.set('continue', next);
  return {
    body,
    headers: { [DEBUG_CONTINUE_HEADER]: next, link: `<${req.path}?${query.toString()}>; rel="next"` },
  };
}

/** A 400 for a bad limit or token. */
export function pageError(error: string): DebugResponse {
  return { status: 400, body: { error } };
}
