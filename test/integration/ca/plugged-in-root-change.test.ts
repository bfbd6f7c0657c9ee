// A plugged-in CA whose root-cert.pem changes while the server runs. Before, the new root was
// swapped in at once: workloads holding certificates from the old root were cut off from those
// renewed under the new one until every certificate renewed. Now, as istiod, a root change is
// refused unless ISTIO_MULTIROOT_MESH is on, and then only one step of a rotation with overlap at
// a time (roots added, or roots removed).

import * as fs from 'node:fs';
import * as path from 'node:path';
import { generateCaCertificate, GeneratedCa } from '../../../src/ca/signing/ca-cert-generator';
import { splitPemCertificates } from '../../../src/ca/signing/key-material';
import { PLUGGED_IN_DEBOUNCE_MS } from '../../../src/ca/roots/plugged-in';
import { eventually } from '../../support/apiserver';
import { makeCsr, opensslVerify, tempDir } from '../../support/ca/fixtures';
import { Harness, ZtunnelLikeClient, readRoot, startHarness, ztunnelCaller } from '../../support/ca/harness';
import { captureLogs } from '../../support/logs';

const YEAR = 365 * 24 * 3600 * 1000;
const settle = () => new Promise((r) => setTimeout(r, PLUGGED_IN_DEBOUNCE_MS * 5));

async function chain(name: string): Promise<{ root: GeneratedCa; intermediate: GeneratedCa }> {
  const root = await generateCaCertificate({ subject: `O=${name} Root`, keyType: 'ECDSA', ttlMs: 10 * YEAR });
  const intermediate = await generateCaCertificate({
    subject: `O=cluster.local,CN=${name} Intermediate`,
    keyType: 'ECDSA',
    ttlMs: 2 * YEAR,
    issuer: root,
    pathLength: 0,
  });
  return { root, intermediate };
}

/** istiod's layout; root-cert.pem may hold more roots than the one the chain ends with. */
function writeCaDir(dir: string, c: { root: GeneratedCa; intermediate: GeneratedCa }, rootCertPem = c.root.certPem) {
  fs.mkdirSync(dir, { recursive: true });
  // root-cert.pem last: a watcher that reads mid-way sees a chain that does not verify yet.
  fs.writeFileSync(path.join(dir, 'ca-cert.pem'), c.intermediate.certPem);
  fs.writeFileSync(path.join(dir, 'ca-key.pem'), c.intermediate.keyPem);
  fs.writeFileSync(path.join(dir, 'cert-chain.pem'), c.intermediate.certPem + c.root.certPem);
  fs.writeFileSync(path.join(dir, 'root-cert.pem'), rootCertPem);
}

async function start(caDir: string, env: Record<string, string>) {
  const h = await startHarness({ env: { ROOT_CA_DIR: caDir, ...env } });
  const token = ztunnelCaller(h);
  const issue = async (): Promise<string[]> => {
    const client = new ZtunnelLikeClient(h.port, readRoot(h));
    try {
      return (await client.createCertificate((await makeCsr()).pem, { token })).cert_chain;
    } finally {
      client.close();
    }
  };
  return { h, issue };
}

const refusals = async (h: Harness) =>
  Number(/istiod_ts_ca_reload_refused_total (\d+)/.exec(await h.metrics.metrics())?.[1] ?? 'NaN');

describe('a changed plugged-in root without ISTIO_MULTIROOT_MESH', () => {
  test('is refused with one line that names the way out; the old root keeps signing and ending every chain', async () => {
    const old = await chain('Old');
    const next = await chain('Next');
    const caDir = tempDir();
    writeCaDir(caDir, old);
    const { h, issue } = await start(caDir, {});
    const logs = captureLogs();
    try {
      writeCaDir(caDir, next);
      await settle();
      expect(h.ca.authority.current().signingCert.subject).toContain('Old Intermediate');
      expect(readRoot(h)).toBe(old.root.certPem);
      const issued = await issue();
      expect(issued[issued.length - 1]).toBe(old.root.certPem);
      expect(await refusals(h)).toBeGreaterThanOrEqual(1);
      const reasons = logs
        .lines()
        .filter((l) => l['msg'] === 'plugged-in CA files changed their root; keeping the previous CA')
        .map((l) => String(l['reason']));
      expect(reasons.length).toBeGreaterThanOrEqual(1);
      expect(reasons[0]).toMatch(
        /^root-cert\.pem changed \(added O=Next Root, removed O=Old Root\) and a root is never swapped in place: .*set ISTIO_MULTIROOT_MESH=true and add the new root beside the old one in root-cert\.pem/,
      );
      expect(reasons[0]).not.toContain('\n');
      // Adding a root beside the old one is a root change too (istiod refuses it without multi-root).
      writeCaDir(caDir, old, old.root.certPem + next.root.certPem);
      await settle();
      expect(readRoot(h)).toBe(old.root.certPem);
    } finally {
      logs.restore();
      await h.close();
    }
  });
});

describe('a plugged-in root rotation with ISTIO_MULTIROOT_MESH=true', () => {
  test('add the new root, sign under it, remove the old one: each step applies live; a swap in one step is refused', async () => {
    const old = await chain('Old');
    const next = await chain('Next');
    const stray = await chain('Stray');
    const caDir = tempDir();
    writeCaDir(caDir, old);
    const { h, issue } = await start(caDir, { ISTIO_MULTIROOT_MESH: 'true' });
    const both = old.root.certPem + next.root.certPem;
    try {
      // 1. Both roots trusted; the old intermediate still signs.
      writeCaDir(caDir, old, both);
      await eventually('both roots are served', () => readRoot(h) === both);
      let issued = await issue();
      expect(issued[issued.length - 1]).toBe(both);
      expect(issued[1]).toBe(old.intermediate.certPem);
      // A swap to an unrelated root in one step is still refused: it neither adds nor removes only.
      const before = await refusals(h);
      writeCaDir(caDir, stray, next.root.certPem + stray.root.certPem);
      await settle();
      expect(readRoot(h)).toBe(both);
      expect(await refusals(h)).toBeGreaterThan(before);
      // 2. The new intermediate signs; a peer still holding an old-root certificate is trusted.
      writeCaDir(caDir, next, both);
      await eventually('the new intermediate signs', () =>
        h.ca.authority.current().signingCert.subject.includes('Next Intermediate'),
      );
      issued = await issue();
      expect(issued[issued.length - 1]).toBe(both);
      expect(opensslVerify(next.root.certPem, issued[0]!, next.intermediate.certPem)).toContain('OK');
      // 3. The old root leaves.
      writeCaDir(caDir, next);
      await eventually('only the new root is served', () => readRoot(h) === next.root.certPem);
      issued = await issue();
      expect(splitPemCertificates(issued[issued.length - 1]!)).toEqual([next.root.certPem]);
    } finally {
      await h.close();
    }
  });
});
