// ca-crl.pem beside a plugged-in CA is distributed as ConfigMap istio-ca-crl (key ca-crl.pem) in
// every namespace, as istiod does, by the leader of the namespace controller's lock; CRLs are made
// by `openssl ca -gencrl` from the plugged-in intermediate.

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  CA_CRL_CONFIGMAP,
  CA_CRL_FILE,
  CA_CRL_POLL_MS,
  MAX_CA_CRL_BLOCKS,
  MAX_CA_CRL_BYTES,
  validateCaCrlPem,
} from '../../../src/ca/roots/ca-crl';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { syncedKubeStore } from '../../support/apiserver/synced-store';
import { logs } from '../../../src/log/logger';
import { TestApiServer, eventually } from '../../support/apiserver';
import { namespace, FAST_WATCH_TIMING } from '../../support/apiserver/fixtures';
import { tempDir } from '../../support/ca/fixtures';
import { opensslCaPair } from '../../support/ca/openssl-ca';
import { chainCrl, opensslCrl, pluggedInCaDir } from '../../support/ca/openssl-crl';
import { Harness, startHarness } from '../../support/ca/harness';

type Line = Record<string, unknown>;

function captureLogs(): Line[] {
  const lines: Line[] = [];
  logs.setDestination({ write: (line: string) => void lines.push(JSON.parse(line) as Line) });
  return lines;
}

describe('validating ca-crl.pem', () => {
  let crl: string;
  let certificate: string;
  beforeAll(() => {
    const { intermediate } = pluggedInCaDir();
    crl = opensslCrl(intermediate, tempDir());
    certificate = intermediate.certPem;
  });

  test("istiod's rule: a CRL signed by each certificate of the signing chain, else the set is refused naming the missing signers", () => {
    const { intermediate, root } = pluggedInCaDir();
    const signers = [new crypto.X509Certificate(intermediate.certPem), new crypto.X509Certificate(root.certPem)];
    const dir = tempDir();
    expect(() => validateCaCrlPem(chainCrl(intermediate, root, dir), signers)).not.toThrow();
    expect(() => validateCaCrlPem(opensslCrl(intermediate, path.join(dir, 'i2')), signers)).toThrow(
      'ca-crl.pem has no CRL signed by "O=Example Root" (one is needed for every certificate of the signing chain)',
    );
    // CRLs signed by an unrelated root and intermediate revoke nothing of this chain: refused.
    const other = opensslCaPair('Other');
    expect(() => validateCaCrlPem(chainCrl(other.intermediate, other.root, path.join(dir, 'other')), signers)).toThrow(
      'ca-crl.pem has no CRL signed by "O=cluster.local, CN=Intermediate", "O=Example Root"',
    );
  });

  test('a CRL from openssl ca -gencrl is accepted, and so is one CRL per CA of the chain', () => {
    expect(() => validateCaCrlPem(crl)).not.toThrow();
    expect(() => validateCaCrlPem(crl + crl)).not.toThrow();
  });

  test('a file without an X509 CRL block, or with another PEM block, is refused naming it', () => {
    expect(() => validateCaCrlPem('')).toThrow('ca-crl.pem holds no PEM "X509 CRL" block');
    expect(() => validateCaCrlPem('revoked: none\n')).toThrow('ca-crl.pem holds no PEM "X509 CRL" block');
    expect(() => validateCaCrlPem(crl + certificate)).toThrow(
      'block 2 of ca-crl.pem is a CERTIFICATE block, not an X509 CRL',
    );
  });

  test('a block whose DER is not a CertificateList is refused naming the block', () => {
    const notCrl = `-----BEGIN X509 CRL-----\n${Buffer.from([0x30, 0x03, 0x02, 0x01, 0x01]).toString('base64')}\n-----END X509 CRL-----\n`;
    expect(() => validateCaCrlPem(crl + notCrl)).toThrow(
      'block 2 of ca-crl.pem is not an X.509 CRL: CertificateList: expected 3 elements, got 1',
    );
    const der = Buffer.from(crl.replace(/-----[A-Z0-9 ]+-----|\s/g, ''), 'base64');
    const truncated = `-----BEGIN X509 CRL-----\n${der.subarray(0, der.length - 10).toString('base64')}\n-----END X509 CRL-----\n`;
    expect(() => validateCaCrlPem(truncated)).toThrow(
      'block 1 of ca-crl.pem is not an X.509 CRL: element at byte 0 runs past its container',
    );
  });

  test(`more than MAX_CA_CRL_BLOCKS (${MAX_CA_CRL_BLOCKS}) blocks, or more than MAX_CA_CRL_BYTES (${MAX_CA_CRL_BYTES}), are refused`, () => {
    expect(() => validateCaCrlPem(crl.repeat(MAX_CA_CRL_BLOCKS))).not.toThrow();
    expect(() => validateCaCrlPem(crl.repeat(MAX_CA_CRL_BLOCKS + 1))).toThrow(
      `ca-crl.pem has more than ${MAX_CA_CRL_BLOCKS} PEM blocks`,
    );
    expect(() => validateCaCrlPem(crl + ' '.repeat(MAX_CA_CRL_BYTES))).toThrow(
      `ca-crl.pem is larger than ${MAX_CA_CRL_BYTES} bytes, which a ConfigMap cannot hold`,
    );
  });
});

describe('ca-crl.pem in local mode', () => {
  test('is written next to root-cert.pem in --stateDir, and rewritten when the CRL changes', async () => {
    const { dir, intermediate, root } = pluggedInCaDir();
    const crlDir = tempDir();
    const first = chainCrl(intermediate, root, crlDir);
    fs.writeFileSync(path.join(dir, CA_CRL_FILE), first);
    const h = await startHarness({ env: { ROOT_CA_DIR: dir } });
    try {
      const published = () => fs.readFileSync(path.join(h.stateDir, CA_CRL_FILE), 'utf8');
      expect(published()).toBe(first);
      const second = chainCrl(intermediate, root, crlDir);
      fs.writeFileSync(path.join(dir, CA_CRL_FILE), second);
      await eventually('the new CRL is in the state dir', () => published() === second, CA_CRL_POLL_MS + 5_000);
    } finally {
      await h.close();
    }
  });
});

describe('ca-crl.pem that lacks a signer of the chain (local mode)', () => {
  test('is not published, and says which CA has no CRL', async () => {
    const { dir, intermediate } = pluggedInCaDir();
    fs.writeFileSync(path.join(dir, CA_CRL_FILE), opensslCrl(intermediate, tempDir()));
    const lines = captureLogs();
    const h = await startHarness({ env: { ROOT_CA_DIR: dir } });
    try {
      expect(fs.existsSync(path.join(h.stateDir, CA_CRL_FILE))).toBe(false);
      expect(lines.some((l) => String(l['reason']).includes('has no CRL signed by "O=Example Root"'))).toBe(true);
    } finally {
      await h.close();
    }
  });
});

describe('ConfigMap istio-ca-crl in Kubernetes mode (test API server)', () => {
  let api: TestApiServer;
  let kubeConfig: KubeConfig;
  const running: { close(): Promise<void> }[] = [];

  const crlIn = (ns: string) =>
    (api.get('v1', 'ConfigMap', ns, CA_CRL_CONFIGMAP)?.['data'] as Record<string, string> | undefined)?.[CA_CRL_FILE];
  /** A CA on `dir`, with its own store of Namespaces fed from the API server (as a replica has). */
  const start = async (dir: string, leader?: Harness['ctx']['leader'], env: Record<string, string> = {}) => {
    const { store, source } = await syncedKubeStore(kubeConfig, { kinds: ['Namespace'], timing: FAST_WATCH_TIMING });
    running.push({ close: () => source.stop() });
    const h = await startHarness({
      mode: 'kubernetes',
      store,
      env: { ROOT_CA_DIR: dir, ...env },
      deps: { kubeConfig, rootCertResyncMs: 200 },
      ...(leader ? { leader } : {}),
    });
    running.push(h);
    return h;
  };

  beforeAll(async () => {
    api = await TestApiServer.start();
    for (const ns of ['istio-system', 'default', 'kube-system', 'kube-public']) api.put(namespace(ns));
    kubeConfig = loadKubeConfig(api.writeKubeconfig());
  });

  afterEach(async () => {
    for (const r of running.splice(0).reverse()) await r.close();
    logs.setDestination(process.stderr);
    for (const ns of ['istio-system', 'default', 'kube-system', 'kube-public', 'new-ns'])
      if (crlIn(ns) !== undefined) api.delete('v1', 'ConfigMap', ns, CA_CRL_CONFIGMAP);
  });

  afterAll(async () => {
    await api.close();
  });

  test('the CRL is in every namespace but kube-public, labelled like the root; a changed CRL replaces it; a new namespace gets it', async () => {
    const { dir, intermediate, root } = pluggedInCaDir();
    const crlDir = tempDir();
    const first = chainCrl(intermediate, root, crlDir);
    fs.writeFileSync(path.join(dir, CA_CRL_FILE), first);
    await start(dir);
    await eventually('istio-ca-crl in every namespace', () =>
      ['istio-system', 'default', 'kube-system'].every((ns) => crlIn(ns) === first),
    );
    expect(api.get('v1', 'ConfigMap', 'kube-public', CA_CRL_CONFIGMAP)).toBeUndefined();
    expect(api.get('v1', 'ConfigMap', 'default', CA_CRL_CONFIGMAP)!.metadata.labels).toMatchObject({
      'istio.io/config': 'true',
    });

    const second = chainCrl(intermediate, root, crlDir);
    expect(second).not.toBe(first);
    fs.writeFileSync(path.join(dir, CA_CRL_FILE), second);
    await eventually(
      'the changed CRL replaces the old one everywhere',
      () => ['istio-system', 'default', 'kube-system'].every((ns) => crlIn(ns) === second),
      CA_CRL_POLL_MS + 5_000,
    );

    api.put(namespace('new-ns'));
    await eventually('a new namespace gets the CRL', () => crlIn('new-ns') === second);
    api.delete('v1', 'Namespace', '', 'new-ns');
  });

  test('PILOT_CRL_CONFIGMAP names the ConfigMap the CRL is published as', async () => {
    const { dir, intermediate, root } = pluggedInCaDir();
    const crl = chainCrl(intermediate, root, tempDir());
    fs.writeFileSync(path.join(dir, CA_CRL_FILE), crl);
    const named = (ns: string) =>
      (api.get('v1', 'ConfigMap', ns, 'mesh-crl')?.['data'] as Record<string, string> | undefined)?.[CA_CRL_FILE];
    await start(dir, undefined, { PILOT_CRL_CONFIGMAP: 'mesh-crl' });
    await eventually('mesh-crl in every namespace', () => ['istio-system', 'default'].every((ns) => named(ns) === crl));
    expect(crlIn('default')).toBeUndefined();
    for (const ns of ['istio-system', 'default', 'kube-system']) api.delete('v1', 'ConfigMap', ns, 'mesh-crl');
  });

  test('PILOT_ENABLE_CA_CRL=false publishes no CRL, while the root still is', async () => {
    const { dir, intermediate, root } = pluggedInCaDir();
    fs.writeFileSync(path.join(dir, CA_CRL_FILE), chainCrl(intermediate, root, tempDir()));
    const h = await start(dir, undefined, { PILOT_ENABLE_CA_CRL: 'false' });
    const rootIn = (ns: string) =>
      (api.get('v1', 'ConfigMap', ns, 'istio-ca-root-cert')?.['data'] as Record<string, string> | undefined)?.[
        'root-cert.pem'
      ];
    await eventually('the root is distributed', () => rootIn('default') === h.ca.rootCertPem());
    // Two more resync periods: the CRL publisher would have had every chance to write.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(['istio-system', 'default', 'kube-system'].map(crlIn)).toEqual([undefined, undefined, undefined]);
  });

  test('without ca-crl.pem no istio-ca-crl ConfigMap is written, while the root still is', async () => {
    const { dir } = pluggedInCaDir();
    const h = await start(dir);
    const rootIn = (ns: string) =>
      (api.get('v1', 'ConfigMap', ns, 'istio-ca-root-cert')?.['data'] as Record<string, string> | undefined)?.[
        'root-cert.pem'
      ];
    await eventually('the root is distributed', () => rootIn('default') === h.ca.rootCertPem());
    // Two more resync periods: the CRL publisher has had every chance to write.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(['istio-system', 'default', 'kube-system'].map(crlIn)).toEqual([undefined, undefined, undefined]);
  });

  test('a CRL that is not valid is logged and the last good one stays published', async () => {
    const { dir, intermediate, root } = pluggedInCaDir();
    const good = chainCrl(intermediate, root, tempDir());
    fs.writeFileSync(path.join(dir, CA_CRL_FILE), good);
    await start(dir);
    await eventually('the good CRL is published', () => crlIn('default') === good);
    const lines = captureLogs();
    fs.writeFileSync(path.join(dir, CA_CRL_FILE), '-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n');
    await eventually(
      'the bad CRL is logged',
      () => lines.some((l) => String(l['msg']).includes('ca-crl.pem is not usable')),
      CA_CRL_POLL_MS + 5_000,
    );
    const refusal = lines.find((l) => String(l['msg']).includes('ca-crl.pem is not usable'));
    expect(refusal?.['level']).toBe('error');
    expect(String(refusal?.['reason'])).toContain('block 1 of ca-crl.pem is not an X.509 CRL');
    fs.rmSync(path.join(dir, CA_CRL_FILE));
    await eventually(
      'the removal is logged',
      () => lines.some((l) => l['reason'] === 'ca-crl.pem was removed'),
      CA_CRL_POLL_MS + 5_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(['istio-system', 'default', 'kube-system'].map(crlIn)).toEqual([good, good, good]);
  });

  test('a replica that does not lead the namespace controller lock writes no istio-ca-crl', async () => {
    const { dir, intermediate, root } = pluggedInCaDir();
    fs.writeFileSync(path.join(dir, CA_CRL_FILE), chainCrl(intermediate, root, tempDir()));
    const leases: string[] = [];
    const before = api.requests.length;
    await start(dir, { runWhileLeader: (lease) => void leases.push(lease) });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(leases).toEqual(['istio-namespace-controller-election', 'istio-namespace-controller-election']);
    expect(api.requests.slice(before).filter((r) => r.resource === 'configmaps')).toEqual([]);
    expect(['istio-system', 'default', 'kube-system'].map(crlIn)).toEqual([undefined, undefined, undefined]);
  });
});
