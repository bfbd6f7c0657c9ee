// The ztunnel-like clients of the xDS benches: streams opened by xds-client-worker processes (so
// the clients' parsing and ACKing is not on the server's event loop), and what they report: each
// stream's sync, and when each pushed resource version arrived. Shared by the `xds` and
// `multicluster` scenarios, so both measure a push with the same clients.

import { ChildProcess, fork } from 'node:child_process';
import * as path from 'node:path';
import type { WorkerConfig, WorkerMessage } from './xds-client-worker';

/** Client processes the streams are spread over: enough that no one client process is the bottleneck on two cores. */
export const WORKER_COUNT = 4;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Clients {
  readonly workers: ChildProcess[] = [];
  readonly synced = new Map<number, { at: number; resources: number; bytes: number }>();
  /** version -> receipt times */
  readonly receipts = new Map<string, number[]>();
  readonly errors: string[] = [];

  spawn(
    config: Omit<WorkerConfig, 'streams' | 'firstIndex'>,
    streams: number,
    workers: number,
    firstIndex = 0,
  ): ChildProcess[] {
    const script = path.join(__dirname, 'xds-client-worker.js');
    const started: ChildProcess[] = [];
    let next = firstIndex;
    for (let w = 0; w < workers; w++) {
      const count = Math.floor(streams / workers) + (w < streams % workers ? 1 : 0);
      const cfg: WorkerConfig = { ...config, streams: count, firstIndex: next };
      next += count;
      const child = fork(script, [JSON.stringify(cfg)], {
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        execArgv: ['--max-old-space-size=4096'],
      });
      child.on('message', (m: WorkerMessage) => this.receive(m));
      this.workers.push(child);
      started.push(child);
    }
    return started;
  }

  private receive(m: WorkerMessage): void {
    if (m.t === 'synced') this.synced.set(m.stream, { at: m.at, resources: m.resources, bytes: m.bytes });
    else if (m.t === 'recv') {
      for (const [version, at] of m.items) {
        let list = this.receipts.get(version);
        if (!list) this.receipts.set(version, (list = []));
        list.push(at);
      }
    } else if (m.t === 'error' && this.errors.length < 20) this.errors.push(m.message);
  }

  async until(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${what}${this.errors.length ? `; client errors: ${this.errors.slice(0, 3).join('; ')}` : ''}`,
        );
      await sleep(20);
    }
  }

  stop(): void {
    for (const w of this.workers) w.kill();
  }
}
