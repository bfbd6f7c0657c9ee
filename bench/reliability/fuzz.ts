// `npm run fuzz`: structural fuzzing of every untrusted input the control plane parses.
//   --inputs N    total inputs, split over the targets by TARGET_WEIGHTS (default 1,000,000)
//   --seed S      run seed (default: from the clock; printed so the run can be repeated)
//   --target T    one target (repeatable): admission, delta-request, csr, manifest, http1
//   --case I      replay one case of one target and print its whole input
// Exit status 1 when any input crashed, broke a rule, hung, or the heap kept growing.

import { logs } from '../../src/log/logger';
import { formatFailure, replayCommand, runFuzz } from './fuzz-runner';
import { createTarget, splitInputs, TARGET_NAMES, TargetName } from './targets';

const DEFAULT_INPUTS = 1_000_000;

interface Args {
  inputs: number;
  seed: number;
  targets: TargetName[];
  onlyCase?: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { inputs: DEFAULT_INPUTS, seed: Date.now() % 2 ** 31, targets: [] };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--inputs') args.inputs = Number(value.replace(/_/g, ''));
    else if (flag === '--seed') args.seed = Number(value);
    else if (flag === '--case') args.onlyCase = Number(value);
    else if (flag === '--target') {
      if (!(TARGET_NAMES as readonly string[]).includes(value))
        throw new Error(`unknown target "${value}" (one of ${TARGET_NAMES.join(', ')})`);
      args.targets.push(value as TargetName);
    } else throw new Error(`unknown flag ${flag}`);
    if (flag !== '--target' && !Number.isSafeInteger(Number(value.replace(/_/g, ''))))
      throw new Error(`${flag} must be an integer`);
  }
  if (args.targets.length === 0) args.targets = [...TARGET_NAMES];
  if (args.onlyCase !== undefined && args.targets.length !== 1) throw new Error('--case needs exactly one --target');
  return args;
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  // The code under test logs every refusal; a million of them would only measure the logger.
  logs.configure('default:none');
  // Libraries under test may emit process warnings (the yaml library does for complex keys);
  // a million of them on stderr would drown the report, so they are counted instead.
  const warnings = new Map<string, number>();
  process.removeAllListeners('warning');
  process.on('warning', (w) =>
    warnings.set(
      w.message.replace(/"[^"]*"/g, '"…"').slice(0, 120),
      (warnings.get(w.message.replace(/"[^"]*"/g, '"…"').slice(0, 120)) ?? 0) + 1,
    ),
  );
  const targets = [];
  for (const name of args.targets) targets.push(await createTarget(name));
  const inputs = splitInputs(args.inputs, args.targets);
  const plan = [...inputs].map(([t, n]) => `${t} ${n.toLocaleString('en-US')}`).join(', ');
  console.log(
    `fuzz: seed ${args.seed}, ${args.onlyCase !== undefined ? `case ${args.onlyCase} of ${args.targets[0]}` : plan}`,
  );
  const started = performance.now();
  const report = await runFuzz(targets, {
    seed: args.seed,
    inputs,
    ...(args.onlyCase !== undefined ? { onlyCase: args.onlyCase } : {}),
    onFailure: (f) => console.log(formatFailure(f)),
    onProgress: (t, done, total) => {
      if (done % 50000 === 0) console.log(`  ${t}: ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')}`);
    },
  });
  for (const t of targets) await t.close?.();
  const seconds = (performance.now() - started) / 1000;
  if (args.onlyCase !== undefined) {
    const f = report.failures[0];
    if (f) console.log(`\nfull input:\n${f.input}`);
    else console.log('the case passes');
    return f ? 1 : 0;
  }
  console.log('\ntarget         inputs    accepted   refused  failures  inputs/s  slowest ms  heap after MiB');
  let total = 0;
  let failures = 0;
  for (const s of report.targets) {
    total += s.inputs;
    failures += s.failures;
    const rate = Math.round(s.inputs / (s.ms / 1000));
    console.log(
      `${s.target.padEnd(13)} ${String(s.inputs).padStart(8)} ${String(s.accepted).padStart(10)} ${String(s.refused).padStart(9)} ${String(s.failures).padStart(9)} ${String(rate).padStart(9)} ${s.slowestMs.toFixed(1).padStart(11)} ${String(s.heapAfterMiB).padStart(15)}`,
    );
    for (const [k, v] of Object.entries(s.tally).slice(0, 12)) console.log(`    ${String(v).padStart(7)}  ${k}`);
  }
  const { heap } = report;
  console.log(
    `\n${total.toLocaleString('en-US')} inputs in ${seconds.toFixed(1)} s (${Math.round(total / seconds)}/s); heap after GC ${heap.warmMiB} MiB warm, ${heap.endMiB} MiB at the end (${heap.growthMiB >= 0 ? '+' : ''}${heap.growthMiB} MiB)${heap.bounded ? '' : ' - NOT BOUNDED'}`,
  );
  for (const [w, n] of warnings) console.log(`process warnings (${n}x): ${w}`);
  console.log(`failures: ${failures}${failures > 0 ? ` (first: ${replayCommand(report.failures[0]!)})` : ''}`);
  return failures === 0 && heap.bounded ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error((err as Error).message);
    process.exit(2);
  },
);
