// `npm run bench [scenario...]`: runs scenarios from bench/scenarios/, prints a table and writes
// bench/results/latest.json. Without names it runs every scenario.

import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Measurement, Scenario } from './scenario';

interface Result {
  scenario: string;
  description: string;
  measurements: Measurement[];
  error?: string;
}

function loadScenarios(): Scenario[] {
  const dir = join(__dirname, 'scenarios');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.js'))
    .sort()
    .map((f) => (require(join(dir, f)) as { default: Scenario }).default)
    .filter((s): s is Scenario => s !== undefined && typeof s.run === 'function');
}

function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 100) return n.toFixed(0);
  if (Math.abs(n) >= 1) return n.toFixed(2);
  return n.toPrecision(3);
}

function table(results: Result[]): string {
  const rows = [['scenario', 'metric', 'median', 'unit', 'reference', 'ratio', 'target', 'met']];
  for (const r of results) {
    if (r.error) rows.push([r.scenario, `FAILED: ${r.error}`, '', '', '', '', '', '']);
    for (const m of r.measurements) {
      rows.push([
        r.scenario,
        m.metric,
        fmt(m.value),
        m.unit,
        m.reference ? `${m.reference.metric} = ${fmt(m.reference.value)}` : '',
        m.reference ? fmt(m.reference.ratio) : '',
        m.target ?? '',
        m.met === undefined ? '' : m.met ? 'yes' : 'NO',
      ]);
    }
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const all = loadScenarios();
  const unknown = wanted.filter((w) => !all.some((s) => s.name === w));
  if (unknown.length > 0) {
    process.stderr.write(`unknown scenario(s): ${unknown.join(', ')}; available: ${all.map((s) => s.name).join(', ')}\n`);
    process.exit(2);
  }
  const chosen = wanted.length > 0 ? all.filter((s) => wanted.includes(s.name)) : all;
  const results: Result[] = [];
  for (const s of chosen) {
    process.stderr.write(`running ${s.name}: ${s.description}\n`);
    try {
      results.push({ scenario: s.name, description: s.description, measurements: await s.run() });
    } catch (err) {
      results.push({ scenario: s.name, description: s.description, measurements: [], error: (err as Error).message });
    }
  }
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
  const out = { date: new Date().toISOString(), command: `npm run bench ${wanted.join(' ')}`.trim(), machine, results };
  const dir = join(__dirname, '..', '..', 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'latest.json'), JSON.stringify(out, null, 2) + '\n');
  process.stdout.write(`${table(results)}\n\nmachine: ${machine.cpus} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, node ${machine.node}\n`);
  if (results.some((r) => r.error)) process.exitCode = 1;
}

void main();
