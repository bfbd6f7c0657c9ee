// The CLI as a user runs it: flags, help, local mode end to end, and a clean SIGTERM.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO, localServeArgs, LOOPBACK_LISTENER_ARGS, runCli, ServerProcess, waitForStatus } from '../support/cli';
import { LIVE_PATH } from '../../src/server/http';

describe('istiod-ts command line', () => {
  it('--help lists flags and env vars and exits 0', () => {
    const r = runCli(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('--secureGRPCAddr');
    expect(r.stdout).toContain('(default ":15012")');
    expect(r.stdout).toContain('POD_NAMESPACE');
  });

  it('an unknown flag exits 2 with one line naming it', () => {
    const r = runCli(['--grpcAdr', ':1']);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual(['istiod-ts: unknown flag: --grpcAdr (see --help)']);
  });

  it('a bad value exits 2 naming the flag', () => {
    const r = runCli(['--httpAddr', 'nowhere']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--httpAddr');
  });

  it('a bad environment value exits 2 naming the variable', () => {
    const r = runCli([], { PILOT_DEBOUNCE_AFTER: 'soon' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('PILOT_DEBOUNCE_AFTER');
  });

  // An API server that does not answer is an outage to wait out, not a reason to exit (a pod that
  // exits is CrashLoopBackOff): the server stays up, not ready, and says why and what to check.
  it('without a reachable cluster it stays up and not ready, and says how to run local mode', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'istiod-ts-kube-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ].join('\n'),
    );
    const server = ServerProcess.start(['--kubeconfig', kubeconfig, ...LOOPBACK_LISTENER_ARGS]);
    try {
      const warning = await server.waitForLog((l) => l.msg === 'waiting for the API server');
      expect(warning.level).toBe('warn');
      expect(String(warning['err'])).toContain('--configDir');
      const ready = await waitForStatus(`http://127.0.0.1:${await server.port('http')}/ready`, 503);
      expect(await ready.text()).toContain('kubernetes API server');
      // Not ready is not stuck: the liveness probe passes, so the kubelet does not restart a slow start.
      const live = await fetch(`http://127.0.0.1:${await server.port('http')}${LIVE_PATH}`);
      expect({ status: live.status, body: await live.text() }).toEqual({ status: 200, body: 'live\n' });
      expect(server.child.exitCode).toBeNull();
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('local mode end to end', () => {
  let state: string;
  let server: ServerProcess;

  beforeAll(() => {
    state = mkdtempSync(join(tmpdir(), 'istiod-ts-state-'));
    server = ServerProcess.start(localServeArgs(state));
  });

  afterAll(async () => {
    await server.stop();
    rmSync(state, { recursive: true, force: true });
  });

  it('logs the real address of every listener and becomes ready', async () => {
    const http = await server.port('http');
    for (const name of ['monitoring', 'grpc', 'secure-grpc', 'webhook'])
      expect(await server.port(name)).toBeGreaterThan(0);
    const res = await waitForStatus(`http://127.0.0.1:${http}/ready`, 200);
    expect(await res.text()).toBe('ready\n');
    expect(server.stdout).toContain('started in local mode');
  });

  it('serves Prometheus metrics and the version', async () => {
    const port = await server.port('monitoring');
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect(metrics).toMatch(/istio_build\{component="pilot",tag="[^"]+"\} 1/);
    const version = (await (await fetch(`http://127.0.0.1:${port}/version`)).json()) as { name: string };
    expect(version.name).toBe('istiod-ts');
  });

  it('shows the demo mesh under /debug/config and the effective meshConfig under /debug/mesh', async () => {
    const port = await server.port('http');
    const pods = (await (
      await fetch(`http://127.0.0.1:${port}/debug/config?kind=Pod&namespace=istio-system`)
    ).json()) as {
      objects: { metadata: { name: string } }[];
    };
    expect(pods.objects.length).toBeGreaterThanOrEqual(2);
    const mesh = (await (await fetch(`http://127.0.0.1:${port}/debug/mesh`)).json()) as { trustDomain: string };
    expect(mesh.trustDomain).toBe('cluster.local');
  });

  it('changes a log level at runtime through /debug/logging', async () => {
    const port = await server.port('http');
    const put = await fetch(`http://127.0.0.1:${port}/debug/logging?scope=store&level=debug`, { method: 'PUT' });
    expect(put.status).toBe(200);
    const levels = (await (await fetch(`http://127.0.0.1:${port}/debug/logging`)).json()) as Record<string, string>;
    expect(levels['store']).toBe('debug');
    const bad = await fetch(`http://127.0.0.1:${port}/debug/logging?scope=store&level=loud`, { method: 'PUT' });
    expect(bad.status).toBe(400);
  });

  it('exits 0 on SIGTERM', async () => {
    await server.port('http');
    const { code } = await server.stop();
    expect(code).toBe(0);
    expect(server.logs.some((l) => l.msg === 'stopped')).toBe(true);
  });
});

describe('istiod-ts validate', () => {
  it('rejects an invalid AuthorizationPolicy with its field path and exits 1', () => {
    const dir = mkdtempSync(join(tmpdir(), 'istiod-ts-validate-'));
    try {
      const file = join(dir, 'policy.yaml');
      writeFileSync(
        file,
        [
          'apiVersion: security.istio.io/v1',
          'kind: AuthorizationPolicy',
          'metadata: {name: bad, namespace: shop}',
          'spec:',
          '  action: ALLOW',
          '  rules:',
          '  - from:',
          '    - source: {principals: [""]}',
        ].join('\n'),
      );
      const r = runCli(['validate', '-f', file]);
      expect(r.status).toBe(1);
      expect(r.stdout + r.stderr).toContain('spec.rules[0].from[0].source.principals[0]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('accepts the demo mesh', () => {
    const r = runCli(['validate', '-f', DEMO]);
    expect(r.status).toBe(0);
  });
});
