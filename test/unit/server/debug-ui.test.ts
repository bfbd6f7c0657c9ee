// /debug/ui's response: a strict Content-Security-Policy that allows exactly the page's own inline
// script and style, and a script that never turns data into markup.

import { createHash } from 'node:crypto';
import { DEBUG_UI_CSP, DEBUG_UI_SCRIPT, debugUiPage } from '../../../src/server/debug-ui';

const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

function inline(html: string, tag: 'script' | 'style'): string[] {
  return [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1] ?? '');
}

describe('/debug/ui', () => {
  const res = debugUiPage();
  const html = res.body as string;

  it('is HTML sent with the CSP, nosniff, no referrer and no caching', () => {
    expect(res.contentType).toBe('text/html; charset=utf-8');
    expect(res.headers).toEqual({
      'content-security-policy': DEBUG_UI_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    });
  });

  it("allows by hash exactly the page's one inline script and one inline style, nothing inline besides", () => {
    const scripts = inline(html, 'script');
    const styles = inline(html, 'style');
    expect(scripts).toHaveLength(1);
    expect(styles).toHaveLength(1);
    const directives = new Map(DEBUG_UI_CSP.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual([hash(scripts[0] ?? '')]);
    expect(directives.get('style-src')).toEqual([hash(styles[0] ?? '')]);
    expect(directives.get('connect-src')).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(DEBUG_UI_CSP).not.toContain('unsafe');
    // No handler attributes or inline styles, which the policy would block anyway.
    expect(html).not.toMatch(/\son[a-z]+=|\sstyle=/);
  });

  it('writes text, never markup: no innerHTML, outerHTML, insertAdjacentHTML, document.write or eval', () => {
    expect(DEBUG_UI_SCRIPT).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|Function\(/);
    expect(DEBUG_UI_SCRIPT).toContain('textContent');
  });
});
