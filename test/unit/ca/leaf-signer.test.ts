import 'reflect-metadata';
import * as crypto from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { generateCaCertificate } from '../../../src/ca/signing/ca-cert-generator';
import { readCsr } from '../../../src/ca/signing/csr';
import { LeafSigner, SERIAL_BYTES, SERIAL_RANDOM_POOL_BYTES, SanEntry } from '../../../src/ca/signing/leaf-signer';
import { makeCsr, opensslText, opensslVerify, peculiarSan } from '../../support/ca/fixtures';

const DAY = 24 * 3600 * 1000;
const URI = 'spiffe://cluster.local/ns/default/sa/sleep';

describe.each(['RSA', 'ECDSA'] as const)('leaf signer with a %s CA key', (keyType) => {
  let ca: { certPem: string; keyPem: string };
  let signer: LeafSigner;

  beforeAll(async () => {
    ca = await generateCaCertificate({ subject: 'O=cluster.local', keyType, ttlMs: 3650 * DAY });
    signer = new LeafSigner(new crypto.X509Certificate(ca.certPem).raw, crypto.createPrivateKey(ca.keyPem));
  });

  async function issue(sans: SanEntry[] = [{ uri: URI }], notAfter = new Date(Date.now() + DAY)) {
    const csr = await readCsr((await makeCsr()).pem);
    return signer.sign({ spki: csr.spki, sans, notBefore: new Date(Date.now() - 120_000), notAfter });
  }

  test('the issued certificate verifies against the root with openssl for TLS client and server', async () => {
    const leaf = await issue();
    expect(opensslVerify(ca.certPem, leaf.pem, '', 'sslclient')).toContain('OK');
    expect(opensslVerify(ca.certPem, leaf.pem, '', 'sslserver')).toContain('OK');
  });

  test('the leaf has an empty subject, one critical URI SAN and the workload key usages', async () => {
    const leaf = await issue();
    const text = opensslText(leaf.pem);
    expect(text).toMatch(/Subject:\s*\n/);
    expect(text).toMatch(
      /X509v3 Subject Alternative Name: critical\s+URI:spiffe:\/\/cluster\.local\/ns\/default\/sa\/sleep\s*\n/,
    );
    expect(text).toMatch(/X509v3 Key Usage: critical\s+Digital Signature, Key Encipherment/);
    expect(text).toMatch(/X509v3 Extended Key Usage:\s+TLS Web Server Authentication, TLS Web Client Authentication/);
    expect(text).toMatch(/X509v3 Basic Constraints: critical\s+CA:FALSE/);
    expect(peculiarSan(leaf.pem)).toEqual({ critical: true, uris: [URI], dns: [], ips: [] });
  });

  test('the leaf names its issuer by the CA subject and key identifier', async () => {
    const leaf = new x509.X509Certificate((await issue()).pem);
    const root = new x509.X509Certificate(ca.certPem);
    expect(leaf.issuer).toBe(root.subject);
    const aki = leaf.getExtension(x509.AuthorityKeyIdentifierExtension);
    const ski = root.getExtension(x509.SubjectKeyIdentifierExtension);
    expect(aki?.keyId).toBe(ski?.keyId);
    expect(await leaf.verify({ publicKey: root.publicKey, signatureOnly: true })).toBe(true);
  });

  test('DNS and IP SANs are encoded for the serving certificate', async () => {
    const leaf = await issue([
      { dns: 'istiod.istio-system.svc' },
      { dns: 'localhost' },
      { ip: '127.0.0.1' },
      { ip: '::1' },
    ]);
    expect(opensslText(leaf.pem)).toMatch(
      /DNS:istiod\.istio-system\.svc, DNS:localhost, IP Address:127\.0\.0\.1, IP Address:0:0:0:0:0:0:0:1/,
    );
  });

  test('notAfter never passes the signing certificate expiry', async () => {
    const leaf = await issue([{ uri: URI }], new Date(Date.now() + 20 * 365 * DAY));
    expect(leaf.notAfter.getTime()).toBe(signer.notAfterLimit.getTime());
    expect(new Date(new crypto.X509Certificate(leaf.pem).validTo).getTime()).toBe(signer.notAfterLimit.getTime());
  });

  test('serials are random, positive and SERIAL_BYTES long', async () => {
    const a = await issue();
    const b = await issue();
    expect(a.serialHex).not.toBe(b.serialHex);
    expect(a.serialHex).toHaveLength(SERIAL_BYTES * 2);
    expect(new crypto.X509Certificate(a.pem).serialNumber.toLowerCase()).toBe(a.serialHex);
  });

  test(`serials drawn across several ${SERIAL_RANDOM_POOL_BYTES}-byte random pools are all distinct, positive and SERIAL_BYTES long`, async () => {
    const csr = await readCsr((await makeCsr()).pem);
    const count = Math.ceil((3 * SERIAL_RANDOM_POOL_BYTES) / SERIAL_BYTES) + 7;
    const serials = new Set<string>();
    for (let i = 0; i < count; i++) {
      const { serial } = signer.prepare({
        spki: csr.spki,
        sans: [{ uri: URI }],
        notBefore: new Date(Date.now() - 120_000),
        notAfter: new Date(Date.now() + DAY),
      });
      expect(serial).toHaveLength(SERIAL_BYTES);
      expect(serial[0]! & 0x80).toBe(0);
      expect(serial[0]! & 0x01).toBe(1);
      serials.add(serial.toString('hex'));
    }
    expect(serials.size).toBe(count);
    expect(SERIAL_RANDOM_POOL_BYTES).toBe(4096);
  });

  test('a validity past 2049 is written as GeneralizedTime and read back by openssl', async () => {
    const tbs = signer.buildTbs(
      {
        spki: (await readCsr((await makeCsr()).pem)).spki,
        sans: [{ uri: URI }],
        notBefore: new Date('2049-12-31T23:59:59Z'),
        notAfter: new Date('2050-01-01T00:00:00Z'),
      },
      Buffer.from([1]),
    );
    expect(tbs.includes(Buffer.from('491231235959Z', 'latin1'))).toBe(true);
    expect(tbs.includes(Buffer.from('20500101000000Z', 'latin1'))).toBe(true);
  });
});
