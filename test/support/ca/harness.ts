// A minimal ServerContext around the CA with a real grpc-js TLS server on 127.0.0.1:0, and a
// client that calls it exactly as ztunnel does (TLS 1.3, h2, root-cert.pem, server name
// istiod.istio-system.svc, bearer token and clusterid).

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { parseServeOptions, ServeOptions } from '../../../src/config/options';
import { MemoryStore } from '../../../src/store/memory-store';
import { ServingCertHolder } from '../../../src/server/serving-cert';
import { grpcServerOptions } from '../../../src/server/grpc-options';
import type { DebugRequest, DebugResponse, LeaderElector, ServerContext } from '../../../src/server/context';
import type { MeshConfig, MeshConfigSource } from '../../../src/mesh/types';
import { CaDeps, CaHandle, startCertificateAuthority } from '../../../src/ca';
import { callAuthenticatorFactory } from '../../../src/server/authenticator';
import { singleCluster } from '../../../src/store/clusters';
import { KubeClient } from '../../../src/store/kube/client';
import { servingCertCredentials } from '../../../src/ca/serving-cert/grpc-credentials';
import { certificateServiceClient, IstioCertificateResponse } from '../../../src/ca/proto';
import { tempDir } from './fixtures';
import { loadOrCreateTokenKey, signLocalToken } from '../../../src/security/local-jwt';

export const SERVER_NAME = 'istiod.istio-system.svc';

export const alwaysLeader: LeaderElector = {
  runWhileLeader(_lease, run) {
    run();
  },
};

export function staticMesh(overrides: Partial<MeshConfig> = {}): MeshConfigSource {
  const mesh: MeshConfig = {
    trustDomain: 'cluster.local',
    trustDomainAliases: [],
    rootNamespace: 'istio-system',
    defaultConfig: {},
    ...overrides,
  };
  return { current: () => mesh, subscribe: () => () => undefined };
}

export interface Harness {
  ctx: ServerContext;
  store: MemoryStore;
  metrics: Registry;
  ca: CaHandle;
  server: grpc.Server;
  port: number;
  stateDir: string;
  readiness: Map<string, boolean>;
  debug: Map<string, (req: DebugRequest) => DebugResponse | Promise<DebugResponse>>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  mode?: 'local' | 'kubernetes';
  /**
   * The authenticator is built as the server builds it unless given; the clusters are the harness's
   * store alone (CLUSTER_ID, with a client from kubeConfig) unless given.
   */
  deps?: Omit<CaDeps, 'authenticator' | 'clusters'> & Partial<Pick<CaDeps, 'authenticator' | 'clusters'>>;
  store?: MemoryStore;
  stateDir?: string;
  mesh?: MeshConfigSource;
  /** alwaysLeader unless given. */
  leader?: LeaderElector;
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const stateDir = opts.stateDir ?? tempDir();
  const configDir = opts.mode === 'kubernetes' ? [] : ['--configDir', stateDir];
  const options: ServeOptions = parseServeOptions([...configDir, '--stateDir', stateDir], {
    ROOT_CA_DIR: path.join(stateDir, 'no-cacerts'),
    ...opts.env,
  });
  const store = opts.store ?? new MemoryStore();
  const metrics = new Registry();
  const holder = new ServingCertHolder();
  // The production listener's options, so the CA bench measures what a ztunnel meets.
  const server = new grpc.Server(grpcServerOptions(options));
  const readiness = new Map<string, boolean>();
  const debug: Harness['debug'] = new Map();
  const shutdown: (() => void | Promise<void>)[] = [];
  const ctx: ServerContext = {
    options,
    store,
    mesh: opts.mesh ?? staticMesh(),
    metrics,
    grpc: {
      addService: (def, impl) => server.addService(def, typeof impl === 'function' ? impl('secure') : impl),
      secureEnabled: true,
      closeConnection: () => false,
    },
    readiness: { register: (name) => (ready) => void readiness.set(name, ready) },
    debug: { add: (name, _description, handler) => void debug.set(name, handler) },
    servingCerts: holder,
    leader: opts.leader ?? alwaysLeader,
    onShutdown: (hook) => void shutdown.push(hook),
  };
  const clusters =
    opts.deps?.clusters ??
    singleCluster({
      id: options.env.CLUSTER_ID,
      local: true,
      store,
      ...(opts.deps?.kubeConfig ? { client: new KubeClient(opts.deps.kubeConfig) } : {}),
      synced: () => store.hasSynced(),
    });
  const authenticator =
    opts.deps?.authenticator ??
    callAuthenticatorFactory(options, ctx.mesh, clusters, {
      ...(opts.deps?.kubeConfig ? { kubeConfig: opts.deps.kubeConfig } : {}),
    });
  const ca = await startCertificateAuthority(ctx, { ...opts.deps, authenticator, clusters });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', servingCertCredentials(holder), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    ctx,
    store,
    metrics,
    ca,
    server,
    port,
    stateDir,
    readiness,
    debug,
    async close() {
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      for (const hook of shutdown.reverse()) await hook();
    },
  };
}

export interface CallOptions {
  token?: string;
  clusterId?: string;
  impersonate?: unknown;
  validitySeconds?: number | string;
  /** Client certificate (PEM chain and key) for mTLS callers. */
  clientCert?: { certPem: string; keyPem: string };
  rootPem?: string;
  /** The call's gRPC deadline, in ms from now (ztunnel sets one on every CSR). */
  deadlineMs?: number;
}

export class ZtunnelLikeClient {
  private readonly client: grpc.Client & Record<string, unknown>;

  constructor(port: number, rootPem: string, clientCert?: { certPem: string; keyPem: string }) {
    // ztunnel speaks TLS 1.3 only; pinning the minimum proves the server negotiates it.
    const context = tls.createSecureContext({
      ca: rootPem,
      minVersion: 'TLSv1.3',
      ...(clientCert ? { cert: clientCert.certPem, key: clientCert.keyPem } : {}),
    });
    const creds = grpc.credentials.createFromSecureContext(context);
    const Client = certificateServiceClient();
    this.client = new Client(`127.0.0.1:${port}`, creds, {
      'grpc.ssl_target_name_override': SERVER_NAME,
      'grpc.default_authority': SERVER_NAME,
    });
  }

  createCertificate(csr: string, o: CallOptions = {}): Promise<IstioCertificateResponse> {
    const md = new grpc.Metadata();
    if (o.token !== undefined) md.set('authorization', `Bearer ${o.token}`);
    if (o.clusterId !== undefined) md.set('clusterid', o.clusterId);
    const metadata =
      o.impersonate === undefined
        ? null
        : {
            fields: {
              ImpersonatedIdentity: typeof o.impersonate === 'string' ? { stringValue: o.impersonate } : o.impersonate,
            },
          };
    const req = { csr, validity_duration: o.validitySeconds ?? 86400, metadata };
    return new Promise((resolve, reject) => {
      (
        this.client['CreateCertificate'] as (
          r: unknown,
          m: grpc.Metadata,
          opts: grpc.CallOptions,
          cb: (e: grpc.ServiceError | null, r: IstioCertificateResponse) => void,
        ) => void
      )(req, md, o.deadlineMs === undefined ? {} : { deadline: Date.now() + o.deadlineMs }, (err, res) =>
        err ? reject(err) : resolve(res),
      );
    });
  }

  close(): void {
    this.client.close();
  }
}

export function readRoot(h: Harness): string {
  return fs.readFileSync(path.join(h.stateDir, 'root-cert.pem'), 'utf8');
}

/**
 * The ztunnel of node n1 as a local-mode caller: its pod `istio-system/ztunnel-a` in the store and a
 * token for it from the harness's state folder.
 */
export function ztunnelCaller(h: Harness): string {
  h.store.upsert('Pod', [
    {
      metadata: { name: 'ztunnel-a', namespace: 'istio-system', uid: 'u1' },
      spec: { serviceAccountName: 'ztunnel', nodeName: 'n1' },
      status: { phase: 'Running' },
    },
  ]);
  return signLocalToken(
    loadOrCreateTokenKey(h.stateDir),
    { namespace: 'istio-system', serviceAccount: 'ztunnel', podName: 'ztunnel-a', podUid: 'u1' },
    ['istio-ca'],
    600,
  );
}
