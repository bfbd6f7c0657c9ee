// The paging contract of /debug/ listings (src/contract/debug-page.ts): limits, tokens, order, bounds.

import {
  DEBUG_CONTINUE_HEADER,
  encodeContinue,
  MAX_CONTINUE_TOKEN_CHARS,
  MAX_DEBUG_PAGE_SCAN,
  MAX_DEBUG_PAGE_SIZE,
  pageResponse,
  parsePageRequest,
  SortedKeys,
  takePage,
  type PageRequest,
} from '../../../src/contract/debug-page';

const q = (s: string) => new URLSearchParams(s);

/** A request that must parse; a test of the refusals uses parsePageRequest directly. */
function pageOf(query: string): PageRequest {
  const req = parsePageRequest(q(query));
  if ('error' in req) throw new Error(req.error);
  return req;
}

describe('parsePageRequest', () => {
  test(`without limit a page holds MAX_DEBUG_PAGE_SIZE (${MAX_DEBUG_PAGE_SIZE}) items from the start`, () => {
    expect(parsePageRequest(q(''))).toEqual({ limit: MAX_DEBUG_PAGE_SIZE, after: undefined });
  });

  test('a limit above MAX_DEBUG_PAGE_SIZE is served as the largest page', () => {
    expect(parsePageRequest(q('limit=1000000'))).toEqual({ limit: MAX_DEBUG_PAGE_SIZE, after: undefined });
  });

  test.each(['0', '-1', 'ten', '1.5', '', '1e3'])('limit=%p is refused naming the parameter and its range', (v) => {
    expect(parsePageRequest(q(`limit=${v}`))).toEqual({
      error: expect.stringContaining(`limit must be a whole number from 1 to ${MAX_DEBUG_PAGE_SIZE}`) as string,
    });
  });

  test('a continue token round-trips to the key it names', () => {
    expect(parsePageRequest(q(`limit=5&continue=${encodeContinue('ns/a b')}`))).toEqual({ limit: 5, after: 'ns/a b' });
  });

  test.each([
    ['not base64url', 'a+b/c='],
    ['a base64url text that is not our token', Buffer.from('hello').toString('base64url')],
    ['longer than MAX_CONTINUE_TOKEN_CHARS', 'A'.repeat(MAX_CONTINUE_TOKEN_CHARS + 1)],
  ])('a continue token %s is refused without echoing it', (_why, token) => {
    const out = parsePageRequest(q(`continue=${encodeURIComponent(token)}`));
    expect(out).toEqual({ error: expect.stringContaining('continue is not a token this server gave') as string });
    expect(JSON.stringify(out)).not.toContain(token);
  });
});

describe('takePage', () => {
  const keys = ['a', 'b', 'c', 'd', 'e'];

  test('items come in key order from after the token; the last page has no token', () => {
    const first = takePage(keys, { limit: 2, after: undefined }, (k) => k);
    expect(first.items).toEqual(['a', 'b']);
    const second = takePage(keys, pageOf(`limit=2&continue=${first.next}`), (k) => k);
    expect(second.items).toEqual(['c', 'd']);
    const third = takePage(keys, pageOf(`limit=2&continue=${second.next}`), (k) => k);
    expect(third).toEqual({ items: ['e'], next: undefined });
  });

  test('an item removed between pages does not make the walk skip or repeat another', () => {
    const first = takePage(keys, { limit: 2, after: undefined }, (k) => k);
    const rest = takePage(
      keys.filter((k) => k !== 'b' && k !== 'c'),
      { limit: 10, after: 'b' },
      (k) => k,
    );
    expect([...first.items, ...rest.items]).toEqual(['a', 'b', 'd', 'e']);
  });

  test('a filter that drops most keys stops the page after MAX_DEBUG_PAGE_SCAN keys, with a token to go on', () => {
    const many = Array.from({ length: 50 }, (_, i) => `k${String(i).padStart(2, '0')}`);
    const page = takePage(many, { limit: 10, after: undefined }, (k) => (k === 'k49' ? k : undefined), 20);
    expect(page.items).toEqual([]);
    expect(page.next).toBe(encodeContinue('k19'));
    expect(MAX_DEBUG_PAGE_SCAN).toBe(10 * MAX_DEBUG_PAGE_SIZE);
  });
});

test('SortedKeys sorts by code units once and again only after invalidate()', () => {
  let calls = 0;
  let source = ['b', 'B', 'a'];
  const sorted = new SortedKeys(() => {
    calls++;
    return source;
  });
  expect(sorted.get()).toEqual(['B', 'a', 'b']);
  source = ['z'];
  expect(sorted.get()).toEqual(['B', 'a', 'b']);
  sorted.invalidate();
  expect(sorted.get()).toEqual(['z']);
  expect(calls).toBe(2);
});

test('a page with more to come announces the next page in x-debug-continue and a Link rel="next"', () => {
  const req = { path: '/debug/configz', query: q('limit=2'), method: 'GET', body: '' };
  const out = pageResponse(req, [1, 2], 'TOKEN');
  expect(out.body).toEqual([1, 2]);
  expect(out.headers).toEqual({
    [DEBUG_CONTINUE_HEADER]: 'TOKEN',
    link: '</debug/configz?limit=2&continue=TOKEN>; rel="next"',
  });
  expect(pageResponse(req, [3], undefined)).toEqual({ body: [3] });
});
