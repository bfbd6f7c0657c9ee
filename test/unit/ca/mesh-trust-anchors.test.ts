// meshConfig caCertificates: checked, named when wrong, and never part of the trust bundle the CA
// serves (root ConfigMaps and the end of every issued chain), as in istiod.

import * as crypto from 'node:crypto';
import { CertificateAuthority } from '../../../src/ca/signing/authority';
import { generateCaCertificate } from '../../../src/ca/signing/ca-cert-generator';
import { buildKeyMaterial, splitPemCertificates } from '../../../src/ca/signing/key-material';
import {
  MAX_MESH_CA_CERTIFICATES,
  meshTrustAnchors,
  meshTrustAnchorsNotice,
} from '../../../src/ca/roots/mesh-trust-anchors';
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

describe('meshTrustAnchorsNotice', () => {
  const other = opensslCaPair();

  test('says the anchors are not served, with their count; nothing when none are set', () => {
    const notice = meshTrustAnchorsNotice({
      caCertificates: [{ pem: other.root.certPem + other.intermediate.certPem }],
    });
    expect(notice?.fields).toEqual({ certificates: 2 });
    expect(notice?.message).toMatch(
      /^meshConfig caCertificates are not served: istiod hands them only to sidecars over PCDS/,
    );
    expect(meshTrustAnchorsNotice({})).toBeUndefined();
    expect(meshTrustAnchorsNotice({ caCertificates: [] })).toBeUndefined();
  });

  test('an invalid entry is named, so the mistake is found before moving to istiod', () => {
    const notice = meshTrustAnchorsNotice({ caCertificates: [{ pem: 'garbage' }] });
    expect(notice?.fields).toEqual({ err: 'meshConfig caCertificates[0].pem holds no PEM CERTIFICATE block' });
    expect(notice?.message).toMatch(/^meshConfig caCertificates are invalid and not served/);
  });
});

describe('the served trust bundle', () => {
  test("is the CA's own roots: what ends every issued chain and what the CA vouches for", async () => {
    const ca = await selfSigned('cluster.local');
    const authority = new CertificateAuthority(ca);
    expect(authority.rootBundlePem()).toBe(ca.rootBundlePem);
    const issued = await authority.issue(spki(), [{ uri: 'spiffe://cluster.local/ns/a/sa/b' }], DAY);
    expect(issued.chain[issued.chain.length - 1]).toBe(ca.rootBundlePem);
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
