// A self-signed root rotation at second scale, end to end in local mode: leaves are requested over
// CreateCertificate before, during and after the rotation, every trust bundle the CA distributes
// (root-cert.pem, and the roots ending each chain) is recorded with the time it was current, and
// `openssl verify -attime` checks every leaf against every bundle a peer could hold while it was valid.

import * as crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadOrCreateTokenKey, signLocalToken, TokenSubject } from '../../../src/security/local-jwt';
import { splitPemCertificates } from '../../../src/ca/signing/key-material';
import { makeCsr, tempDir } from '../../support/ca/fixtures';
import { Harness, ZtunnelLikeClient, readRoot, startHarness } from '../../support/ca/harness';
import { captureLogs } from '../../support/logs';

/**
 * Root TTL 6 s with a 50 % grace period: the rotation begins about 3 s after start, signing switches
 * 1 s later, and the old root leaves the bundle after the 2 s leaf TTL. The second root's own
 * rotation begins about 3 s after it was made, so the run crosses more than one rotation.
 */
const ROTATION_ENV = {
  CITADEL_SELF_SIGNED_CA_KEY_TYPE: 'ECDSA',
  CITADEL_SELF_SIGNED_CA_CERT_TTL: '6s',
  CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: '50',
  CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: '200ms',
  CITADEL_SELF_SIGNED_ROOT_CERT_DISTRIBUTION_DELAY: '1s',
  MAX_WORKLOAD_CERT_TTL: '2s',
  DEFAULT_WORKLOAD_CERT_TTL: '2s',
};
const RUN_MS = 9_000;
/**
 * How long after a bundle is replaced a slow peer may still hold it (kubelet's ConfigMap refresh,
 * in miniature). It is below the 1 s distribution delay, which is the point of that delay: a
 * leaf of the new root must still verify for a peer that has not caught up yet.
 */
const PROPAGATION_MS = 500;
const ISSUE_EVERY_MS = 350;

const SLEEP: TokenSubject = { namespace: 'default', serviceAccount: 'sleep', podName: 'sleep-1', podUid: 'uid-sleep' };

interface Bundle {
  pem: string;
  from: number;
  to: number;
}

interface Leaf {
  pem: string;
  issuedAt: number;
  notAfter: number;
  issuer: string;
}

/** `openssl verify -attime` of a leaf against a bundle: true when openssl says OK. */
function verifiesAt(bundlePem: string, leafPem: string, atSeconds: number, dir: string): boolean {
  fs.writeFileSync(path.join(dir, 'bundle.pem'), bundlePem);
  fs.writeFileSync(path.join(dir, 'leaf.pem'), leafPem);
  try {
    const out = execFileSync(
      'openssl',
      ['verify', '-attime', String(atSeconds), '-CAfile', path.join(dir, 'bundle.pem'), path.join(dir, 'leaf.pem')],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    ).toString();
    return out.includes(': OK');
  } catch {
    return false;
  }
}

describe('self-signed root rotation at second scale (local mode)', () => {
  let h: Harness;
  let logs: ReturnType<typeof captureLogs>;
  const bundles: Bundle[] = [];
  const leaves: Leaf[] = [];
  const responseBundles = new Set<string>();
  const connectFailures: string[] = [];

  beforeAll(async () => {
    logs = captureLogs();
    h = await startHarness({ env: ROTATION_ENV });
    h.store.upsert('Pod', [
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'sleep-1', namespace: 'default', uid: 'uid-sleep' },
        spec: { serviceAccountName: 'sleep', nodeName: 'node-a' },
        status: { phase: 'Running' },
      },
    ]);
    const key = loadOrCreateTokenKey(h.stateDir);
    const started = Date.now();
    bundles.push({ pem: readRoot(h), from: started, to: Infinity });
    // What a peer reading root-cert.pem holds, from the moment it is written.
    h.ca.authority.onChange(() => {
      const pem = readRoot(h);
      const last = bundles[bundles.length - 1];
      if (last?.pem === pem) return;
      const now = Date.now();
      if (last) last.to = now;
      bundles.push({ pem, from: now, to: Infinity });
    });
    while (Date.now() - started < RUN_MS) {
      // A fresh client per call with the bundle of the moment, as a peer that re-reads it would.
      const client = new ZtunnelLikeClient(h.port, readRoot(h));
      try {
        const csr = await makeCsr(`spiffe://cluster.local/ns/default/sa/sleep`);
        const issuedAt = Date.now();
        const res = await client.createCertificate(csr.pem, {
          token: signLocalToken(key, SLEEP, ['istio-ca'], 600),
          validitySeconds: 2,
        });
        const [leafPem] = res.cert_chain;
        if (leafPem === undefined) throw new Error('empty chain');
        responseBundles.add(res.cert_chain[res.cert_chain.length - 1] ?? '');
        const leaf = new crypto.X509Certificate(leafPem);
        leaves.push({ pem: leafPem, issuedAt, notAfter: new Date(leaf.validTo).getTime(), issuer: leaf.issuer });
      } catch (err) {
        connectFailures.push((err as Error).message);
      } finally {
        client.close();
      }
      await new Promise((r) => setTimeout(r, ISSUE_EVERY_MS));
    }
    const last = bundles[bundles.length - 1];
    if (last) last.to = Date.now();
  }, 60_000);

  afterAll(async () => {
    logs.restore();
    await h.close();
  });

  test('the run crossed a rotation: two roots distributed together, and leaves signed by more than one root', () => {
    expect(connectFailures).toEqual([]);
    expect(bundles.some((b) => splitPemCertificates(b.pem).length === 2)).toBe(true);
    const signers = new Set(leaves.map((l) => l.issuer + '|' + leafIssuerKey(l.pem)));
    expect(signers.size).toBeGreaterThanOrEqual(2);
    const phases = logs
      .lines()
      .map((l) => String(l['msg']))
      .filter((m) => m.startsWith('root rotation:'));
    expect(phases.slice(0, 3)).toEqual([
      'root rotation: new root distributed; the old root still signs',
      'root rotation: signing switched to the new root; the old root stays trusted',
      'root rotation: old root dropped from the trust bundle; rotation finished',
    ]);
  });

  test('the roots ending each CreateCertificate chain are the bundle root-cert.pem held at some moment', () => {
    const distributed = new Set(bundles.map((b) => b.pem));
    for (const pem of responseBundles) expect(distributed.has(pem)).toBe(true);
  });

  test('every leaf verifies with openssl against every bundle a peer may hold while the leaf is valid', () => {
    const dir = tempDir('istiod-ts-rotation-verify-');
    const failures: string[] = [];
    let checked = 0;
    try {
      for (const [i, leaf] of leaves.entries()) {
        for (const [j, bundle] of bundles.entries()) {
          const lo = Math.max(leaf.issuedAt, bundle.from);
          const hi = Math.min(leaf.notAfter, bundle.to + PROPAGATION_MS);
          if (lo >= hi) continue;
          // -attime takes whole seconds; every certificate here is back-dated, so the start of
          // the second is inside the window for everything but notAfter, which is after `hi`.
          const at = Math.floor((lo + hi) / 2 / 1000);
          checked++;
          if (!verifiesAt(bundle.pem, leaf.pem, at, dir)) failures.push(`leaf ${i} against bundle ${j} at ${at}`);
        }
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(leaves.length);
  });

  test('openssl does tell the roots apart: the first leaf does not verify against the last bundle', () => {
    const first = leaves[0];
    const last = bundles[bundles.length - 1];
    if (!first || !last) throw new Error('the run recorded no leaf or no bundle');
    expect(last.pem).not.toContain(splitPemCertificates(bundles[0]?.pem ?? '')[0] ?? 'no first root');
    const dir = tempDir('istiod-ts-rotation-verify-');
    try {
      expect(verifiesAt(last.pem, first.pem, Math.floor(first.issuedAt / 1000), dir)).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The leaf's AuthorityKeyIdentifier: the roots share a subject, so this is what tells them apart. */
function leafIssuerKey(leafPem: string): string {
  const text = execFileSync('openssl', ['x509', '-noout', '-ext', 'authorityKeyIdentifier'], {
    input: leafPem,
  }).toString();
  return text.replace(/\s+/g, ' ').trim();
}
