// A root and an intermediate CA made by the openssl command line, so a plugged-in CA under test
// was issued by something other than this project's own certificate code.

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from './fixtures';

export interface OpensslCa {
  certPem: string;
  keyPem: string;
}

export interface OpensslCaPair {
  root: OpensslCa;
  intermediate: OpensslCa;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A self-signed root, and an intermediate it signed (pathlen 0); `cn` tells intermediates apart. */
export function opensslCaPair(cn = 'Intermediate'): OpensslCaPair {
  const dir = tempDir('istiod-ts-openssl-ca-');
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  try {
    run(
      'req',
      '-x509',
      ...EC,
      '-keyout',
      'root.key',
      '-out',
      'root.crt',
      '-subj',
      '/O=Example Root',
      '-days',
      '30',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    );
    run('req', ...EC, '-keyout', 'int.key', '-out', 'int.csr', '-subj', `/O=cluster.local/CN=${cn}`);
    fs.writeFileSync(
      path.join(dir, 'int.cnf'),
      'basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n' +
        'subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n',
    );
    run(
      'x509',
      '-req',
      '-in',
      'int.csr',
      '-CA',
      'root.crt',
      '-CAkey',
      'root.key',
      '-CAcreateserial',
      '-out',
      'int.crt',
      '-days',
      '10',
      '-extfile',
      'int.cnf',
    );
    const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
    return {
      root: { certPem: read('root.crt'), keyPem: read('root.key') },
      intermediate: { certPem: read('int.crt'), keyPem: read('int.key') },
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface OpensslChain {
  root: OpensslCa;
  intermediate: OpensslCa;
  /** The CA a plugged-in folder signs with (ca-cert.pem), issued by `intermediate`. */
  signing: OpensslCa;
}

/** openssl's ASN.1 time, YYYYMMDDHHMMSSZ. */
export const asn1Time = (d: Date) => `${d.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;

/**
 * root -> intermediate -> signing CA, all by openssl. The intermediate's validity can be set
 * (`openssl ca -startdate/-enddate`), to make one that is not valid yet or has expired.
 */
export function opensslChain(intermediateValidity?: { notBefore: Date; notAfter: Date }): OpensslChain {
  const dir = tempDir('istiod-ts-openssl-chain-');
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
  try {
    run('req', '-x509', ...EC, '-keyout', 'root.key', '-out', 'root.crt', '-subj', '/O=Example Root', '-days', '30');
    fs.writeFileSync(
      path.join(dir, 'ca.ext'),
      'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n' +
        'subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n',
    );
    // `openssl ca` is the command-line tool that takes explicit start and end dates.
    fs.writeFileSync(path.join(dir, 'index.txt'), '');
    fs.writeFileSync(path.join(dir, 'serial'), '01\n');
    fs.writeFileSync(
      path.join(dir, 'ca.cnf'),
      '[ca]\ndefault_ca=d\n[d]\ndatabase=index.txt\nnew_certs_dir=.\nserial=serial\ndefault_md=sha256\n' +
        'policy=p\nunique_subject=no\n[p]\norganizationName=optional\ncommonName=optional\n',
    );
    const sign = (csr: string, out: string, caCrt: string, caKey: string, start: Date, end: Date) =>
      run(
        'ca',
        '-batch',
        '-notext',
        '-config',
        'ca.cnf',
        '-cert',
        caCrt,
        '-keyfile',
        caKey,
        '-in',
        csr,
        '-out',
        out,
        '-startdate',
        asn1Time(start),
        '-enddate',
        asn1Time(end),
        '-extfile',
        'ca.ext',
      );
    const now = Date.now();
    const day = 86_400_000;
    run('req', ...EC, '-keyout', 'int.key', '-out', 'int.csr', '-subj', '/O=cluster.local/CN=Intermediate');
    const iv = intermediateValidity ?? { notBefore: new Date(now - day), notAfter: new Date(now + 20 * day) };
    sign('int.csr', 'int.crt', 'root.crt', 'root.key', iv.notBefore, iv.notAfter);
    run('req', ...EC, '-keyout', 'sign.key', '-out', 'sign.csr', '-subj', '/O=cluster.local/CN=Signing');
    sign('sign.csr', 'sign.crt', 'int.crt', 'int.key', new Date(now - day), new Date(now + 10 * day));
    return {
      root: { certPem: read('root.crt'), keyPem: read('root.key') },
      intermediate: { certPem: read('int.crt'), keyPem: read('int.key') },
      signing: { certPem: read('sign.crt'), keyPem: read('sign.key') },
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Lays `chain` out as istiod's cacerts: cert-chain.pem is the signing certificate, its intermediate, then the root. */
export function writeCacerts(dir: string, chain: OpensslChain, rootPem = chain.root.certPem): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'ca-cert.pem'), chain.signing.certPem);
  fs.writeFileSync(path.join(dir, 'ca-key.pem'), chain.signing.keyPem);
  fs.writeFileSync(
    path.join(dir, 'cert-chain.pem'),
    chain.signing.certPem + chain.intermediate.certPem + chain.root.certPem,
  );
  fs.writeFileSync(path.join(dir, 'root-cert.pem'), rootPem);
}
