// PILOT_CERT_PROVIDER=custom: istiod's serving certificate comes from the folder the upstream chart
// mounts for external providers, ./var/run/secrets/istiod/tls (relative, as istiod resolves it: the
// server runs here from a scratch folder holding that path). The folder is laid out as kubelet
// mounts a Secret (files behind a ..data symlink swapped on update), and the webhook listener must
// present the mounted certificate, then the replaced one.

import { spawn, spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { BIN, DEMO, localServeArgs, runCli, ServerProcess } from '../support/cli';
import { makeTestPki, type TestPki } from '../support/tls';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-provider-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const QUIET = ['--grpcAddr', '', '--secureGRPCAddr', '', '--httpsAddr', '', '--monitoringAddr', '', '--httpAddr', ''];

/** Writes a Secret version and points ..data at it, as kubelet updates a mounted Secret. */
function mountSecret(tlsDir: string, version: string, pki: TestPki): void {
  const versionDir = path.join(tlsDir, version);
  fs.mkdirSync(versionDir, { recursive: true });
  fs.writeFileSync(path.join(versionDir, 'tls.crt'), pki.certPem);
  fs.writeFileSync(path.join(versionDir, 'tls.key'), pki.keyPem);
  fs.writeFileSync(path.join(versionDir, 'ca.crt'), pki.caPem);
  const tmpLink = path.join(tlsDir, '..data_tmp');
  fs.symlinkSync(version, tmpLink);
  fs.renameSync(tmpLink, path.join(tlsDir, '..data'));
  for (const name of ['tls.crt', 'tls.key', 'ca.crt'])
    if (!fs.existsSync(path.join(tlsDir, name))) fs.symlinkSync(path.join('..data', name), path.join(tlsDir, name));
}

function presentedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const cert = socket.getPeerX509Certificate();
      socket.end();
      if (cert) resolve(cert.fingerprint256);
      else reject(new Error('no peer certificate'));
    });
    socket.on('error', reject);
  });
}

describe('PILOT_CERT_PROVIDER', () => {
  it('custom serves the certificate mounted in ./var/run/secrets/istiod/tls on the webhook and picks up a replaced one', async () => {
    const tlsDir = path.join(dir, 'var', 'run', 'secrets', 'istiod', 'tls');
    const first = makeTestPki();
    mountSecret(tlsDir, '..v1', first);
    const state = path.join(dir, 'state');
    const server = new ServerProcess(
      spawn(process.execPath, [BIN, ...localServeArgs(state)], {
        cwd: dir,
        env: { ...process.env, PILOT_CERT_PROVIDER: 'custom' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    try {
      const port = await server.port('webhook');
      expect(await presentedFingerprint(port)).toBe(new crypto.X509Certificate(first.certPem).fingerprint256);

      const second = makeTestPki();
      mountSecret(tlsDir, '..v2', second);
      const want = new crypto.X509Certificate(second.certPem).fingerprint256;
      const deadline = Date.now() + 20_000;
      let seen = '';
      while (Date.now() < deadline && seen !== want) {
        await new Promise((r) => setTimeout(r, 250));
        seen = await presentedFingerprint(port);
      }
      expect(seen).toBe(want);
      expect(server.logs.filter((l) => l.level === 'error')).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('custom with nothing mounted exits 2 with one line naming the missing files', () => {
    const r = spawnSyncIn(dir, ['--configDir', DEMO, '--stateDir', path.join(dir, 'state'), ...QUIET], {
      PILOT_CERT_PROVIDER: 'custom',
    });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'istiod-ts: PILOT_CERT_PROVIDER=custom needs a mounted serving certificate: missing var/run/secrets/istiod/tls/tls.crt, ' +
        'var/run/secrets/istiod/tls/tls.key, var/run/secrets/istiod/tls/ca.crt (or var/run/secrets/istiod/ca/root-cert.pem)',
    ]);
    expect(fs.existsSync(path.join(dir, 'state'))).toBe(false);
  });

  it.each([
    [
      'kubernetes',
      /^istiod-ts: invalid value for env PILOT_CERT_PROVIDER: kubernetes is not supported: .*no longer signs/,
    ],
    ['citadel', /^istiod-ts: invalid value for env PILOT_CERT_PROVIDER: must be one of istiod, kubernetes, custom$/],
  ])('PILOT_CERT_PROVIDER=%s exits 2 with one line saying why', (value, line) => {
    const r = runCli(['--configDir', DEMO, '--stateDir', path.join(dir, 'state'), ...QUIET], {
      PILOT_CERT_PROVIDER: value,
    });
    expect(r.status).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(line);
  });
});

function spawnSyncIn(cwd: string, args: string[], env: Record<string, string>) {
  // runCli runs from the test's folder; the mounted folder is relative, so this one runs from `cwd`.
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, ...env } });
  return { status: r.status, stderr: r.stderr };
}
