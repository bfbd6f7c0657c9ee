// The one-way flow of src/, read from the import statements themselves (type imports count: they
// tie modules together as much as value imports do). server/ is the composition root: it imports
// everyone and nobody but main.ts imports it; cli/ is the command line, reached only from main.ts;
// and no file reaches itself again through its imports, nor any module (folder of src/).

import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const SRC = path.join(ROOT, 'src');

/** import/export ... from '<spec>' and side-effect imports, across lines; `import type` included. */
const IMPORT_RE = /^[ \t]*(?:import|export)\b(?:[^;'"]*?\bfrom[ \t]*)?['"]([^'"\n]+)['"]/gm;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  const pending = [dir];
  while (pending.length > 0) {
    const d = pending.pop()!;
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else if (entry.name.endsWith('.ts')) out.push(full);
    }
  }
  return out.sort();
}

function resolveRelative(from: string, spec: string): string {
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts')]) if (fs.existsSync(candidate)) return candidate;
  throw new Error(`${rel(from)}: import '${spec}' does not resolve to a .ts file`);
}

const rel = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');

/** file -> files of src/ it imports (relative specifiers only; packages are not part of the graph). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = fs.readFileSync(file, 'utf8');
    const targets = new Set<string>();
    for (const m of text.matchAll(IMPORT_RE)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) targets.add(rel(resolveRelative(file, spec)));
    }
    graph.set(rel(file), [...targets].sort());
  }
  return graph;
}

/** Every cycle found by a depth-first walk (iterative), each as the files along it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const found: string[][] = [];
  for (const start of graph.keys()) {
    if (state.has(start)) continue;
    const stack: { file: string; next: number }[] = [{ file: start, next: 0 }];
    state.set(start, 'open');
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const targets = graph.get(top.file) ?? [];
      if (top.next >= targets.length) {
        state.set(top.file, 'done');
        stack.pop();
        continue;
      }
      const target = targets[top.next++]!;
      const seen = state.get(target);
      if (seen === 'open') {
        const from = stack.findIndex((f) => f.file === target);
        found.push([...stack.slice(from).map((f) => f.file), target]);
      } else if (seen === undefined) {
        state.set(target, 'open');
        stack.push({ file: target, next: 0 });
      }
    }
  }
  return found;
}

/** The same graph between modules: src/<folder>/ or a top-level src/<file>.ts. */
function moduleGraph(graph: Map<string, string[]>): Map<string, string[]> {
  const moduleOf = (file: string) => file.split('/').slice(0, 2).join('/');
  const modules = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = moduleOf(file);
    const set = modules.get(from) ?? new Set<string>();
    modules.set(from, set);
    for (const t of targets) if (moduleOf(t) !== from) set.add(moduleOf(t));
  }
  return new Map([...modules].map(([m, set]) => [m, [...set].sort()]));
}

function importersOf(graph: Map<string, string[]>, folder: string): string[] {
  const out: string[] = [];
  for (const [file, targets] of graph) for (const t of targets) if (t.startsWith(folder)) out.push(`${file} -> ${t}`);
  return out;
}

const graph = importGraph();

describe('imports under src/', () => {
  it('are read, type imports and multi-line imports included', () => {
    // Guards the reader itself: if these edges vanished, the rules below would pass vacuously.
    expect(graph.get('src/main.ts')).toContain('src/server/server.ts');
    expect(graph.get('src/server/context.ts')).toEqual(
      expect.arrayContaining(['src/contract/host.ts', 'src/security/identity.ts']),
    );
    expect(graph.get('src/ambient/services.ts')).toContain('src/ambient/messages.ts');
  });

  it('form no cycle between files', () => {
    expect(cycles(graph).map((c) => c.join(' -> '))).toEqual([]);
  });

  it('form no cycle between modules (the folders of src/)', () => {
    expect(cycles(moduleGraph(graph)).map((c) => c.join(' -> '))).toEqual([]);
  });

  it('reach src/server/ only from src/server/ and src/main.ts (the composition root is imported by nobody else)', () => {
    const upward = importersOf(graph, 'src/server/').filter(
      (edge) => !edge.startsWith('src/server/') && !edge.startsWith('src/main.ts '),
    );
    expect(upward).toEqual([]);
  });

  it('reach src/cli/ only from src/main.ts and cli/ itself', () => {
    const intoCli = importersOf(graph, 'src/cli/').filter(
      (edge) => !edge.startsWith('src/cli/') && !edge.startsWith('src/main.ts '),
    );
    expect(intoCli).toEqual([]);
  });
});
