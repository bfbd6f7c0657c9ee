// A minimal ServerContext for the webhook server: real TLS on 127.0.0.1:0 with a throwaway
// certificate made by openssl, and an HTTPS client that keeps connections alive as the API
// server does.

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { Registry } from 'prom-client';
import { parseServeOptions } from '../../../src/config/options';
import type { MeshConfigSource } from '../../../src/mesh/types';
import type { ServerContext, ServingCertificate } from '../../../src/server/context';
import { ServingCertHolder } from '../../../src/server/serving-cert';
import { MemoryStore } from '../../../src/store/memory-store';

export const SERVER_NAME = 'istiod.istio-system.svc';

/** A self-signed certificate for the webhook's DNS name and 127.0.0.1. */
export function throwawayCert(commonName = 'istiod'): ServingCertificate {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-cert-'));
  try {
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '1',
        '-subj',
        `/CN=${commonName}`,
        '-addext',
        `subjectAltName=DNS:${SERVER_NAME},IP:127.0.0.1`,
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    const certPem = fs.readFileSync(cert, 'utf8');
    return { certChainPem: certPem, privateKeyPem: fs.readFileSync(key, 'utf8'), rootsPem: certPem };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface WebhookHarness {
  ctx: ServerContext;
  certs: ServingCertHolder;
  metrics: Registry;
  readiness: Map<string, boolean>;
  shutdown(): Promise<void>;
}

export function webhookContext(httpsAddr = '127.0.0.1:0'): WebhookHarness {
  const options = parseServeOptions(['--configDir', os.tmpdir(), '--httpsAddr', httpsAddr], {});
  const certs = new ServingCertHolder();
  const metrics = new Registry();
  const readiness = new Map<string, boolean>();
  const hooks: (() => void | Promise<void>)[] = [];
  const mesh: MeshConfigSource = {
    current: () => ({
      trustDomain: 'cluster.local',
      trustDomainAliases: [],
      rootNamespace: 'istio-system',
      defaultConfig: {},
    }),
    subscribe: () => () => undefined,
  };
  const ctx: ServerContext = {
    options,
    store: new MemoryStore(),
    mesh,
    metrics,
    grpc: { addService: () => undefined, secureEnabled: false, closeConnection: () => false },
    readiness: { register: (name) => (ready) => void readiness.set(name, ready) },
    debug: { add: () => undefined },
    servingCerts: certs,
    leader: { runWhileLeader: (_lease, run) => void run() },
    onShutdown: (hook) => void hooks.push(hook),
  };
  return {
    ctx,
    certs,
    metrics,
    readiness,
    async shutdown() {
      for (const hook of hooks.splice(0).reverse()) await hook();
    },
  };
}

export interface HttpsReply {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  reusedSocket: boolean;
  peerFingerprint: string;
}

export function post(
  agent: https.Agent,
  port: number,
  opts: { path?: string; body?: Buffer | string; contentType?: string | null; method?: string; ca: string },
): Promise<HttpsReply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'application/json';
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: opts.path ?? '/validate',
        method: opts.method ?? 'POST',
        agent,
        ca: opts.ca,
        servername: SERVER_NAME,
        headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const socket = res.socket as import('node:tls').TLSSocket | null;
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            headers: res.headers,
            reusedSocket: req.reusedSocket,
            peerFingerprint: socket?.getPeerCertificate().fingerprint256 ?? '',
          });
        });
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

export function admissionReview(
  object: unknown,
  opts: { apiVersion?: string; operation?: string; uid?: string; dryRun?: boolean } = {},
): string {
  return JSON.stringify({
    apiVersion: opts.apiVersion ?? 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: opts.uid ?? 'uid-1',
      kind: { group: 'security.istio.io', version: 'v1', kind: 'AuthorizationPolicy' },
      resource: { group: 'security.istio.io', version: 'v1', resource: 'authorizationpolicies' },
      namespace: 'default',
      operation: opts.operation ?? 'CREATE',
      object,
      dryRun: opts.dryRun ?? false,
    },
  });
}

export function policy(spec: unknown, metadata: object = {}): object {
  return {
    apiVersion: 'security.istio.io/v1',
    kind: 'AuthorizationPolicy',
    metadata: { name: 'p', namespace: 'default', ...metadata },
    spec,
  };
}
