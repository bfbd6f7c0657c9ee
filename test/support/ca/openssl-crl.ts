// CRLs made by `openssl ca -gencrl`, and a plugged-in CA folder in istiod's layout to put them
// beside: shared by the CRL tests and the chart's RBAC test, which runs with a plugged-in CRL.

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from './fixtures';
import { type OpensslCa, opensslCaPair } from './openssl-ca';

/** A CRL signed by `ca`, from openssl's own CA tool; each call in one `dir` gets the next CRL number. */
export function opensslCrl(ca: OpensslCa, dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'ca.pem'), ca.certPem);
  fs.writeFileSync(path.join(dir, 'ca-key.pem'), ca.keyPem);
  if (!fs.existsSync(path.join(dir, 'index.txt'))) {
    fs.writeFileSync(path.join(dir, 'index.txt'), '');
    fs.writeFileSync(path.join(dir, 'crlnumber'), '01\n');
    fs.writeFileSync(
      path.join(dir, 'openssl.cnf'),
      '[ca]\ndefault_ca = crl\n[crl]\ndatabase = index.txt\ncrlnumber = crlnumber\ndefault_md = sha256\ndefault_crl_days = 30\n',
    );
  }
  const args = ['ca', '-gencrl', '-config', 'openssl.cnf', '-keyfile', 'ca-key.pem', '-cert', 'ca.pem'];
  return execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] }).toString();
}

/**
 * CRLs for every CA of the test chain's cert-chain.pem (the intermediate and the root), as istiod
 * requires once a CRL is given at all; each CA keeps its CRL numbers in its own folder under `dir`.
 */
export function chainCrl(intermediate: OpensslCa, root: OpensslCa, dir: string): string {
  return opensslCrl(intermediate, dir) + opensslCrl(root, path.join(dir, 'root'));
}

/** A plugged-in CA folder in istiod's layout, from an openssl-made root and intermediate. */
export function pluggedInCaDir(): { dir: string; intermediate: OpensslCa; root: OpensslCa } {
  const { root, intermediate } = opensslCaPair();
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'ca-cert.pem'), intermediate.certPem);
  fs.writeFileSync(path.join(dir, 'ca-key.pem'), intermediate.keyPem);
  fs.writeFileSync(path.join(dir, 'root-cert.pem'), root.certPem);
  fs.writeFileSync(path.join(dir, 'cert-chain.pem'), intermediate.certPem + root.certPem);
  return { dir, intermediate, root };
}
