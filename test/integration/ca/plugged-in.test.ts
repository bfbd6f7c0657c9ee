import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CertificateAuthority } from '../../../src/ca/signing/authority';
import { generateCaCertificate, GeneratedCa } from '../../../src/ca/signing/ca-cert-generator';
import { loadPluggedInCa } from '../../../src/ca/roots/plugged-in';
import { loadOrCreateTokenKey, signLocalToken } from '../../../src/security/local-jwt';
import { eventually } from '../../support/apiserver';
import { makeCsr, opensslVerify, peculiarSan, tempDir } from '../../support/ca/fixtures';
import { Harness, ZtunnelLikeClient, readRoot, startHarness } from '../../support/ca/harness';

const YEAR = 365 * 24 * 3600 * 1000;

async function chainOfThree(): Promise<{ root: GeneratedCa; intermediate: GeneratedCa }> {
  const root = await generateCaCertificate({ subject: 'O=Example Root', keyType: 'ECDSA', ttlMs: 10 * YEAR });
  const intermediate = await generateCaCertificate({
    subject: 'O=cluster.local,CN=Intermediate',
    keyType: 'RSA',
    ttlMs: 2 * YEAR,
    issuer: root,
    pathLength: 0,
  });
  return { root, intermediate };
}

function writeCaDir(dir: string, root: GeneratedCa, intermediate: GeneratedCa, only?: string[]): void {
  fs.mkdirSync(dir, { recursive: true });
  const files: Record<string, string> = {
    'ca-cert.pem': intermediate.certPem,
    'ca-key.pem': intermediate.keyPem,
    'root-cert.pem': root.certPem,
    'cert-chain.pem': intermediate.certPem + root.certPem,
  };
  for (const [name, text] of Object.entries(files))
    if (!only || only.includes(name)) fs.writeFileSync(path.join(dir, name), text);
}

describe('plugged-in CA from ROOT_CA_DIR', () => {
  test('a partial set of files is an error naming the missing ones', async () => {
    const { root, intermediate } = await chainOfThree();
    const dir = tempDir();
    writeCaDir(dir, root, intermediate, ['ca-cert.pem', 'ca-key.pem']);
    expect(() => loadPluggedInCa(dir)).toThrow(
      `plugged-in CA in ${dir} is incomplete: missing root-cert.pem, cert-chain.pem`,
    );
  });

  test('a signing certificate that is not a CA is refused', async () => {
    const { root, intermediate } = await chainOfThree();
    const dir = tempDir();
    writeCaDir(dir, root, intermediate);
    const leafKey = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const ca = loadPluggedInCa(dir)!;
    const leaf = await new CertificateAuthority(ca).issue(
      crypto.createPublicKey(leafKey.privateKey).export({ format: 'der', type: 'spki' }),
      [{ uri: 'spiffe://x/ns/a/sa/b' }],
      YEAR,
    );
    fs.writeFileSync(path.join(dir, 'ca-cert.pem'), leaf.pem);
    fs.writeFileSync(path.join(dir, 'ca-key.pem'), leafKey.privateKey.export({ format: 'pem', type: 'pkcs8' }));
    expect(() => loadPluggedInCa(dir)).toThrow(/ca-cert\.pem is not a CA certificate/);
  });

  test('a key that does not match the signing certificate is refused, without printing the key', async () => {
    const { root, intermediate } = await chainOfThree();
    const dir = tempDir();
    writeCaDir(dir, root, intermediate);
    fs.writeFileSync(path.join(dir, 'ca-key.pem'), root.keyPem);
    let message = '';
    try {
      loadPluggedInCa(dir);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/ca-key\.pem does not match the public key of ca-cert\.pem/);
    expect(message).not.toContain('PRIVATE KEY');
  });

  describe('with an intermediate (root -> intermediate -> leaf)', () => {
    let h: Harness;
    let client: ZtunnelLikeClient;
    let caDir: string;
    let chain: { root: GeneratedCa; intermediate: GeneratedCa };
    let token: string;

    beforeAll(async () => {
      chain = await chainOfThree();
      caDir = tempDir();
      writeCaDir(caDir, chain.root, chain.intermediate);
      h = await startHarness({ env: { ROOT_CA_DIR: caDir } });
      h.store.upsert('Pod', [
        {
          metadata: { name: 'ztunnel-a', namespace: 'istio-system', uid: 'u1' },
          spec: { serviceAccountName: 'ztunnel', nodeName: 'n1' },
          status: { phase: 'Running' },
        },
      ]);
      token = signLocalToken(
        loadOrCreateTokenKey(h.stateDir),
        { namespace: 'istio-system', serviceAccount: 'ztunnel', podName: 'ztunnel-a', podUid: 'u1' },
        ['istio-ca'],
        600,
      );
      client = new ZtunnelLikeClient(h.port, readRoot(h));
    });

    afterAll(async () => {
      client.close();
      await h.close();
    });

    test('root-cert.pem in the state dir is the plugged-in root', () => {
      expect(readRoot(h)).toBe(chain.root.certPem);
    });

    test('the response is leaf, each cert-chain.pem certificate, then the root, and openssl verifies it', async () => {
      const res = await client.createCertificate((await makeCsr()).pem, { token });
      expect(res.cert_chain).toEqual([
        expect.any(String),
        chain.intermediate.certPem,
        chain.root.certPem,
        chain.root.certPem,
      ]);
      expect(opensslVerify(chain.root.certPem, res.cert_chain[0]!, chain.intermediate.certPem)).toContain('OK');
      expect(new crypto.X509Certificate(res.cert_chain[0]!).issuer).toBe(
        new crypto.X509Certificate(chain.intermediate.certPem).subject,
      );
      expect(peculiarSan(res.cert_chain[0]!).uris).toEqual(['spiffe://cluster.local/ns/istio-system/sa/ztunnel']);
    });

    test("istiod's serving certificate chains through the intermediate", () => {
      const serving = h.ctx.servingCerts.current();
      const [leaf, ...rest] = serving.certChainPem.match(
        /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/g,
      )!;
      expect(opensslVerify(chain.root.certPem, leaf, rest.join(''), 'sslserver')).toContain('OK');
    });

    test('a rotated intermediate signs new certificates without a restart', async () => {
      const next = await generateCaCertificate({
        subject: 'O=cluster.local,CN=Intermediate 2',
        keyType: 'ECDSA',
        ttlMs: YEAR,
        issuer: chain.root,
        pathLength: 0,
      });
      writeCaDir(caDir, chain.root, next);
      await eventually('the new intermediate is in use', () =>
        h.ca.authority.current().signingCert.subject.includes('Intermediate 2'),
      );
      const res = await client.createCertificate((await makeCsr()).pem, { token });
      expect(res.cert_chain[1]).toBe(next.certPem);
      expect(opensslVerify(chain.root.certPem, res.cert_chain[0]!, next.certPem)).toContain('OK');
      // The serving certificate follows the CA.
      await eventually('the serving certificate is re-issued', () =>
        h.ctx.servingCerts.current().certChainPem.includes(next.certPem.trim()),
      );
    });

    test('a broken update keeps the previous CA in service', async () => {
      const before = h.ca.authority.current().signingCert.fingerprint256;
      fs.writeFileSync(path.join(caDir, 'ca-key.pem'), chain.root.keyPem);
      await new Promise((r) => setTimeout(r, 400));
      expect(h.ca.authority.current().signingCert.fingerprint256).toBe(before);
      await expect(client.createCertificate((await makeCsr()).pem, { token })).resolves.toBeDefined();
    });
  });
});
