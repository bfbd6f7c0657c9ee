// Runs the built `istiod-ts` binary as a user would, for end-to-end tests. `npm test` builds
// dist/ before jest starts, so the binary is always the current code.

import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join, sep } from 'node:path';

/** The repository's root, whether this file runs from test/ (jest) or compiled under dist/ (the interop harness). */
export const REPO_ROOT = join(__dirname, '..', '..', ...(__dirname.includes(`${sep}dist${sep}`) ? ['..'] : []));
export const BIN = join(REPO_ROOT, 'bin', 'istiod-ts.js');
export const DEMO = join(REPO_ROOT, 'examples', 'demo');

/** Every listener of `serve` on a free loopback port. */
export const LOOPBACK_LISTENER_ARGS: readonly string[] = [
  '--grpcAddr',
  '127.0.0.1:0',
  '--secureGRPCAddr',
  '127.0.0.1:0',
  '--httpsAddr',
  '127.0.0.1:0',
  '--monitoringAddr',
  '127.0.0.1:0',
  '--httpAddr',
  '127.0.0.1:0',
];

/** LOOPBACK_LISTENER_ARGS with some listeners at other addresses ('' turns one off). */
export function listenerArgs(addresses: Record<string, string>): string[] {
  // A value follows its flag: replace it when the flag before it is one of `addresses`.
  return LOOPBACK_LISTENER_ARGS.map((arg, i, all) => {
    const before = all[i - 1];
    return (before?.startsWith('--') ? addresses[before.slice(2)] : undefined) ?? arg;
  });
}

/** `serve` on the demo mesh with its state in `state`, no meshConfig file, every listener on a free loopback port. */
export function localServeArgs(state: string): string[] {
  return [
    '--configDir',
    DEMO,
    '--stateDir',
    state,
    '--meshConfig',
    join(state, 'no-such-mesh-file'),
    ...LOOPBACK_LISTENER_ARGS,
  ];
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a short command to completion. */
export function runCli(args: string[], env: Record<string, string> = {}): RunResult {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 20_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Runs a short command to completion without blocking the event loop, for commands that talk to a
 * server this test process runs (the test API server): spawnSync would stop it from answering.
 */
export function runCliAsync(args: string[], env: Record<string, string> = {}, timeoutMs = 20_000): Promise<RunResult> {
  return runBinary(process.execPath, [BIN, ...args], { ...process.env, ...env }, timeoutMs);
}

/** Any program to completion, its output as text; killed after `timeoutMs`. */
export function runBinary(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 20_000,
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

export interface LogLine {
  level: string;
  scope: string;
  msg: string;
  [k: string]: unknown;
}

/** A running `istiod-ts serve`, with its parsed log lines and bound ports. */
export class ServerProcess {
  readonly logs: LogLine[] = [];
  stdout = '';
  private readonly waiters: { match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(readonly child: ChildProcess) {
    let buffered = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try {
          const parsed = JSON.parse(line) as LogLine;
          this.logs.push(parsed);
          for (const w of [...this.waiters]) {
            if (w.match(parsed)) {
              this.waiters.splice(this.waiters.indexOf(w), 1);
              w.resolve(parsed);
            }
          }
        } catch {
          // Not a log line (e.g. a usage message); kept out of the parsed logs.
        }
      }
    });
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  static start(args: string[], env: Record<string, string> = {}): ServerProcess {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new ServerProcess(child);
  }

  waitForLog(match: (l: LogLine) => boolean, timeoutMs = 20_000): Promise<LogLine> {
    const found = this.logs.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `no matching log line within ${timeoutMs} ms; saw:\n${this.logs.map((l) => JSON.stringify(l)).join('\n')}`,
            ),
          ),
        timeoutMs,
      );
      this.waiters.push({
        match,
        resolve: (l) => {
          clearTimeout(timer);
          resolve(l);
        },
      });
    });
  }

  /** The port a listener bound, from its "listening" log line. */
  async port(listener: string): Promise<number> {
    const line = await this.waitForLog((l) => l.msg === 'listening' && l['listener'] === listener);
    return line['port'] as number;
  }

  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}

/** Polls a URL until it answers with the status, or gives up. */
export async function waitForStatus(url: string, status: number, timeoutMs = 20_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.status === status) return res;
      last = `${res.status} ${await res.text()}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms; last: ${last}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
