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

/**
 * Worker-thread source that connects to the CA as ztunnel does: one TLS 1.3 channel, bearer token
 * and clusterid metadata. Leaves `parentPort`, `w` (workerData), `grpc`, `client` and `md` in scope.
 * workerData: grpcPath, protoLoaderPath, protoPath, rootPem, port, serverName, token.
 */
export const CA_CLIENT_SETUP = `const { parentPort, workerData: w } = require('node:worker_threads');
const grpc = require(w.grpcPath);
const protoLoader = require(w.protoLoaderPath);
const tls = require('node:tls');
const pkg = protoLoader.loadSync(w.protoPath, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
const Service = grpc.loadPackageDefinition(pkg).istio.v1.auth.IstioCertificateService;
const creds = grpc.credentials.createFromSecureContext(tls.createSecureContext({ ca: w.rootPem, minVersion: 'TLSv1.3' }));
const client = new Service('127.0.0.1:' + w.port, creds, { 'grpc.ssl_target_name_override': w.serverName, 'grpc.default_authority': w.serverName });
const md = new grpc.Metadata();
md.set('authorization', 'Bearer ' + w.token);
md.set('clusterid', 'Kubernetes');
`;
