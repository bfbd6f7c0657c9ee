// Jest setup (jest.config.js setupFiles): worker threads from TypeScript sources. Under jest, src/
// runs as .ts through @swc/jest, so a module that starts a worker from the file beside it
// (require.resolve('./parse-worker')) names a .ts file, which Node cannot run. Such workers start
// with ts-require-hook.cjs preloaded, which compiles .ts with the same swc options; every other
// worker starts as asked.

import * as path from 'node:path';
import type * as WorkerThreads from 'node:worker_threads';

const HOOK = path.join(__dirname, 'ts-require-hook.cjs');

function workerThreadsFromSources(): typeof WorkerThreads {
  const actual = jest.requireActual<typeof WorkerThreads>('node:worker_threads');
  class SourceWorker extends actual.Worker {
    constructor(filename: string | URL, options: WorkerThreads.WorkerOptions = {}) {
      const file = filename instanceof URL ? filename.pathname : filename;
      const fromSource = !options.eval && file.endsWith('.ts');
      super(
        filename,
        fromSource ? { ...options, execArgv: [...(options.execArgv ?? process.execArgv), '--require', HOOK] } : options,
      );
    }
  }
  return { ...actual, Worker: SourceWorker };
}

jest.mock('node:worker_threads', workerThreadsFromSources);
jest.mock('worker_threads', workerThreadsFromSources);
