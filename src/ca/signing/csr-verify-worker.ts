// A CSR-verifier worker thread (started by csr-verifier-pool.ts from this file). Messages in:
// WorkerMessage; out: WireResult[], one or more per batch.
//
// Jobs wait in one lane per requesting node and are taken round-robin across lanes; between two
// jobs the worker takes whatever the event loop has posted since (receiveMessageOnPort), so a job
// of a quiet node runs next instead of after the rest of a flooding node's batch.

import type { KeyObject } from 'node:crypto';
import { parentPort, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { RESULT_FLUSH_MS, runJob, type WireJob, type WireResult, type WorkerMessage } from './csr-verify-job';

const keys = new Map<number, KeyObject>();
const lanes = new Map<string, WireJob[]>();
/** Lanes with jobs, in the order they are served next. */
const ring: string[] = [];
let waiting = 0;
/** The job take() returned last was its lane's last. */
let laneEmptied = false;
let draining = false;

function accept(m: WorkerMessage): void {
  if ('keys' in m) for (const [id, key] of m.keys) keys.set(id, key);
  else if ('forget' in m) keys.delete(m.forget);
  else
    for (const job of m.jobs) {
      const name = job.lane ?? '';
      let lane = lanes.get(name);
      if (!lane) {
        lane = [];
        lanes.set(name, lane);
        ring.push(name);
      }
      lane.push(job);
      waiting++;
    }
}

/** The next job round-robin; only called while `waiting` > 0, so the ring's lane has one. */
function take(): WireJob {
  const name = ring.shift() ?? '';
  const lane = lanes.get(name) ?? [];
  const job = lane.shift();
  if (!job) throw new Error(`CSR verifier lane '${name}' is empty while ${waiting} jobs wait`);
  laneEmptied = lane.length === 0;
  if (laneEmptied) lanes.delete(name);
  else ring.push(name);
  waiting--;
  return job;
}

function drain(port: MessagePort): void {
  draining = true;
  let done: WireResult[] = [];
  let since = performance.now();
  while (waiting > 0) {
    done.push(runJob(take(), keys));
    for (let r = receiveMessageOnPort(port); r !== undefined; r = receiveMessageOnPort(port))
      accept(r.message as WorkerMessage);
    // A node's last job goes back at once: a quiet node's one call does not wait for the flush.
    if ((laneEmptied && waiting > 0) || performance.now() - since >= RESULT_FLUSH_MS) {
      port.postMessage(done);
      done = [];
      since = performance.now();
    }
  }
  if (done.length > 0) port.postMessage(done);
  draining = false;
}

const port = parentPort;
if (!port) throw new Error('csr-verify-worker.ts runs only as a worker thread (CsrVerifierPool starts it)');
port.on('message', (m: WorkerMessage) => {
  accept(m);
  if (!draining) drain(port);
});
