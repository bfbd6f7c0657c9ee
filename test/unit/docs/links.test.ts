// Every relative link in the project's Markdown (README.md, the other top-level pages and docs/*.md)
// points to a file that exists, and every `#anchor` to a heading of the page it names, as GitHub
// makes anchors from headings. Pages move between README.md and docs/; a link left behind would
// otherwise only be found by a reader.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../../support/cli';

const TOP_LEVEL = ['README.md', 'CONTRIBUTING.md', 'BENCHMARKS.md', 'RELIABILITY.md'];

function pages(): string[] {
  const docs = fs
    .readdirSync(path.join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  return [...TOP_LEVEL.filter((f) => fs.existsSync(path.join(REPO_ROOT, f))), ...docs].sort();
}

/** The page's lines with its fenced code blocks blanked: a `#` line there is a shell comment, not a heading. */
function prose(text: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      out.push('');
      continue;
    }
    out.push(fenced ? '' : line);
  }
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen; repeats get -1, -2, ... */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Inline links and images, `[text](target)` with an optional title, outside code. */
function links(text: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  // Code spans are kept whole so a link's text may hold one; only code blocks are blanked.
  let fenced = false;
  text.split('\n').forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    const bare = line.replace(/`[^`]*`/g, (m) => m.replace(/[[\]()]/g, ' '));
    for (const m of bare.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ line: i + 1, target: m[1]! });
  });
  return out;
}

const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;

describe('links between the Markdown pages', () => {
  const all = pages();

  test('finds the pages', () => {
    expect(all).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md', 'docs/install.md']));
  });

  test.each(all)('%s: every relative link names an existing file, and every #anchor a heading', (page) => {
    const text = fs.readFileSync(path.join(REPO_ROOT, page), 'utf8');
    const broken: string[] = [];
    for (const { line, target } of links(text)) {
      if (EXTERNAL.test(target)) continue;
      const [file, anchor] = target.split('#', 2) as [string, string | undefined];
      const resolved = file === '' ? path.join(REPO_ROOT, page) : path.resolve(path.dirname(path.join(REPO_ROOT, page)), file);
      if (!fs.existsSync(resolved)) {
        broken.push(`${page}:${line}: ${target}: no such file`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (!resolved.endsWith('.md')) {
        broken.push(`${page}:${line}: ${target}: an anchor into a file that is not Markdown`);
        continue;
      }
      const anchors = anchorsOf(fs.readFileSync(resolved, 'utf8'));
      if (!anchors.has(decodeURIComponent(anchor)))
        broken.push(`${page}:${line}: ${target}: no heading with that anchor in ${path.relative(REPO_ROOT, resolved)}`);
    }
    expect(broken).toEqual([]);
  });
});

describe('anchorsOf, the heading rule the links are checked against', () => {
  test('follows GitHub: lower case, punctuation dropped, spaces to hyphens, repeats numbered', () => {
    const text = [
      '# Installing istiod-ts',
      '### Leader locks, and istiod-ts beside istiod',
      '## Plugged-in CA (`ROOT_CA_DIR`, default `./etc/cacerts`)',
      '## Values',
      '## Values',
      '```sh',
      '# not a heading',
      '```',
    ].join('\n');
    expect([...anchorsOf(text)]).toEqual([
      'installing-istiod-ts',
      'leader-locks-and-istiod-ts-beside-istiod',
      'plugged-in-ca-root_ca_dir-default-etccacerts',
      'values',
      'values-1',
    ]);
  });
});
