// CA_BENCH_CPU=1: per-thread CPU, run-queue wait and context switches of the bench process around
// a run, from /proc (Linux only), to see which thread a scenario's time goes to.

import * as fs from 'node:fs';
import type { Worker } from 'node:worker_threads';
import type { LoadResult } from './scenario';
import { ask } from './worker';

/** CA_BENCH_CPU=1 prints each thread's CPU time per CSR for each run (development aid, Linux only). */
export const CPU_TRACE = process.env['CA_BENCH_CPU'] === '1';

/** One thread's scheduler figures, from /proc: CPU and run-queue wait in ms, context switches. */
interface ThreadSched {
  cpuMs: number;
  waitMs: number;
  voluntary: number;
  involuntary: number;
}

/** What CA_BENCH_CPU compares before and after a run: each thread of this process, and the whole machine. */
export interface CpuSnapshot {
  threads: Map<string, ThreadSched>;
  /** /proc/stat jiffies of all CPUs: busy (user+nice+system+irq+softirq), idle (+iowait), steal. */
  machine: { busy: number; idle: number; steal: number };
}

/** Per-thread schedstat (ns) and context switches of this process, and the machine's CPU times. */
export function threadCpu(): CpuSnapshot {
  const threads = new Map<string, ThreadSched>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const [run, wait] = fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      const status = fs.readFileSync(`/proc/self/task/${tid}/status`, 'utf8');
      const count = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
      threads.set(tid, {
        cpuMs: (run ?? 0) / 1e6,
        waitMs: (wait ?? 0) / 1e6,
        voluntary: count('voluntary_ctxt_switches'),
        involuntary: count('nonvoluntary_ctxt_switches'),
      });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const at = (i: number) => f[i] ?? 0;
  return { threads, machine: { busy: at(0) + at(1) + at(2) + at(5) + at(6), idle: at(3) + at(4), steal: at(7) } };
}

/** Labels for CA_BENCH_CPU: this process's main thread and the load generators' threads, by name. */
export async function threadNames(clients: Record<string, Worker>): Promise<Map<string, string>> {
  const names = new Map([[String(process.pid), 'main']]);
  for (const [name, worker] of Object.entries(clients)) names.set(await ask<string>(worker, { type: 'tid' }), name);
  return names;
}

/**
 * Prints, per run: the process's CPU per CSR and share of the cores, the machine's idle share
 * (other processes included), and per thread its CPU and run-queue wait per CSR and its
 * involuntary context switches (preemptions) per CSR. `names` labels known threads by tid.
 */
export function traceCpu(
  before: CpuSnapshot,
  after: CpuSnapshot,
  run: LoadResult,
  what: string,
  names: ReadonlyMap<string, string> = new Map(),
): void {
  const per = (ms: number) => ((ms * 1000) / run.ok).toFixed(0);
  const threads = [...after.threads]
    .map(([tid, a]) => {
      const b = before.threads.get(tid);
      return {
        tid,
        cpu: a.cpuMs - (b?.cpuMs ?? 0),
        wait: a.waitMs - (b?.waitMs ?? 0),
        preempted: a.involuntary - (b?.involuntary ?? 0),
        slept: a.voluntary - (b?.voluntary ?? 0),
      };
    })
    .filter((t) => t.cpu > 0.5)
    .sort((a, b) => b.cpu - a.cpu);
  const total = threads.reduce((n, t) => n + t.cpu, 0);
  const m = (k: 'busy' | 'idle' | 'steal') => after.machine[k] - before.machine[k];
  const jiffies = m('busy') + m('idle') + m('steal');
  process.stderr.write(
    `cpu ${what}: ${run.ok} CSRs, ${((run.ok * 1000) / run.elapsedMs).toFixed(0)}/s, process ${per(total)} us/CSR, ` +
      `${((100 * total) / run.elapsedMs).toFixed(0)}% of one core; machine idle ${((100 * m('idle')) / jiffies).toFixed(0)}%` +
      ` steal ${((100 * m('steal')) / jiffies).toFixed(0)}%; per thread cpu/runqueue-wait us per CSR, ` +
      `sleeps/preemptions per CSR:\n` +
      threads
        .map(
          (t) =>
            `  ${(names.get(t.tid) ?? t.tid).padEnd(10)} ${per(t.cpu).padStart(4)} / ${per(t.wait).padStart(4)}  ` +
            `${(t.slept / run.ok).toFixed(2)} / ${(t.preempted / run.ok).toFixed(2)}`,
        )
        .join('\n') +
      '\n',
  );
}
