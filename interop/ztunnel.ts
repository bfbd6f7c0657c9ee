// Upstream ztunnel as a plain process beside istiod-ts, configured as its DaemonSet configures it
// (shared proxy mode, in-pod enrolment over the node agent's socket, NODE_NAME and the pod's
// downward-API variables), with its files laid under a scratch working directory: the root
// certificate at ./var/run/secrets/istio/root-cert.pem and the projected token at
// ./var/run/secrets/tokens/istio-token, the paths ztunnel reads relative to its working directory.
// Every address it is given is on loopback.

import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createServer } from 'node:net';
import { atExit } from './cleanup';
import { SERVER_NAME } from './istiod-ts';

/** Attempts at one admin request: a kept-alive connection ztunnel has just closed fails the first. */
const ADMIN_ATTEMPTS = 3;

/**
 * A GET to ztunnel's admin or stats port. fetch reuses kept-alive connections, and one that
 * ztunnel's server closed as idle in the meantime fails with "other side closed"; that, and only a
 * failure before any answer, is tried again.
 */
async function get(url: string): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url);
    } catch (err) {
      if (attempt >= ADMIN_ATTEMPTS || !(err instanceof TypeError)) throw err;
    }
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, () => s.close(() => resolve(true)));
  });
}

export interface ZtunnelPod {
  name: string;
  namespace: string;
  serviceAccount: string;
  node: string;
  ip: string;
}

export interface ZtunnelOptions {
  bin: string;
  workDir: string;
  /** istiod-ts's secure gRPC port on 127.0.0.1: xDS and the CA. */
  securePort: number;
  pod: ZtunnelPod;
  rootCert: string;
  token: string;
  adminPort: number;
  statsPort: number;
}

/** ztunnel's readiness port: fixed (no setting moves it), so only one ztunnel runs at a time. */
export const ZTUNNEL_READINESS_PORT = 15021;

/** How long ztunnel's admin port gets to answer after start. */
export const ZTUNNEL_START_TIMEOUT_MS = 30_000;

export class Ztunnel {
  private child: ChildProcess | undefined;
  private exitInfo: string | undefined;
  private partial = '';
  /** The tail of ztunnel's log, for diagnostics. */
  output = '';
  /** "Stream established" lines: one per xDS connection ztunnel made. */
  streams = 0;
  /** ACKs ztunnel sent, by type URL. */
  readonly acks = new Map<string, number>();
  /** The NACK lines ztunnel logged (the first few hundred). */
  readonly nacks: string[] = [];
  /**
   * Prefetch requests ztunnel dropped: its prefetch queue holds 256 requests and is fed with
   * try_send, so a large first sync overflows it ("couldn't prefetch: Full(..)", which does not name
   * the identity); those certificates are fetched on demand instead (istio/ztunnel src/cert_fetcher.rs).
   */
  droppedPrefetches = 0;

  constructor(readonly options: ZtunnelOptions) {}

  /** The node agent's socket ztunnel connects to for in-pod enrolment. */
  get inpodSocket(): string {
    return path.join(this.options.workDir, 'run', 'ztunnel.sock');
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Writes the token as kubelet projects it: the JWT alone, no trailing newline. */
  writeToken(token: string): void {
    const dir = path.join(this.options.workDir, 'var/run/secrets/tokens');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'istio-token'), token.trim(), { mode: 0o600 });
  }

  async start(): Promise<void> {
    const o = this.options;
    if (!(await portFree(ZTUNNEL_READINESS_PORT)))
      throw new Error(
        `port ${ZTUNNEL_READINESS_PORT} (ztunnel's readiness port, which cannot be moved) is taken: is another ztunnel running?`,
      );
    mkdirSync(path.join(o.workDir, 'var/run/secrets/istio'), { recursive: true });
    mkdirSync(path.join(o.workDir, 'run'), { recursive: true });
    writeFileSync(path.join(o.workDir, 'var/run/secrets/istio/root-cert.pem'), o.rootCert);
    this.writeToken(o.token);
    const address = `https://127.0.0.1:${o.securePort}`;
    this.exitInfo = undefined;
    this.child = spawn(o.bin, ['proxy', 'ztunnel'], {
      cwd: o.workDir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        XDS_ADDRESS: address,
        CA_ADDRESS: address,
        // The certificate istiod-ts serves names istiod's Service, as in a cluster.
        ALT_XDS_HOSTNAME: SERVER_NAME,
        ALT_CA_HOSTNAME: SERVER_NAME,
        NODE_NAME: o.pod.node,
        POD_NAME: o.pod.name,
        POD_NAMESPACE: o.pod.namespace,
        SERVICE_ACCOUNT: o.pod.serviceAccount,
        INSTANCE_IP: o.pod.ip,
        // As ztunnel's chart sets them (it also sets LOG_FORMAT=json; the checks read the text format).
        ISTIO_META_CLUSTER_ID: 'Kubernetes',
        INPOD_ENABLED: 'true',
        RUST_BACKTRACE: '1',
        INPOD_UDS: this.inpodSocket,
        PROXY_CONFIG: JSON.stringify({ proxyAdminPort: o.adminPort, statsPort: o.statsPort, proxyMetadata: {} }),
        // xds::client at debug logs every ACK it sends, so the checks count ACKs as well as NACKs.
        RUST_LOG: 'info,ztunnel::xds::client=debug',
      },
    });
    const log = createWriteStream(path.join(o.workDir, 'ztunnel.log'), { flags: 'a' });
    const collect = (chunk: Buffer) => {
      log.write(chunk);
      const text = chunk.toString('utf8');
      this.output += text;
      // Keep the tail only: a long churn run logs a line per change.
      if (this.output.length > 4_000_000) this.output = this.output.slice(-2_000_000);
      const lines = (this.partial + text).split('\n');
      this.partial = lines.pop() ?? '';
      for (const line of lines) this.readLine(line);
    };
    this.child.stdout?.on('data', collect);
    this.child.stderr?.on('data', collect);
    const child = this.child;
    const forget = atExit(() => child.kill('SIGKILL'));
    this.child.on('exit', (code, signal) => {
      this.exitInfo = `exited ${code ?? signal ?? '?'}`;
      forget();
      log.end();
    });
    const deadline = Date.now() + ZTUNNEL_START_TIMEOUT_MS;
    for (;;) {
      const exited = this.exited();
      if (exited) throw new Error(`ztunnel ${exited}: ${this.output.slice(-2000)}`);
      try {
        await this.configDump();
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`ztunnel's admin port did not answer: ${this.output.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  /** How the process ended, once it has. */
  exited(): string | undefined {
    return this.exitInfo;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || this.exitInfo) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    });
  }

  async configDump(): Promise<Record<string, unknown>> {
    const res = await get(`http://127.0.0.1:${this.options.adminPort}/config_dump`);
    if (!res.ok) throw new Error(`config_dump: ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  }

  async metrics(): Promise<string> {
    return (await get(`http://127.0.0.1:${this.options.statsPort}/metrics`)).text();
  }

  /** Counts what the checks need from a log line: streams, and each ACK or NACK with its type_url. */
  private readLine(line: string): void {
    if (line.includes('Stream established')) this.streams++;
    if (line.includes("couldn't prefetch")) this.droppedPrefetches++;
    if (!line.includes('sending response')) return;
    if (line.includes('type=Nack')) {
      if (this.nacks.length < 200) this.nacks.push(line);
    } else if (line.includes('type=Ack')) {
      const type = /type_url="([^"]*)"/.exec(line)?.[1] ?? '';
      this.acks.set(type, (this.acks.get(type) ?? 0) + 1);
    }
  }
}
