// istiod's own arguments, as its chart and common extraContainerArgs pass them: the `discovery`
// subcommand, --log_as_json=false, and --tlsCertFile/--tlsKeyFile/--caCertFile with a certificate
// made by openssl. The listeners must present that certificate, pick up a replaced one, and refuse
// bad files with one line at start.

import { execFileSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { localServeArgs, runCli, ServerProcess } from '../support/cli';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-flags-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A self-signed P-256 certificate for istiod's Service name, as an operator's CA would issue. */
function opensslCert(name: string, cn: string): { cert: string; key: string } {
  const cert = path.join(dir, `${name}-cert.pem`);
  const key = path.join(dir, `${name}-key.pem`);
  execFileSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '1',
    '-subj',
    `/CN=${cn}`,
    '-addext',
    'subjectAltName=DNS:istiod.istio-system.svc,DNS:localhost',
  ]);
  return { cert, key };
}

function presentedCert(port: number): Promise<crypto.X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      { host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] },
      () => {
        const raw = socket.getPeerX509Certificate();
        socket.end();
        if (raw) resolve(raw);
        else reject(new Error('no peer certificate'));
      },
    );
    socket.on('error', reject);
  });
}

describe("istiod's flags", () => {
  it('discovery is serve under istiod’s name', () => {
    const r = runCli(['discovery', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: istiod-ts [serve|discovery] [flags]');
    expect(r.stdout).toContain('--tlsCertFile');
  });

  it('--tlsCertFile serves the operator’s certificate on the webhook and picks up a replaced one', async () => {
    const first = opensslCert('first', 'istiod-first');
    const live = { cert: path.join(dir, 'live-cert.pem'), key: path.join(dir, 'live-key.pem') };
    fs.copyFileSync(first.cert, live.cert);
    fs.copyFileSync(first.key, live.key);
    const state = fs.mkdtempSync(path.join(dir, 'state-'));
    const server = ServerProcess.start([
      'discovery',
      ...localServeArgs(state),
      '--tlsCertFile',
      live.cert,
      '--tlsKeyFile',
      live.key,
      '--log_as_json=false',
    ]);
    try {
      // --log_as_json=false: no JSON on stderr, so the ports come from the text lines.
      const port = await new Promise<number>((resolve, reject) => {
        let text = '';
        const timer = setTimeout(() => reject(new Error(`no webhook port in:\n${text}`)), 30_000);
        server.child.stderr?.on('data', (chunk: string) => {
          text += chunk;
          const m = /\tlistening\t.*listener=webhook.*port=(\d+)/.exec(text);
          if (m?.[1]) {
            clearTimeout(timer);
            resolve(Number(m[1]));
          }
        });
      });
      expect(server.logs).toEqual([]);
      expect((await presentedCert(port)).subject).toContain('CN=istiod-first');

      const second = opensslCert('second', 'istiod-second');
      fs.copyFileSync(second.key, live.key);
      fs.copyFileSync(second.cert, live.cert);
      const deadline = Date.now() + 20_000;
      let subject = '';
      while (Date.now() < deadline && !subject.includes('CN=istiod-second')) {
        await new Promise((r) => setTimeout(r, 250));
        subject = (await presentedCert(port)).subject;
      }
      expect(subject).toContain('CN=istiod-second');
    } finally {
      await server.stop();
    }
  }, 60_000);

  it.each([
    [
      'a key that is not the certificate’s',
      (a: { cert: string }, b: { key: string }) => ['--tlsCertFile', a.cert, '--tlsKeyFile', b.key],
      'is not the key of the certificate in',
    ],
    [
      'only one of the pair',
      (a: { cert: string }) => ['--tlsCertFile', a.cert],
      '--tlsCertFile and --tlsKeyFile go together',
    ],
    [
      'a certificate file without a certificate',
      (_a: unknown, b: { key: string }) => ['--tlsCertFile', b.key, '--tlsKeyFile', b.key],
      'holds no PEM certificate',
    ],
    [
      'a missing file',
      (a: { cert: string }) => ['--tlsCertFile', a.cert, '--tlsKeyFile', path.join(dir, 'none.pem')],
      'does not exist',
    ],
  ])('refuses %s with exit 2, one line, and no key material', (_name, args, message) => {
    const a = opensslCert('a', 'a');
    const b = opensslCert('b', 'b');
    const state = fs.mkdtempSync(path.join(dir, 'state-'));
    const r = runCli([...localServeArgs(state), ...args(a, b)]);
    expect(r.status).toBe(2);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(message);
    expect(r.stderr).not.toContain('PRIVATE KEY');
    // Checked before anything is written: no CA root was created.
    expect(fs.readdirSync(state)).toEqual([]);
  });
});
