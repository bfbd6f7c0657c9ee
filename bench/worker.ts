// Scenarios run their load generators on worker threads so that the measured server keeps the
// main thread; this is the one request/answer exchange they use.

import type { Worker } from 'node:worker_threads';

/** Posts a message to a load-generator worker and resolves with its next answer. */
export function ask<T>(worker: Worker, message: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => {
      worker.off('message', onMessage);
      reject(err);
    };
    const onMessage = (m: T) => {
      worker.off('error', onError);
      resolve(m);
    };
    worker.once('message', onMessage);
    worker.once('error', onError);
    worker.postMessage(message);
  });
}
