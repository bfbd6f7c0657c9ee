// Scenarios run their load generators on worker threads so that the measured server keeps the
// main thread; this is the one request/answer exchange they use.

import type { Worker } from 'node:worker_threads';
import { certificateServiceDefinition } from '../src/ca/proto';

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

/**
 * The CA request bodies the load generators send: each CSR as a framed gRPC message (5-byte
 * prefix + IstioCertificateRequest), encoded once here so the callers spend nothing on protobuf.
 */
export function caRequestFrames(csrs: readonly string[], impersonate: string): Buffer[] {
  const serialize = certificateServiceDefinition()['CreateCertificate']!.requestSerialize;
  return csrs.map((csr) => {
    const message = serialize({
      csr,
      validity_duration: '86400',
      metadata: { fields: { ImpersonatedIdentity: { kind: 'stringValue', stringValue: impersonate } } },
    });
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt32BE(message.length, 1);
    message.copy(frame, 5);
    return frame;
  });
}

/**
 * Worker-thread source that calls the CA as ztunnel does: one TLS 1.3 h2 connection to the
 * server name, gRPC with bearer token and clusterid metadata. It speaks gRPC directly over
 * node:http2 with pre-encoded frames, because the load generator shares the machine's two cores
 * with the server it measures: grpc-js's client machinery cost about as much CPU per call as the
 * server's whole request path, and a real ztunnel's CPU is on another node.
 * Leaves `parentPort`, `w` (workerData) and `createCertificate(frameIndex, done)` in scope, where
 * done(err) gets an Error for any non-OK status or an empty answer; `closeClient()` ends it.
 * workerData: rootPem, port, serverName, token, frames (from caRequestFrames).
 */
export const CA_CLIENT_SETUP = `const { parentPort, workerData: w } = require('node:worker_threads');
const http2 = require('node:http2');
const session = http2.connect('https://' + w.serverName + ':' + w.port, {
  host: '127.0.0.1', servername: w.serverName, ca: w.rootPem, minVersion: 'TLSv1.3', ALPNProtocols: ['h2'],
});
session.on('error', () => {});
const frames = w.frames.map((f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength));
const headers = {
  ':method': 'POST', ':path': '/istio.v1.auth.IstioCertificateService/CreateCertificate', ':authority': w.serverName,
  'content-type': 'application/grpc', te: 'trailers', authorization: 'Bearer ' + w.token, clusterid: 'Kubernetes',
};
function createCertificate(index, done) {
  const stream = session.request(headers);
  let status, message, bytes = 0;
  const read = (h) => { if (h['grpc-status'] !== undefined) { status = h['grpc-status']; message = h['grpc-message']; } };
  stream.on('response', read);
  stream.on('trailers', read);
  stream.on('data', (chunk) => { bytes += chunk.length; });
  stream.on('close', () => {
    if (status === '0' && bytes > 5) done(null);
    else done(new Error('grpc-status ' + status + (message ? ': ' + decodeURIComponent(message) : '') + (stream.rstCode ? ' (RST ' + stream.rstCode + ')' : '')));
  });
  stream.on('error', () => {});
  stream.end(frames[index % frames.length]);
}
function closeClient() { session.close(); }
`;
