// ROOT_CA_DIR that is not a complete CA in either layout stops the start with one line naming the
// missing file, instead of a stack trace or a silent self-signed root.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEMO, runCli } from '../support/cli';
import { opensslCaPair, opensslChain } from '../support/ca/openssl-ca';

const QUIET = ['--grpcAddr', '', '--secureGRPCAddr', '', '--httpsAddr', '', '--monitoringAddr', '', '--httpAddr', ''];

/** stderr without the JSON log lines that came before the failure. */
function plainLines(stderr: string): string[] {
  return stderr
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('{'));
}

describe('plugged-in CA at start', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-cacerts-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('a chain that does not reach root-cert.pem exits 2 with one line naming the file and the reason', () => {
    const chain = opensslChain();
    const cacerts = path.join(dir, 'cacerts');
    fs.mkdirSync(cacerts);
    fs.writeFileSync(path.join(cacerts, 'ca-cert.pem'), chain.signing.certPem);
    fs.writeFileSync(path.join(cacerts, 'ca-key.pem'), chain.signing.keyPem);
    fs.writeFileSync(path.join(cacerts, 'cert-chain.pem'), chain.signing.certPem + chain.intermediate.certPem);
    fs.writeFileSync(path.join(cacerts, 'root-cert.pem'), opensslCaPair('Other').root.certPem);
    const r = runCli(['--configDir', DEMO, '--stateDir', path.join(dir, 'state'), ...QUIET], { ROOT_CA_DIR: cacerts });
    expect(r.status).toBe(2);
    expect(plainLines(r.stderr)).toEqual([
      `istiod-ts: plugged-in CA in ${cacerts}: ca-cert.pem does not chain to root-cert.pem: no certificate of cert-chain.pem or root-cert.pem issued "O=cluster.local, CN=Intermediate"`,
    ]);
  });

  test('tls.crt and ca.crt without tls.key exit 2 with one line naming tls.key, and no stack trace', () => {
    const ca = opensslCaPair();
    const cacerts = path.join(dir, 'cacerts');
    fs.mkdirSync(cacerts);
    fs.writeFileSync(path.join(cacerts, 'tls.crt'), ca.intermediate.certPem);
    fs.writeFileSync(path.join(cacerts, 'ca.crt'), ca.root.certPem);
    const r = runCli(['--configDir', DEMO, '--stateDir', path.join(dir, 'state'), ...QUIET], { ROOT_CA_DIR: cacerts });
    expect(r.status).toBe(2);
    expect(plainLines(r.stderr)).toEqual([
      `istiod-ts: plugged-in CA in ${cacerts} is incomplete: tls.crt is present, so the kubernetes.io/tls layout is used, but tls.key is missing`,
    ]);
    expect(r.stderr).not.toMatch(/\bat .*\.js:\d+/);
  });

  test('half of the istiod layout exits 2 naming the missing files', () => {
    const ca = opensslCaPair();
    const cacerts = path.join(dir, 'cacerts');
    fs.mkdirSync(cacerts);
    fs.writeFileSync(path.join(cacerts, 'ca-cert.pem'), ca.intermediate.certPem);
    fs.writeFileSync(path.join(cacerts, 'ca-key.pem'), ca.intermediate.keyPem);
    const r = runCli(['--configDir', DEMO, '--stateDir', path.join(dir, 'state'), ...QUIET], { ROOT_CA_DIR: cacerts });
    expect(r.status).toBe(2);
    expect(plainLines(r.stderr)).toEqual([
      `istiod-ts: plugged-in CA in ${cacerts} is incomplete: missing root-cert.pem, cert-chain.pem; add them, or remove ca-cert.pem, ca-key.pem to use a self-signed root`,
    ]);
  });
});
