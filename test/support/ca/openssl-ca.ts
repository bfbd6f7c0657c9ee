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
