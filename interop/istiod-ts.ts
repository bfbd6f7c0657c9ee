// istiod-ts as the peers meet it: `serve` in local mode on fixed loopback ports (so a restarted
// server is found where the peers left it), its state folder kept across restarts, and the few
// things the checks read from it: metrics, debug pages, tokens and the xds-client's view.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';
import { deterministicUid } from '../src/store/local/manifest';
import { BIN, ServerProcess, waitForStatus } from '../test/support/cli';
import { atExit } from './cleanup';

export interface Ports {
  grpc: number;
  secure: number;
  https: number;
  monitoring: number;
  http: number;
}

/** A port nothing listens on now; the kernel picks it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export async function freePorts(): Promise<Ports> {
  return {
    grpc: await freePort(),
    secure: await freePort(),
    https: await freePort(),
    monitoring: await freePort(),
    http: await freePort(),
  };
}

/** The name ztunnel and istioctl check on our serving certificate. */
export const SERVER_NAME = 'istiod.istio-system.svc';
export const READY_TIMEOUT_MS = 120_000;

export class IstiodTs {
  private process: ServerProcess | undefined;

  constructor(
    /** Local mode reads a folder; Kubernetes mode an API server through a kubeconfig. */
    readonly source: { configDir: string } | { kubeconfig: string },
    readonly stateDir: string,
    readonly ports: Ports,
    private readonly env: Record<string, string> = {},
  ) {}

  /** Local mode's root certificate file; in Kubernetes mode the root is published as a ConfigMap. */
  get rootCertFile(): string {
    return path.join(this.stateDir, 'root-cert.pem');
  }

  get pid(): number | undefined {
    return this.process?.child.pid;
  }

  async start(): Promise<void> {
    const a = (p: number) => `127.0.0.1:${p}`;
    this.process = ServerProcess.start(
      [
        ...('configDir' in this.source
          ? ['--configDir', this.source.configDir, '--stateDir', this.stateDir]
          : ['--kubeconfig', this.source.kubeconfig]),
        '--meshConfig',
        path.join(this.stateDir, 'no-mesh-config'),
        '--grpcAddr',
        a(this.ports.grpc),
        '--secureGRPCAddr',
        a(this.ports.secure),
        '--httpsAddr',
        a(this.ports.https),
        '--monitoringAddr',
        a(this.ports.monitoring),
        '--httpAddr',
        a(this.ports.http),
      ],
      { POD_NAMESPACE: 'istio-system', ...this.env },
    );
    const child = this.process.child;
    const forget = atExit(() => child.kill('SIGKILL'));
    void this.process.exited.then(forget);
    const exited = this.process.exited.then(({ code, signal }) => {
      throw new Error(`istiod-ts exited (${code ?? signal ?? '?'}) before it was ready: ${this.recentLogs()}`);
    });
    await Promise.race([waitForStatus(`http://127.0.0.1:${this.ports.http}/ready`, 200, READY_TIMEOUT_MS), exited]);
    exited.catch(() => undefined);
  }

  async stop(): Promise<void> {
    await this.process?.stop();
    this.process = undefined;
  }

  recentLogs(n = 20): string {
    return (this.process?.logs ?? [])
      .slice(-n)
      .map((l) => JSON.stringify(l))
      .join('\n');
  }

  async metrics(): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${this.ports.monitoring}/metrics`);
    return res.text();
  }

  /** The sum of every series of a counter or gauge in the Prometheus text. */
  async metric(name: string): Promise<number> {
    return sumMetric(await this.metrics(), name);
  }

  async debug(page: string): Promise<unknown> {
    const res = await fetch(`http://127.0.0.1:${this.ports.http}/debug/${page}`);
    if (!res.ok) throw new Error(`/debug/${page}: ${res.status} ${await res.text()}`);
    return res.json();
  }

  /** A token for a pod in the folder, as its projected service-account token would be. */
  token(pod: { namespace: string; name: string; serviceAccount: string; node: string }): string {
    return runCli([
      'token',
      '--stateDir',
      this.stateDir,
      '--namespace',
      pod.namespace,
      '--serviceAccount',
      pod.serviceAccount,
      '--pod',
      pod.name,
      '--podUID',
      deterministicUid('Pod', pod.namespace, pod.name),
      ...(pod.node ? ['--node', pod.node] : []),
      '--ttl',
      '24h',
    ]).trim();
  }

  /** What `istiod-ts xds-client --output json` holds for a node's ztunnel, trusting `rootCertFile`. */
  xdsClientView(token: string, node: string, rootCertFile = this.rootCertFile): unknown {
    const out = runCli([
      'xds-client',
      '--addr',
      `127.0.0.1:${this.ports.secure}`,
      '--rootCert',
      rootCertFile,
      '--serverName',
      SERVER_NAME,
      '--token',
      token,
      '--node',
      node,
      '--output',
      'json',
    ]);
    return JSON.parse(out) as unknown;
  }

  rootCert(): string {
    return readFileSync(this.rootCertFile, 'utf8');
  }
}

export function sumMetric(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ([0-9.eE+-]+|NaN)$/.exec(line);
    if (m && m[1] === name) sum += Number(m[3]);
  }
  return sum;
}

export function runCli(args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 120_000, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`istiod-ts ${args[0] ?? ''} exited ${r.status ?? r.signal ?? '?'}: ${r.stderr}`);
  return r.stdout;
}
