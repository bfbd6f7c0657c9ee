// `serve` in Kubernetes mode in this process, against a test API server: the whole server (store,
// CA, xDS, /ready) with every listener on a free loopback port, for the tests of how it behaves
// while the API server fails.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseServeOptions } from '../../../src/config/options';
import { startServer, type RunningServer } from '../../../src/server/server';
import type { TestApiServer } from '../../support/apiserver';

export interface InProcessServer {
  running: RunningServer;
  /** host:port of a listener (grpc, http, ...). */
  address(listener: string): string;
  /** GET /ready: its status and body. */
  ready(): Promise<{ status: number; body: string }>;
  stop(): Promise<void>;
}

export async function serveAgainst(api: TestApiServer, env: Record<string, string> = {}): Promise<InProcessServer> {
  const dir = mkdtempSync(join(tmpdir(), 'istiod-ts-serve-'));
  const options = parseServeOptions(
    [
      '--kubeconfig',
      api.writeKubeconfig(dir),
      '--meshConfig',
      join(dir, 'no-such-mesh-file'),
      '--grpcAddr',
      '127.0.0.1:0',
      '--secureGRPCAddr',
      '127.0.0.1:0',
      '--httpsAddr',
      '127.0.0.1:0',
      '--monitoringAddr',
      '127.0.0.1:0',
      '--httpAddr',
      '127.0.0.1:0',
      '--log_output_level',
      process.env['KUBE_TEST_LOG'] ?? 'default:error',
    ],
    { POD_NAMESPACE: 'istio-system', POD_NAME: 'istiod-test', ROOT_CA_DIR: join(dir, 'no-cacerts'), ...env },
  );
  const running = await startServer(options);
  const address = (name: string): string => {
    const l = running.listeners.get(name);
    if (!l) throw new Error(`no ${name} listener`);
    return `127.0.0.1:${l.port}`;
  };
  return {
    running,
    address,
    ready: async () => {
      const res = await fetch(`http://${address('http')}/ready`);
      return { status: res.status, body: await res.text() };
    },
    stop: async () => {
      await running.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
