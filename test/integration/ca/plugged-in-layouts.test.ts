// ROOT_CA_DIR in both layouts istiod reads: its own (ca-cert.pem, ca-key.pem, root-cert.pem,
// cert-chain.pem) and a kubernetes.io/tls Secret as cert-manager writes it (tls.crt, tls.key,
// ca.crt). The CA certificates come from openssl; every leaf is checked by `openssl verify`.

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CertificateAuthority } from '../../../src/ca/signing/authority';
import type { CaKeyMaterial } from '../../../src/ca/signing/key-material';
import { PLUGGED_IN_DEBOUNCE_MS, loadPluggedInCa, watchPluggedInCa } from '../../../src/ca/roots/plugged-in';
import { opensslVerify, tempDir } from '../../support/ca/fixtures';
import { OpensslCaPair, opensslCaPair } from '../../support/ca/openssl-ca';

const HOUR = 3600 * 1000;

function write(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
}

function istiodLayout(ca: OpensslCaPair): Record<string, string> {
  return {
    'ca-cert.pem': ca.intermediate.certPem,
    'ca-key.pem': ca.intermediate.keyPem,
    'root-cert.pem': ca.root.certPem,
    'cert-chain.pem': ca.intermediate.certPem + ca.root.certPem,
  };
}

function tlsLayout(ca: OpensslCaPair): Record<string, string> {
  return { 'tls.crt': ca.intermediate.certPem, 'tls.key': ca.intermediate.keyPem, 'ca.crt': ca.root.certPem };
}

function loaded(dir: string): CaKeyMaterial {
  const material = loadPluggedInCa(dir);
  if (!material) throw new Error(`no plugged-in CA in ${dir}`);
  return material;
}

/** Issues a workload leaf and checks it with openssl against the CA's roots and its chain. */
async function issueAndVerify(material: CaKeyMaterial): Promise<string[]> {
  const key = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = key.publicKey.export({ format: 'der', type: 'spki' });
  const issued = await new CertificateAuthority(material).issue(
    spki,
    [{ uri: 'spiffe://cluster.local/ns/a/sa/b' }],
    HOUR,
  );
  const [leaf, ...rest] = issued.chain;
  if (leaf === undefined) throw new Error('empty chain');
  expect(opensslVerify(material.rootBundlePem, leaf, rest.join(''))).toContain('OK');
  return issued.chain;
}

describe('plugged-in CA layouts', () => {
  test("istiod's layout (ca-cert.pem, ca-key.pem, root-cert.pem, cert-chain.pem) signs leaves openssl verifies", async () => {
    const ca = opensslCaPair();
    const dir = tempDir();
    write(dir, istiodLayout(ca));
    const material = loaded(dir);
    expect(material.signingCertPem.trim()).toBe(ca.intermediate.certPem.trim());
    const chain = await issueAndVerify(material);
    expect(chain.slice(1).map((c) => c.trim())).toEqual([
      ca.intermediate.certPem.trim(),
      ca.root.certPem.trim(),
      ca.root.certPem.trim(),
    ]);
  });

  test('the kubernetes.io/tls layout (tls.crt, tls.key, ca.crt) signs with tls.crt, chains tls.crt then ca.crt, trusts ca.crt', async () => {
    const ca = opensslCaPair();
    const dir = tempDir();
    write(dir, tlsLayout(ca));
    const material = loaded(dir);
    expect(material.signingCertPem.trim()).toBe(ca.intermediate.certPem.trim());
    expect(material.rootBundlePem.trim()).toBe(ca.root.certPem.trim());
    expect(material.chainPems.map((c) => c.trim())).toEqual([ca.intermediate.certPem.trim(), ca.root.certPem.trim()]);
    await issueAndVerify(material);
  });

  test('tls.crt holding the intermediate and the root (as cert-manager may write it) signs with its first certificate', async () => {
    const ca = opensslCaPair();
    const dir = tempDir();
    write(dir, { ...tlsLayout(ca), 'tls.crt': ca.intermediate.certPem + ca.root.certPem });
    const material = loaded(dir);
    expect(material.signingCertPem.trim()).toBe(ca.intermediate.certPem.trim());
    // The root appears in both files; the chain lists it once.
    expect(material.chainPems).toHaveLength(2);
    await issueAndVerify(material);
  });

  test('when both layouts are present the kubernetes.io/tls layout wins, as in istiod', async () => {
    const istiodCa = opensslCaPair('Istiod Layout');
    const tlsCa = opensslCaPair('Tls Layout');
    const dir = tempDir();
    write(dir, { ...istiodLayout(istiodCa), ...tlsLayout(tlsCa) });
    const material = loaded(dir);
    expect(material.signingCert.subject).toContain('CN=Tls Layout');
    await issueAndVerify(material);
  });

  test('tls.crt without tls.key is an error naming tls.key, even when the istiod layout is complete', () => {
    const ca = opensslCaPair();
    const dir = tempDir();
    write(dir, { ...istiodLayout(ca), 'tls.crt': ca.intermediate.certPem, 'ca.crt': ca.root.certPem });
    expect(() => loadPluggedInCa(dir)).toThrow(
      `plugged-in CA in ${dir} is incomplete: tls.crt is present, so the kubernetes.io/tls layout is used, but tls.key is missing`,
    );
  });

  test('tls.key and ca.crt without tls.crt name what each layout lacks instead of falling back to self-signed', () => {
    const ca = opensslCaPair();
    const dir = tempDir();
    write(dir, { 'tls.key': ca.intermediate.keyPem, 'ca.crt': ca.root.certPem });
    expect(() => loadPluggedInCa(dir)).toThrow(
      `plugged-in CA in ${dir} is incomplete: missing ca-cert.pem, ca-key.pem, root-cert.pem, cert-chain.pem ` +
        'or, for the kubernetes.io/tls layout, tls.crt; add them, or remove tls.key, ca.crt to use a self-signed root',
    );
  });

  test('a tls.key that is not the key of tls.crt is refused under the tls file names', () => {
    const ca = opensslCaPair();
    const dir = tempDir();
    write(dir, { ...tlsLayout(ca), 'tls.key': ca.root.keyPem });
    expect(() => loadPluggedInCa(dir)).toThrow(
      `plugged-in CA in ${dir} (kubernetes.io/tls layout): tls.key does not match the public key of tls.crt`,
    );
  });

  test('an empty folder means no plugged-in CA', () => {
    expect(loadPluggedInCa(tempDir())).toBeUndefined();
  });

  test('a reload from the istiod layout to the tls layout switches the signer; a half tls layout keeps the current CA', async () => {
    const first = opensslCaPair('First');
    const second = opensslCaPair('Second');
    const dir = tempDir();
    write(dir, istiodLayout(first));
    const changes: CaKeyMaterial[] = [];
    // Second's root joins First's in ca.crt: one step of a rotation, which ISTIO_MULTIROOT_MESH allows.
    const stop = watchPluggedInCa(dir, loaded(dir), (m) => changes.push(m), undefined, true);
    const settle = () => new Promise((r) => setTimeout(r, PLUGGED_IN_DEBOUNCE_MS * 5));
    try {
      write(dir, { 'tls.crt': second.intermediate.certPem, 'ca.crt': first.root.certPem + second.root.certPem });
      await settle();
      expect(changes).toHaveLength(0);
      write(dir, { 'tls.key': second.intermediate.keyPem });
      await settle();
      expect(changes.at(-1)?.signingCert.subject).toContain('CN=Second');
      await issueAndVerify(changes.at(-1) ?? loaded(dir));
    } finally {
      stop();
    }
  });
});
