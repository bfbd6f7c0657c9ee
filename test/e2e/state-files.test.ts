// The CA's files in --stateDir as an operator meets them after a crash: a key without its
// certificate (or the reverse) stops the start with one line that names the files and the way
// out, and never turns into a silently regenerated root.

import * as crypto from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localServeArgs, runCli } from '../support/cli';

/** stderr without the structured (JSON) log lines: what a person reads. */
function humanLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => {
    if (line.trim() === '') return false;
    try {
      JSON.parse(line);
      return false;
    } catch {
      return true;
    }
  });
}

const PEM_KEY = crypto
  .generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  .privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
const PEM_CERT = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('a half-present CA key pair in --stateDir', () => {
  let state: string;
  beforeEach(() => (state = mkdtempSync(join(tmpdir(), 'istiod-ts-halfpair-'))));
  afterEach(() => rmSync(state, { recursive: true, force: true }));

  const env = () => ({ ROOT_CA_DIR: join(state, 'no-cacerts') });

  it('a key without its certificate exits 1 with one line naming both files and what to do, and creates no new root', () => {
    writeFileSync(join(state, 'ca-key.pem'), PEM_KEY, { mode: 0o600 });
    const r = runCli(localServeArgs(state), env());
    expect(r.status).toBe(1);
    expect(humanLines(r.stderr)).toEqual([
      `istiod-ts: ${join(state, 'ca-key.pem')} has no certificate beside it: restore ${join(state, 'ca-cert.pem')} from a backup, or delete ca-key.pem to create a new root (every workload then needs a new certificate)`,
    ]);
    expect(readdirSync(state).sort()).toEqual(['ca-key.pem']);
    expect(readFileSync(join(state, 'ca-key.pem'), 'utf8')).toBe(PEM_KEY);
  });

  it('a certificate without its key exits 1 with one line naming both files and what to do, and creates no new root', () => {
    writeFileSync(join(state, 'ca-cert.pem'), PEM_CERT);
    const r = runCli(localServeArgs(state), env());
    expect(r.status).toBe(1);
    expect(humanLines(r.stderr)).toEqual([
      `istiod-ts: ${join(state, 'ca-cert.pem')} has no private key beside it: restore ${join(state, 'ca-key.pem')} from a backup, or delete ca-cert.pem to create a new root (every workload then needs a new certificate)`,
    ]);
    expect(readdirSync(state).sort()).toEqual(['ca-cert.pem']);
    expect(readFileSync(join(state, 'ca-cert.pem'), 'utf8')).toBe(PEM_CERT);
  });
});
