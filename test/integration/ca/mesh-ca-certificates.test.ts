// meshConfig caCertificates reach the served trust bundle as meshConfig changes: root-cert.pem (the
// local-mode root distribution) and the roots at the end of every CreateCertificate chain.

import { loadOrCreateTokenKey, signLocalToken } from '../../../src/security/local-jwt';
import { splitPemCertificates } from '../../../src/ca/key-material';
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

describe('meshConfig caCertificates in the served trust bundle (local mode)', () => {
  const corp = opensslCaPair('Corp');
  const partner = opensslCaPair('Partner');
  const mesh = mutableMesh({ caCertificates: [{ pem: corp.root.certPem }] });
  let h: Harness;
  let caRoot: string;

  beforeAll(async () => {
    h = await startHarness({ mesh });
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
  afterAll(() => h.close());

  test('anchors configured at start are in root-cert.pem and end every issued chain, after the CA root', async () => {
    expect(readRoot(h)).toBe(caRoot + splitPemCertificates(corp.root.certPem).join(''));
    const key = loadOrCreateTokenKey(h.stateDir);
    const client = new ZtunnelLikeClient(h.port, readRoot(h));
    try {
      const subject = { namespace: 'default', serviceAccount: 'sleep', podName: 'sleep-1', podUid: 'uid-sleep' };
      const res = await client.createCertificate((await makeCsr()).pem, {
        token: signLocalToken(key, subject, ['istio-ca'], 600),
      });
      expect(res.cert_chain[res.cert_chain.length - 1]).toBe(readRoot(h));
    } finally {
      client.close();
    }
  });

  test('a meshConfig change updates the bundle; removing the anchors removes them', () => {
    mesh.set({ caCertificates: [{ pem: corp.root.certPem }, { pem: partner.root.certPem }] });
    expect(splitPemCertificates(readRoot(h))).toEqual([
      ...splitPemCertificates(caRoot),
      ...splitPemCertificates(corp.root.certPem),
      ...splitPemCertificates(partner.root.certPem),
    ]);
    mesh.set({});
    expect(readRoot(h)).toBe(caRoot);
  });

  test('an invalid entry is logged naming it, and the bundle in use stays', () => {
    mesh.set({ caCertificates: [{ pem: partner.root.certPem }] });
    const before = readRoot(h);
    const logs = captureLogs();
    try {
      mesh.set({ caCertificates: [{ pem: partner.root.certPem }, { pem: 'garbage' }] });
      const errors = logs.lines().filter((l) => l['level'] === 'error');
      expect(errors.map((l) => l['err'])).toEqual(['meshConfig caCertificates[1].pem holds no PEM CERTIFICATE block']);
    } finally {
      logs.restore();
    }
    expect(readRoot(h)).toBe(before);
  });
});
