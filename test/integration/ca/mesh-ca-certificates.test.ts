// meshConfig caCertificates stay out of the trust bundle the CA serves, as in istiod: root-cert.pem
// (the local-mode root distribution) and the roots at the end of every CreateCertificate chain
// carry the CA's own roots, with or without ISTIO_MULTIROOT_MESH.

import { loadOrCreateTokenKey, signLocalToken } from '../../../src/security/local-jwt';
import { splitPemCertificates } from '../../../src/ca/signing/key-material';
import type { MeshConfig, MeshConfigSource } from '../../../src/mesh/types';
import { makeCsr } from '../../support/ca/fixtures';
import { opensslCaPair } from '../../support/ca/openssl-ca';
import { Harness, ZtunnelLikeClient, readRoot, startHarness } from '../../support/ca/harness';
import { captureLogs } from '../../support/logs';

/** A meshConfig source the test changes, delivering each change as the real source does. */
function mutableMesh(initial: Partial<MeshConfig>): MeshConfigSource & { set(next: Partial<MeshConfig>): void } {
  const base: MeshConfig = {
    trustDomain: 'cluster.local',
    trustDomainAliases: [],
    rootNamespace: 'istio-system',
    defaultConfig: {},
  };
  let mesh: MeshConfig = { ...base, ...initial };
  const listeners = new Set<(m: MeshConfig, p: MeshConfig) => void>();
  return {
    current: () => mesh,
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    set(next) {
      const previous = mesh;
      mesh = { ...base, ...next };
      for (const l of listeners) l(mesh, previous);
    },
  };
}

/** Issues a certificate to the sleep pod through the real service and returns its chain. */
async function issuedChain(h: Harness): Promise<string[]> {
  const key = loadOrCreateTokenKey(h.stateDir);
  const client = new ZtunnelLikeClient(h.port, readRoot(h));
  try {
    const subject = { namespace: 'default', serviceAccount: 'sleep', podName: 'sleep-1', podUid: 'uid-sleep' };
    const res = await client.createCertificate((await makeCsr()).pem, {
      token: signLocalToken(key, subject, ['istio-ca'], 600),
    });
    return res.cert_chain;
  } finally {
    client.close();
  }
}

// Before: every pem entry was appended to root-cert.pem (istio-ca-root-cert) and to the end of
// every chain, so an anchor added for another purpose became a root every ztunnel trusted for peers.
describe.each([
  ['ISTIO_MULTIROOT_MESH unset', {}],
  ['ISTIO_MULTIROOT_MESH=true', { ISTIO_MULTIROOT_MESH: 'true' }],
])("meshConfig caCertificates never reach ztunnel's trust (local mode, %s)", (_name, env) => {
  const corp = opensslCaPair('Corp');
  const partner = opensslCaPair('Partner');
  const mesh = mutableMesh({ caCertificates: [{ pem: corp.root.certPem }] });
  let h: Harness;
  let caRoot: string;
  let logs: ReturnType<typeof captureLogs>;

  beforeAll(async () => {
    logs = captureLogs();
    h = await startHarness({ mesh, env });
    caRoot = h.ca.authority.signingMaterial().rootBundlePem;
    h.store.upsert('Pod', [
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'sleep-1', namespace: 'default', uid: 'uid-sleep' },
        spec: { serviceAccountName: 'sleep', nodeName: 'node-a' },
        status: { phase: 'Running' },
      },
    ]);
  });
  afterAll(async () => {
    logs.restore();
    await h.close();
  });

  test("root-cert.pem and the end of every issued chain are the CA's own root only; the operator is told once", async () => {
    expect(readRoot(h)).toBe(caRoot);
    const chain = await issuedChain(h);
    expect(chain[chain.length - 1]).toBe(caRoot);
    expect(chain.join('')).not.toContain(splitPemCertificates(corp.root.certPem)[0]!.trim());
    const told = logs.lines().filter((l) => String(l['msg']).startsWith('meshConfig caCertificates are not served'));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ level: 'warn', certificates: 1 });
  });

  test('a meshConfig change leaves the bundle alone and is reported once per change; a bad entry is named', async () => {
    const mark = logs.lines().length;
    mesh.set({ caCertificates: [{ pem: corp.root.certPem }, { pem: partner.root.certPem }] });
    expect(readRoot(h)).toBe(caRoot);
    // The same anchors again (another meshConfig field changed): nothing new to say.
    mesh.set({
      caCertificates: [{ pem: corp.root.certPem }, { pem: partner.root.certPem }],
      trustDomain: 'cluster.local',
    });
    mesh.set({ caCertificates: [{ pem: partner.root.certPem }, { pem: 'garbage' }] });
    const chain = await issuedChain(h);
    expect(chain[chain.length - 1]).toBe(caRoot);
    const said = logs
      .lines()
      .slice(mark)
      .filter((l) => String(l['msg']).startsWith('meshConfig caCertificates'));
    expect(said.map((l) => [l['msg'], l['certificates'] ?? l['err']])).toEqual([
      [expect.stringMatching(/^meshConfig caCertificates are not served/), 2],
      [
        expect.stringMatching(/^meshConfig caCertificates are invalid and not served/),
        'meshConfig caCertificates[1].pem holds no PEM CERTIFICATE block',
      ],
    ]);
  });
});
