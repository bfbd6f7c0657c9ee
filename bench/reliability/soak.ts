// `npm run soak`: hours of churn in minutes against one in-process server in local mode.
//   --minutes M   length of the churn (default 5; fractions allowed)
//   --seed S      seed of the churn's choices (default: from the clock; printed)
// Exit status 1 when anything failed, the final xDS state differs from a fresh build, or RSS
// after GC grew more than MAX_RSS_GROWTH from its warmed-up value.

import { MAX_RSS_GROWTH, runSoak } from './soak-runner';

function parseArgs(argv: string[]): { minutes: number; seed: number } {
  const args = { minutes: 5, seed: Date.now() % 2 ** 31 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i]!, Number(argv[i + 1])];
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${flag} needs a positive number`);
    if (flag === '--minutes') args.minutes = value;
    else if (flag === '--seed') args.seed = Math.floor(value);
    else throw new Error(`unknown flag ${flag}`);
  }
  return args;
}

async function main(): Promise<number> {
  const { minutes, seed } = parseArgs(process.argv.slice(2));
  console.log(`soak: ${minutes} min, seed ${seed}`);
  const r = await runSoak({ durationMs: minutes * 60_000, seed, log: (l) => console.log(l) });
  const c = r.counts;
  const perHour = (n: number) => Math.round((n / r.seconds) * 3600).toLocaleString('en-US');
  console.log(`\nin ${r.seconds.toFixed(0)} s:`);
  console.log(
    `  manifest files: ${c.fileWrites} written, ${c.fileRenames} replaced by rename, ${c.fileDeletes} deleted (${perHour(c.fileWrites + c.fileRenames + c.fileDeletes)}/h)`,
  );
  console.log(
    `  ztunnel sessions: ${c.ztunnelSessions} (${perHour(c.ztunnelSessions)}/h), xDS responses received: ${c.xdsResponses}`,
  );
  console.log(`  certificates signed: ${c.csrs} (${perHour(c.csrs)}/h)`);
  console.log(`  admission reviews: ${c.reviews}, ${c.reviewsDenied} denied (${perHour(c.reviews)}/h)`);
  console.log(
    `  final state: ${r.state.resources} resources; fresh client ${r.state.fresh.length === 0 ? 'equal to' : `${r.state.fresh.length} differences from`} a fresh build, long-lived client ${r.state.witness.length === 0 ? 'equal' : `${r.state.witness.length} differences`}`,
  );
  console.log(
    `  RSS after GC: ${r.rss.warmMiB} MiB warmed up, ${r.rss.endMiB} MiB at the end (${(r.rss.growth * 100).toFixed(1)}%, limit ${MAX_RSS_GROWTH * 100}%)`,
  );
  for (const f of r.failures) console.log(`  FAIL ${f}`);
  console.log(r.passed ? 'soak passed' : 'soak FAILED');
  return r.passed ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
