// A command's whole output reaches a pipe before the process exits. Found by the interop harness:
// `xds-client --output json` on a 5,000-workload mesh, read through a pipe, stopped after its first
// 64 KiB, because the CLI exited while the asynchronous pipe writes were still queued.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { generateMesh } from '../../interop/mesh/generate';
import { writeMesh } from '../../interop/mesh/write';
import { deterministicUid } from '../../src/store/local/manifest';
import { BIN, LOOPBACK_LISTENER_ARGS, runCli, ServerProcess, waitForStatus } from '../support/cli';

/** Workloads enough that the JSON is many times a pipe's 64 KiB buffer. */
const WORKLOADS = 1000;

let dir: string;
let server: ServerProcess;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'cli-pipe-'));
  writeMesh(path.join(dir, 'mesh'), generateMesh({ workloads: WORKLOADS, nodes: 2, namespaces: 2 }));
  server = ServerProcess.start([
    '--configDir',
    path.join(dir, 'mesh'),
    '--stateDir',
    path.join(dir, 'state'),
    '--meshConfig',
    path.join(dir, 'no-mesh'),
    ...LOOPBACK_LISTENER_ARGS,
  ]);
  await waitForStatus(`http://127.0.0.1:${await server.port('http')}/ready`, 200, 60_000);
}, 90_000);

afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('xds-client --output json through a pipe is whole, however large', async () => {
  const port = await server.port('secure-grpc');
  const token = runCli([
    'token',
    '--stateDir',
    path.join(dir, 'state'),
    '--namespace',
    'istio-system',
    '--serviceAccount',
    'ztunnel',
    '--pod',
    'ztunnel-0',
    '--podUID',
    deterministicUid('Pod', 'istio-system', 'ztunnel-0'),
    '--node',
    'node-0',
  ]).stdout.trim();
  const child = spawn(
    process.execPath,
    [
      BIN,
      'xds-client',
      '--addr',
      `127.0.0.1:${port}`,
      '--rootCert',
      path.join(dir, 'state', 'root-cert.pem'),
      '--serverName',
      'istiod.istio-system.svc',
      '--token',
      token,
      '--node',
      'node-0',
      '--output',
      'json',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const chunks: Buffer[] = [];
  // A slow reader: the writes must wait for it, not be dropped.
  child.stdout.on('data', (c: Buffer) => {
    chunks.push(c);
    child.stdout.pause();
    setTimeout(() => child.stdout.resume(), 5);
  });
  const ended = new Promise((r) => child.stdout.on('end', r));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  await ended;
  const text = Buffer.concat(chunks).toString('utf8');
  expect(code).toBe(0);
  expect(text.length).toBeGreaterThan(16 * 64 * 1024);
  const view = JSON.parse(text) as { workloads: unknown[] };
  expect(view.workloads.length).toBeGreaterThanOrEqual(WORKLOADS);
}, 60_000);
