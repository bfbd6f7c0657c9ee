// `serve` in Kubernetes mode in this process, against a test API server: the whole server (store,
// CA, xDS, /ready) with every listener on a free loopback port, for the tests of how it behaves
// while the API server fails.

import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseServeOptions } from '../../../src/config/options';
import { startServer, type RunningServer } from '../../../src/server/server';
import type { TestApiServer } from '../../support/apiserver';
import { listenerArgs } from '../../support/cli';

export interface InProcessServer {
  running: RunningServer;
  /** host:port of a listener (grpc, http, ...). */
  address(listener: string): string;
  /** GET /ready: its status and body. */
  ready(): Promise<{ status: number; body: string }>;
  stop(): Promise<void>;
}

/** A loopback port free right now, for a listener whose address a test needs before start-up ends. */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** GET /ready at a host:port: its status and body. */
export async function readyAt(address: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://${address}/ready`);
  return { status: res.status, body: await res.text() };
}

export async function serveAgainst(api: TestApiServer, env: Record<string, string> = {}): Promise<InProcessServer> {
  return (await startServing(api, env)).started;
}

/**
 * Starts serving and returns at once with the /ready address (bound early in start-up), and the
 * server once start-up is over: a start-up that waits for the API server can be watched from /ready.
 */
export async function startServing(
  api: TestApiServer,
  env: Record<string, string> = {},
): Promise<{ httpAddress: string; started: Promise<InProcessServer> }> {
  const httpAddress = `127.0.0.1:${await freePort()}`;
  const dir = mkdtempSync(join(tmpdir(), 'istiod-ts-serve-'));
  const options = parseServeOptions(
    [
      '--kubeconfig',
      api.writeKubeconfig(dir),
      '--meshConfig',
      join(dir, 'no-such-mesh-file'),
      ...listenerArgs({ httpAddr: httpAddress }),
      '--log_output_level',
      process.env['KUBE_TEST_LOG'] ?? 'default:error',
    ],
    { POD_NAMESPACE: 'istio-system', POD_NAME: 'istiod-test', ROOT_CA_DIR: join(dir, 'no-cacerts'), ...env },
  );
  const started = startServer(options).then((running) => {
    const address = (name: string): string => {
      const l = running.listeners.get(name);
      if (!l) throw new Error(`no ${name} listener`);
      return `127.0.0.1:${l.port}`;
    };
    return {
      running,
      address,
      ready: () => readyAt(httpAddress),
      stop: async () => {
        await running.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
  return { httpAddress, started };
}
