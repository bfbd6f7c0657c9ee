// Where istiod's serving certificate comes from: --tlsCertFile first, then the folder the upstream
// chart mounts for external providers, then PILOT_CERT_PROVIDER. Only which files are chosen is
// checked here; test/e2e/pilot-cert-provider.test.ts serves them.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  certProviderProblem,
  ISTIOD_TLS_CA_DIR,
  ISTIOD_TLS_DIR,
  servingCertFiles,
} from '../../../src/config/serving-cert-source';

let root: string;
let tlsDir: string;
let caDir: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-serving-src-'));
  tlsDir = path.join(root, 'tls');
  caDir = path.join(root, 'ca');
  fs.mkdirSync(tlsDir);
  fs.mkdirSync(caDir);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const touch = (...parts: string[]) => fs.writeFileSync(path.join(root, ...parts), 'x');
const none = { tlsCertFile: '', tlsKeyFile: '', caCertFile: '' };

describe('serving certificate source', () => {
  test("istiod's folders are the relative ones istiod uses (from / in the image)", () => {
    expect(ISTIOD_TLS_DIR).toBe('./var/run/secrets/istiod/tls');
    expect(ISTIOD_TLS_CA_DIR).toBe('./var/run/secrets/istiod/ca');
  });

  test('with nothing mounted, istiod (the default) lets the mesh CA issue the certificate', () => {
    expect(servingCertFiles({ ...none, provider: 'istiod', tlsDir, caDir })).toBeUndefined();
  });

  test('a complete mounted folder is used whatever the provider, as istiod', () => {
    touch('tls', 'tls.crt');
    touch('tls', 'tls.key');
    touch('tls', 'ca.crt');
    for (const provider of ['istiod', 'custom'])
      expect(servingCertFiles({ ...none, provider, tlsDir, caDir })).toMatchObject({
        certFile: path.join(tlsDir, 'tls.crt'),
        keyFile: path.join(tlsDir, 'tls.key'),
        caFile: path.join(tlsDir, 'ca.crt'),
      });
  });

  test('ca/root-cert.pem is preferred over tls/ca.crt as the CA, as istiod', () => {
    touch('tls', 'tls.crt');
    touch('tls', 'tls.key');
    touch('tls', 'ca.crt');
    touch('ca', 'root-cert.pem');
    expect(servingCertFiles({ ...none, provider: 'custom', tlsDir, caDir })?.caFile).toBe(
      path.join(caDir, 'root-cert.pem'),
    );
  });

  test('--tlsCertFile/--tlsKeyFile win over a mounted folder', () => {
    touch('tls', 'tls.crt');
    touch('tls', 'tls.key');
    touch('tls', 'ca.crt');
    const flags = { tlsCertFile: '/flags/cert.pem', tlsKeyFile: '/flags/key.pem', caCertFile: '' };
    expect(servingCertFiles({ ...flags, provider: 'custom', tlsDir, caDir })).toEqual({
      certFile: '/flags/cert.pem',
      keyFile: '/flags/key.pem',
      caFile: '',
    });
  });

  test('an incomplete folder is ignored by istiod but is an error naming what is missing under custom', () => {
    touch('tls', 'tls.crt');
    expect(servingCertFiles({ ...none, provider: 'istiod', tlsDir, caDir })).toBeUndefined();
    expect(() => servingCertFiles({ ...none, provider: 'custom', tlsDir, caDir })).toThrow(
      `PILOT_CERT_PROVIDER=custom needs a mounted serving certificate: missing ${path.join(tlsDir, 'tls.key')}, ` +
        `${path.join(tlsDir, 'ca.crt')} (or ${path.join(caDir, 'root-cert.pem')})`,
    );
  });

  test('PILOT_CERT_PROVIDER accepts istiod and custom, refuses kubernetes and k8s.io/ signers with the reason, and anything else', () => {
    expect(certProviderProblem('istiod')).toBeUndefined();
    expect(certProviderProblem('custom')).toBeUndefined();
    expect(certProviderProblem('kubernetes')).toMatch(/^kubernetes is not supported: .*no longer signs/);
    expect(certProviderProblem('k8s.io/example.com/signer')).toMatch(
      /Kubernetes CSR API signer\) is not supported here/,
    );
    expect(certProviderProblem('citadel')).toBe('must be one of istiod, kubernetes, custom');
  });
});
