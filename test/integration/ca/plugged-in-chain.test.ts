// Plugged-in CA material is verified as a chain before it is used, at start and on every reload, as
// istiod's KeyCertBundle.Verify does: the signing certificate chains through cert-chain.pem to
// root-cert.pem and every certificate on the way is valid now. All material here is made by the
// openssl command line.

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CertificateAuthority } from '../../../src/ca/signing/authority';
import { parseCsr } from '../../../src/ca/signing/csr';
import { IssuerValidityError } from '../../../src/ca/signing/leaf-signer';
import { loadPluggedInCa, watchPluggedInCa, PLUGGED_IN_DEBOUNCE_MS } from '../../../src/ca/roots/plugged-in';
import { opensslCsr, opensslVerify, tempDir } from '../../support/ca/fixtures';
import { opensslCaPair, opensslChain, writeCacerts, type OpensslChain } from '../../support/ca/openssl-ca';

const DAY = 86_400_000;

/** istiod's cacerts layout (test/support/ca/openssl-ca.ts). */
const writeIstiodLayout = writeCacerts;

function writeTlsLayout(dir: string, c: OpensslChain, root = c.root.certPem): void {
  fs.writeFileSync(path.join(dir, 'tls.crt'), c.signing.certPem + c.intermediate.certPem);
  fs.writeFileSync(path.join(dir, 'tls.key'), c.signing.keyPem);
  fs.writeFileSync(path.join(dir, 'ca.crt'), root);
}

let dir: string;
beforeEach(() => (dir = tempDir('istiod-ts-chain-')));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('at start', () => {
  test('a good three-level chain loads, and its leaves verify with openssl against the root', async () => {
    const c = opensslChain();
    writeIstiodLayout(dir, c);
    const material = loadPluggedInCa(dir)!;
    const ca = new CertificateAuthority(material);
    const key = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
    const csrPem = opensslCsr(key.export({ type: 'pkcs8', format: 'pem' }) as string);

    const issued = await ca.issueForCsr(parseCsr(csrPem), [{ uri: 'spiffe://cluster.local/ns/a/sa/b' }], DAY);
    const [leaf, ...rest] = issued.chain;
    expect(opensslVerify(c.root.certPem, leaf!, rest.slice(0, -1).join(''))).toContain('OK');
    // Its validity lies inside the signing chain's (the signing CA ends first, in 10 days).
    expect(new Date(issued.notAfter).getTime()).toBeLessThanOrEqual(material.validity.notAfter.getTime());
  });

  test.each([
    // cert-chain.pem carries the chain's own root, so the walk ends at it: that root is not trusted.
    ['istiod layout', writeIstiodLayout, 'root-cert.pem', 'O=Example Root'],
    ['kubernetes.io/tls layout', writeTlsLayout, 'ca.crt', 'O=cluster.local, CN=Intermediate'],
  ])('%s: a root-cert from an unrelated root is refused, naming the file', (_layout, write, rootFile, top) => {
    const c = opensslChain();
    write(dir, c, opensslCaPair('Other').root.certPem);
    expect(() => loadPluggedInCa(dir)).toThrow(`does not chain to ${rootFile}: no certificate of`);
    expect(() => loadPluggedInCa(dir)).toThrow(`issued "${top}"`);
  });

  test('an intermediate that is not valid yet (notBefore 2030) is refused', () => {
    writeIstiodLayout(
      dir,
      opensslChain({ notBefore: new Date('2030-01-01T00:00:00Z'), notAfter: new Date('2031-01-01T00:00:00Z') }),
    );
    expect(() => loadPluggedInCa(dir)).toThrow(
      /cert-chain\.pem: "O=cluster\.local, CN=Intermediate" is not valid before Jan {2}1 00:00:00 2030 GMT/,
    );
  });

  test('an expired intermediate between the root and the signing certificate is refused', () => {
    const now = Date.now();
    writeIstiodLayout(dir, opensslChain({ notBefore: new Date(now - 30 * DAY), notAfter: new Date(now - DAY) }));
    expect(() => loadPluggedInCa(dir)).toThrow(/cert-chain\.pem: "O=cluster\.local, CN=Intermediate" expired at/);
  });

  test('cert-chain.pem that does not begin with ca-cert.pem is refused', () => {
    const c = opensslChain();
    writeIstiodLayout(dir, c);
    fs.writeFileSync(path.join(dir, 'cert-chain.pem'), c.intermediate.certPem + c.root.certPem);
    expect(() => loadPluggedInCa(dir)).toThrow(
      /cert-chain\.pem must begin with the certificate of ca-cert\.pem, but begins with "O=cluster\.local, CN=Intermediate"/,
    );
  });
});

describe('on reload', () => {
  test('files replaced one at a time are applied only once they agree; each refusal is counted', async () => {
    const first = opensslChain();
    writeIstiodLayout(dir, first);
    const applied: string[] = [];
    const refused: string[] = [];
    const stop = watchPluggedInCa(
      dir,
      loadPluggedInCa(dir)!,
      (m) => applied.push(m.signingCert.fingerprint256),
      (reason) => refused.push(reason),
      true, // ISTIO_MULTIROOT_MESH: the new chain's root joins the old one
    );
    const settle = () => new Promise((r) => setTimeout(r, PLUGGED_IN_DEBOUNCE_MS * 4));
    try {
      const next = opensslChain();
      // A writer that replaces the four files one by one: the first two leave a set that disagrees.
      fs.writeFileSync(path.join(dir, 'ca-cert.pem'), next.signing.certPem);
      fs.writeFileSync(path.join(dir, 'ca-key.pem'), next.signing.keyPem);
      await settle();
      expect(applied).toEqual([]);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0]).toMatch(/cert-chain\.pem must begin with the certificate of ca-cert\.pem/);
      fs.writeFileSync(
        path.join(dir, 'cert-chain.pem'),
        next.signing.certPem + next.intermediate.certPem + next.root.certPem,
      );
      await settle();
      expect(applied).toEqual([]); // root-cert.pem is still the old root
      fs.writeFileSync(path.join(dir, 'root-cert.pem'), first.root.certPem + next.root.certPem);
      await settle();
      expect(applied).toEqual([new crypto.X509Certificate(next.signing.certPem).fingerprint256]);
    } finally {
      stop();
    }
  });
});

describe('issuing', () => {
  test("past the signing chain's end nothing is issued, not even a born-expired leaf", async () => {
    const c = opensslChain();
    writeIstiodLayout(dir, c);
    const ca = new CertificateAuthority(loadPluggedInCa(dir)!);
    const key = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;

    const csr = parseCsr(opensslCsr(key.export({ type: 'pkcs8', format: 'pem' }) as string));
    const sans = [{ uri: 'spiffe://cluster.local/ns/a/sa/b' }];
    const signingEnd = new Date(new crypto.X509Certificate(c.signing.certPem).validTo).getTime();
    // A minute before the end: issued, and ending with the signer.
    const late = await ca.issueForCsr(csr, sans, DAY, signingEnd - 60_000);
    expect(late.notAfter.getTime()).toBe(signingEnd);
    // At the end and after: refused with istiod's words.
    await expect(ca.issueForCsr(csr, sans, DAY, signingEnd)).rejects.toThrow(IssuerValidityError);
    await expect(ca.issueForCsr(csr, sans, DAY, signingEnd + DAY)).rejects.toThrow(
      /signing certificate has expired at/,
    );
  });
});
