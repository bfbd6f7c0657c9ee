// `npm run bench [scenario...]`: runs scenarios from bench/scenarios/, prints a table and writes
// bench/results/latest.json. Without names it runs every scenario.
//
// Each scenario runs in a process of its own: what one leaves behind (a heap grown to 100k
// workloads, idle worker threads, code the JIT optimized for another path) made the next one's
// figures depend on the order they ran in (the webhook's p99 was 12.6 ms after the CA scenario
// and 6.8 ms on its own).

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Measurement, Scenario } from './scenario';

interface Result {
  scenario: string;
  description: string;
  measurements: Measurement[];
  error?: string;
}

/** Each compiled file in dist/bench/scenarios/ is a CommonJS module whose default export may be a scenario. */
function loadScenario(file: string): Scenario | undefined {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the scenario files are found at run time, so the path is not static
  return (require(file) as { default?: Scenario }).default;
}

function loadScenarios(): Scenario[] {
  const dir = join(__dirname, 'scenarios');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.js'))
    .sort()
    .map((f) => loadScenario(join(dir, f)))
    .filter((s): s is Scenario => s !== undefined && typeof s.run === 'function');
}

/** More samples than this stay out of the printed table (they are in latest.json). */
const MAX_RUNS_SHOWN = 10;

function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 100) return n.toFixed(0);
  if (Math.abs(n) >= 1) return n.toFixed(2);
  return n.toPrecision(3);
}

function table(results: Result[]): string {
  const rows = [['scenario', 'metric', 'median', 'unit', 'runs', 'reference', 'ratio', 'target', 'met']];
  for (const r of results) {
    if (r.error) rows.push([r.scenario, `FAILED: ${r.error}`, '', '', '', '', '', '', '']);
    for (const m of r.measurements) {
      rows.push([
        r.scenario,
        m.metric,
        fmt(m.value),
        m.unit,
        // Runs are listed when there are a few; a scenario with hundreds of samples keeps them in latest.json.
        m.runs && m.runs.length > 1 && m.runs.length <= MAX_RUNS_SHOWN ? m.runs.map(fmt).join(' ') : '',
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

/** Env var naming the file a child process writes its one scenario's Result to. */
const RESULT_FILE_ENV = 'ISTIOD_TS_BENCH_RESULT_FILE';

async function runScenario(s: Scenario): Promise<Result> {
  try {
    return { scenario: s.name, description: s.description, measurements: await s.run() };
  } catch (err) {
    return { scenario: s.name, description: s.description, measurements: [], error: (err as Error).message };
  }
}

/** Runs one scenario in a fresh Node process with this one's flags, and reads back its Result. */
function runIsolated(s: Scenario): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'istiod-ts-bench-'));
  const file = join(dir, 'result.json');
  return new Promise<Result>((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, __filename, s.name], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, [RESULT_FILE_ENV]: file },
    });
    child.on('exit', (code, signal) => {
      try {
        resolve(JSON.parse(readFileSync(file, 'utf8')) as Result);
      } catch {
        resolve({
          scenario: s.name,
          description: s.description,
          measurements: [],
          error: `scenario process exited with ${signal ?? `code ${code}`} before reporting`,
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const resultFile = process.env[RESULT_FILE_ENV];
  if (resultFile) {
    // A child: run the one scenario named and hand its result to the parent.
    const s = loadScenarios().find((x) => x.name === wanted[0]);
    if (!s) throw new Error(`unknown scenario ${wanted[0]}`);
    writeFileSync(resultFile, JSON.stringify(await runScenario(s)));
    process.exit(0);
  }
  const all = loadScenarios();
  const unknown = wanted.filter((w) => !all.some((s) => s.name === w));
  if (unknown.length > 0) {
    process.stderr.write(
      `unknown scenario(s): ${unknown.join(', ')}; available: ${all.map((s) => s.name).join(', ')}\n`,
    );
    process.exit(2);
  }
  const chosen = wanted.length > 0 ? all.filter((s) => wanted.includes(s.name)) : all;
  const results: Result[] = [];
  for (const s of chosen) {
    process.stderr.write(`running ${s.name}: ${s.description}\n`);
    results.push(await runIsolated(s));
  }
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  };
  const out = { date: new Date().toISOString(), command: `npm run bench ${wanted.join(' ')}`.trim(), machine, results };
  const dir = join(__dirname, '..', '..', 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'latest.json'), JSON.stringify(out, null, 2) + '\n');
  process.stdout.write(
    `${table(results)}\n\nmachine: ${machine.cpus} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, node ${machine.node}\n`,
  );
  if (results.some((r) => r.error)) process.exitCode = 1;
}

void main();
