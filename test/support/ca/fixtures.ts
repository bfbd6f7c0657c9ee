// Shared by the CA tests: CSRs made the way ztunnel makes them, and openssl as an independent
// reader of every certificate the CA issues.

import 'reflect-metadata';
import * as crypto from 'node:crypto';
import type { webcrypto } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(crypto.webcrypto as never);

export interface TestCsr {
  pem: string;
  keyPem: string;
}

type CsrKey = 'P-256' | 'P-384' | 'RSA-2048' | 'RSA-1024';

/** A fresh CSR: empty subject and one critical URI SAN, as ztunnel's csr.rs builds it. */
export async function makeCsr(
  uri = 'spiffe://cluster.local/ns/default/sa/default',
  key: CsrKey = 'P-256',
): Promise<TestCsr> {
  const alg: webcrypto.RsaHashedKeyGenParams | webcrypto.EcKeyGenParams = key.startsWith('RSA')
    ? {
        name: 'RSASSA-PKCS1-v1_5',
        modulusLength: Number(key.slice(4)),
        publicExponent: new Uint8Array([1, 0, 1]),
        hash: 'SHA-256',
      }
    : { name: 'ECDSA', namedCurve: key };
  const keys = await crypto.webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    keys,
    signingAlgorithm: key.startsWith('RSA')
      ? alg
      : ({ name: 'ECDSA', hash: key === 'P-384' ? 'SHA-384' : 'SHA-256' } as webcrypto.EcdsaParams),
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'url', value: uri }], true)],
  });
  const pkcs8 = Buffer.from(await crypto.webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = crypto
    .createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })
    .export({ format: 'pem', type: 'pkcs8' }) as string;
  return { pem: csr.toString('pem'), keyPem };
}

export function tempDir(prefix = 'istiod-ts-ca-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** `openssl x509 -text` of a PEM certificate. */
export function opensslText(certPem: string): string {
  return execFileSync('openssl', ['x509', '-noout', '-text'], { input: certPem }).toString();
}

/** Runs `openssl verify -CAfile roots [-untrusted chain] leaf`; returns its output or throws. */
export function opensslVerify(rootsPem: string, leafPem: string, untrustedPem = '', purpose?: string): string {
  const dir = tempDir('istiod-ts-verify-');
  try {
    fs.writeFileSync(path.join(dir, 'roots.pem'), rootsPem);
    fs.writeFileSync(path.join(dir, 'leaf.pem'), leafPem);
    const args = ['verify', '-CAfile', path.join(dir, 'roots.pem')];
    if (untrustedPem) {
      fs.writeFileSync(path.join(dir, 'untrusted.pem'), untrustedPem);
      args.push('-untrusted', path.join(dir, 'untrusted.pem'));
    }
    if (purpose) args.push('-purpose', purpose);
    args.push(path.join(dir, 'leaf.pem'));
    return execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The SubjectAltName extension of a certificate as @peculiar/x509 reads it. */
export function peculiarSan(certPem: string): { critical: boolean; uris: string[]; dns: string[]; ips: string[] } {
  const cert = new x509.X509Certificate(certPem);
  const ext = cert.getExtension(x509.SubjectAlternativeNameExtension);
  if (!ext) throw new Error('certificate has no SubjectAltName');
  const names = ext.names.toJSON();
  return {
    critical: ext.critical,
    uris: names.filter((n) => n.type === 'url').map((n) => n.value),
    dns: names.filter((n) => n.type === 'dns').map((n) => n.value),
    ips: names.filter((n) => n.type === 'ip').map((n) => n.value),
  };
}

/** `openssl req -new` for a PEM private key, extra arguments appended. */
export function opensslCsr(keyPem: string, ...extra: string[]): string {
  const dir = tempDir('istiod-ts-req-');
  try {
    fs.writeFileSync(path.join(dir, 'key.pem'), keyPem);
    return execFileSync('openssl', ['req', '-new', '-key', path.join(dir, 'key.pem'), '-subj', '/', ...extra], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }).toString();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
