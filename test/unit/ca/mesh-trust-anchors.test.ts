// meshConfig caCertificates: `pem` entries join the trust bundle the CA serves (root ConfigMaps and
// the end of every issued chain); a bad entry is an error naming it.

import * as crypto from 'node:crypto';
import { CertificateAuthority } from '../../../src/ca/authority';
import { generateCaCertificate } from '../../../src/ca/ca-cert-generator';
import { buildKeyMaterial, splitPemCertificates } from '../../../src/ca/key-material';
import { MAX_MESH_CA_CERTIFICATES, meshTrustAnchors } from '../../../src/ca/mesh-trust-anchors';
import { opensslCaPair } from '../../support/ca/openssl-ca';

const DAY = 24 * 3_600_000;

async function selfSigned(name: string) {
  const g = await generateCaCertificate({ subject: `O=${name}`, keyType: 'ECDSA', ttlMs: 30 * DAY });
  return buildKeyMaterial(
    { caCertPem: g.certPem, caKeyPem: g.keyPem, certChainPem: '', rootCertPem: g.certPem },
    'self-signed',
  );
}

const spki = () =>
  crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ format: 'der', type: 'spki' });

describe('meshTrustAnchors', () => {
  const other = opensslCaPair();

  test('the certificates of every pem entry, in order, each block on its own; entries without pem are skipped', () => {
    const anchors = meshTrustAnchors({
      caCertificates: [
        { pem: other.root.certPem + other.intermediate.certPem },
        { spiffeBundleUrl: 'https://example.com/bundle', trustDomains: ['example.com'] },
        { pem: '  ' },
      ],
    });
    expect(anchors).toEqual([
      ...splitPemCertificates(other.root.certPem),
      ...splitPemCertificates(other.intermediate.certPem),
    ]);
    expect(meshTrustAnchors({})).toEqual([]);
  });

  test('invalid PEM is an error naming the entry', () => {
    expect(() =>
      meshTrustAnchors({ caCertificates: [{ pem: other.root.certPem }, { pem: 'not a certificate' }] }),
    ).toThrow('meshConfig caCertificates[1].pem holds no PEM CERTIFICATE block');
    const broken = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    expect(() => meshTrustAnchors({ caCertificates: [{ pem: broken }] })).toThrow(
      'meshConfig caCertificates[0].pem: certificate 1 cannot be parsed',
    );
  });

  test('a certificate that is not a CA cannot be a trust anchor', async () => {
    const ca = await selfSigned('leaf-maker');
    const authority = new CertificateAuthority(ca);
    const leaf = await authority.issue(spki(), [{ dns: 'x.example' }], DAY);
    expect(() => meshTrustAnchors({ caCertificates: [{ pem: leaf.pem }] })).toThrow(
      /^meshConfig caCertificates\[0\]\.pem: certificate 1 .*is not a CA certificate$/,
    );
  });

  test(`more than MAX_MESH_CA_CERTIFICATES (${MAX_MESH_CA_CERTIFICATES}) entries are refused`, () => {
    const entries = Array.from({ length: MAX_MESH_CA_CERTIFICATES + 1 }, () => ({ pem: other.root.certPem }));
    expect(() => meshTrustAnchors({ caCertificates: entries })).toThrow(`at most ${MAX_MESH_CA_CERTIFICATES}`);
    expect(meshTrustAnchors({ caCertificates: entries.slice(1) })).toHaveLength(MAX_MESH_CA_CERTIFICATES);
  });
});

describe('the served trust bundle', () => {
  test('anchors are appended after the CA root, in the bundle and at the end of every issued chain', async () => {
    const ca = await selfSigned('cluster.local');
    const other = opensslCaPair();
    const authority = new CertificateAuthority(ca);
    const heard: string[] = [];
    authority.onChange(() => heard.push(authority.rootBundlePem()));
    authority.setTrustAnchors(meshTrustAnchors({ caCertificates: [{ pem: other.root.certPem }] }));
    const expected = ca.rootBundlePem + splitPemCertificates(other.root.certPem).join('');
    expect(authority.rootBundlePem()).toBe(expected);
    expect(heard).toEqual([expected]);
    const issued = await authority.issue(spki(), [{ uri: 'spiffe://cluster.local/ns/a/sa/b' }], DAY);
    expect(issued.chain[issued.chain.length - 1]).toBe(expected);
    // The same anchors again change nothing and notify nobody.
    authority.setTrustAnchors(meshTrustAnchors({ caCertificates: [{ pem: other.root.certPem }] }));
    expect(heard).toHaveLength(1);
    // Removing them from meshConfig removes them from the bundle.
    authority.setTrustAnchors([]);
    expect(authority.rootBundlePem()).toBe(ca.rootBundlePem);
  });

  test('an anchor vouches for nothing of the CA: not an issuer of mesh client certificates, not a root of the serving certificate', async () => {
    const ca = await selfSigned('cluster.local');
    const other = opensslCaPair();
    const authority = new CertificateAuthority(ca);
    authority.setTrustAnchors(meshTrustAnchors({ caCertificates: [{ pem: other.root.certPem }] }));
    const issuers = authority.meshIssuers().map((c) => c.fingerprint256);
    expect(issuers).toContain(ca.signingCert.fingerprint256);
    expect(issuers).not.toContain(new crypto.X509Certificate(other.root.certPem).fingerprint256);
    // Nor a root of istiod's own serving certificate (the webhook caBundle the API server trusts).
    expect(authority.current().rootBundlePem).toBe(ca.rootBundlePem);
  });

  test('during a rotation the other root is both trusted and an issuer of mesh client certificates', async () => {
    const ca = await selfSigned('cluster.local');
    const next = await selfSigned('cluster.local');
    const authority = new CertificateAuthority(ca);
    authority.setRotation(ca, [next.signingCertPem]);
    expect(authority.rootBundlePem()).toBe(ca.rootBundlePem + next.signingCertPem);
    expect(authority.meshIssuers().map((c) => c.fingerprint256)).toContain(next.signingCert.fingerprint256);
    // Still signing with the first root.
    expect(authority.signingMaterial().signingCertPem).toBe(ca.signingCertPem);
  });
});
