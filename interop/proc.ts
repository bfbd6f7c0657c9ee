// CPU time and memory of a running process, read from /proc (Linux), for the figures a run reports.

import { readFileSync } from 'node:fs';

/** Kernel clock ticks per second (USER_HZ): 100 on every Linux architecture Node runs on. */
const TICKS_PER_SECOND = 100;

export interface ProcessSample {
  cpuSeconds: number;
  rssBytes: number;
  peakRssBytes: number;
}

export function sampleProcess(pid: number): ProcessSample {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command (which may hold spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { cpuSeconds: (utime + stime) / TICKS_PER_SECOND, rssBytes: kib('VmRSS'), peakRssBytes: kib('VmHWM') };
}

export const mib = (bytes: number) => Math.round((bytes / (1 << 20)) * 10) / 10;
