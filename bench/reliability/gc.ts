// A full GC on demand, also where the process was not started with --expose-gc (jest):
// V8 lets the flag be set at run time, and a new context then carries a gc() function.

import * as v8 from 'node:v8';
import * as vm from 'node:vm';

let gcFn: (() => void) | undefined = (globalThis as { gc?: () => void }).gc;

function gc(): () => void {
  if (!gcFn) {
    v8.setFlagsFromString('--expose-gc');
    gcFn = vm.runInNewContext('gc') as () => void;
  }
  return gcFn;
}

/** Heap used after two full collections (the second catches what finalizers freed). */
export async function collectGarbage(): Promise<number> {
  const run = gc();
  run();
  await new Promise((r) => setImmediate(r));
  run();
  return process.memoryUsage().heapUsed;
}

/** Resident set size after two full collections. */
export async function rssAfterGc(): Promise<number> {
  await collectGarbage();
  return process.memoryUsage().rss;
}
