// Part 2: upstream istioctl against istiod-ts, with a real ztunnel connected. istioctl speaks
// State-of-the-World ADS for istio.io/debug/syncz and authenticates with a client certificate from
// a cert dir (root-cert.pem, cert-chain.pem, key.pem): istiod-ts, like istiod, answers debug types
// only to an authenticated caller of its own namespace, so the harness gets istioctl the identity
// spiffe://cluster.local/ns/istio-system/sa/default from our CA, with a key openssl made here.
// istioctl is given a kubeconfig whose server refuses connections, so it can reach no cluster.

import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ISTIOD_POD_NAME, LocalControlPlane } from './control-plane';
import { REPO_ROOT } from '../test/support/cli';
import { freePort, freePorts, SERVER_NAME } from './istiod-ts';
import { createCertificate } from '../src/cli/xds-cert';
import type { Report } from './report';
import { Ztunnel } from './ztunnel';

const PART = 'istioctl';
const SCENARIO = 'local-demo';
const ISTIOCTL_TIMEOUT_MS = 60_000;
/** istioctl's own identity when it asks istiod: the istio namespace's default service account. */
const ISTIOCTL_IDENTITY = 'spiffe://cluster.local/ns/istio-system/sa/default';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function istioctl(bin: string, args: string[], kubeconfig: string): Run {
  const r = spawnSync(bin, [...args, '--kubeconfig', kubeconfig], {
    encoding: 'utf8',
    timeout: ISTIOCTL_TIMEOUT_MS,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: path.dirname(kubeconfig) },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const explain = (r: Run) => `exit ${r.code ?? 'signal'}: ${(r.stderr || r.stdout).trim().slice(0, 600)}`;

export async function istioctlPart(report: Report, bin: string, ztunnelBin: string, scratch: string): Promise<void> {
  const dir = path.join(scratch, 'istioctl');
  mkdirSync(dir, { recursive: true });
  const config = path.join(dir, 'demo');
  cpSync(path.join(REPO_ROOT, 'examples/demo'), config, { recursive: true });
  const plane = new LocalControlPlane(config, path.join(dir, 'state'), await freePorts());
  const pod = {
    name: 'ztunnel-7k2xq',
    namespace: 'istio-system',
    serviceAccount: 'ztunnel',
    node: 'node-a',
    ip: '10.244.1.2',
  };
  await plane.start();
  const zt = new Ztunnel({
    bin: ztunnelBin,
    workDir: path.join(dir, 'ztunnel'),
    securePort: plane.ports.secure,
    pod,
    rootCert: await plane.rootCert(),
    token: plane.token(pod),
    adminPort: await freePort(),
    statsPort: await freePort(),
  });
  try {
    await zt.start();
    const deadline = Date.now() + 30_000;
    while (zt.acks.size < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));

    // A kubeconfig whose API server refuses every connection: nothing may depend on a cluster.
    const kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: none, cluster: {server: "http://127.0.0.1:${await freePort()}"}}]`,
        'contexts: [{name: none, context: {cluster: none, user: none}}]',
        'current-context: none',
        'users: [{name: none, user: {token: none}}]',
        '',
      ].join('\n'),
    );
    const certDir = path.join(dir, 'certs');
    await makeCertDir(certDir, plane, await plane.rootCert());
    const xds = ['--xds-address', `127.0.0.1:${plane.ports.secure}`, '--cert-dir', certDir, '--authority', SERVER_NAME];

    await report.attempt(PART, SCENARIO, 'x version answers with the control plane version', () => {
      const r = istioctl(bin, ['x', 'version', ...xds], kubeconfig);
      const cp = /^control plane version:\s*(.+)$/m.exec(r.stdout)?.[1];
      const dp = /^data plane version:\s*(.+)$/m.exec(r.stdout)?.[1];
      if (r.code !== 0 || !cp || !dp) throw new Error(explain(r));
      return Promise.resolve(`control plane version: ${cp}; data plane version: ${dp}`);
    });

    await report.attempt(PART, SCENARIO, 'proxy-status lists the connected ztunnel as SYNCED', () => {
      const table = istioctl(bin, ['proxy-status', '-r', 'default', ...xds], kubeconfig);
      const json = istioctl(bin, ['proxy-status', '-r', 'default', '-o', 'json', ...xds], kubeconfig);
      if (table.code !== 0 || json.code !== 0) throw new Error(explain(table.code !== 0 ? table : json));
      // As istiod lists a ztunnel: NAME pod.namespace, its CLUSTER, the ISTIOD pod it is connected to,
      // VERSION (empty: ztunnel sends no ISTIO_VERSION) and its two types, Authorization and Address.
      const rows = table.stdout
        .split('\n')
        .slice(1)
        .filter((l) => l.trim() !== '')
        .map((l) => l.trim().split(/\s{2,}/));
      const expected = [`${pod.name}.${pod.namespace}`, 'Kubernetes', ISTIOD_POD_NAME, '2 (WADS,WDS)'];
      if (rows.length !== 1 || JSON.stringify(rows[0]) !== JSON.stringify(expected))
        throw new Error(`expected one row ${JSON.stringify(expected)}:\n${table.stdout}`);
      const statuses = syncStatuses(json.stdout);
      const notSynced = statuses.filter((s) => s.status !== 'SYNCED');
      if (statuses.length !== 2 || notSynced.length > 0) throw new Error(`config statuses ${JSON.stringify(statuses)}`);
      return Promise.resolve(
        `${expected.join(' | ')}; -o json: ${statuses.map((s) => `${s.type} ${s.status}`).join(', ')}`,
      );
    });

    await report.attempt(PART, SCENARIO, "ztunnel-config all -f renders the ztunnel's config_dump", async () => {
      const dumpFile = path.join(dir, 'config_dump.json');
      const dump = (await zt.configDump()) as {
        workloads?: { name?: string }[];
        services?: unknown[];
        policies?: { name?: string }[];
      };
      writeFileSync(dumpFile, JSON.stringify(dump));
      const r = istioctl(bin, ['ztunnel-config', 'all', '-f', dumpFile], kubeconfig);
      if (r.code !== 0) throw new Error(explain(r));
      const missing = [
        ...(dump.workloads ?? []).map((w) => w.name ?? ''),
        ...(dump.policies ?? []).map((p) => p.name ?? ''),
      ].filter((name) => !r.stdout.includes(name));
      if (missing.length > 0) throw new Error(`not rendered: ${missing.join(', ')}\n${r.stdout}`);
      return `${dump.workloads?.length ?? 0} workloads, ${dump.services?.length ?? 0} services and ${dump.policies?.length ?? 0} policies rendered in ${r.stdout.split('\n').length} lines`;
    });
  } finally {
    await zt.stop();
    await plane.close();
  }
}

function syncStatuses(json: string): { node: string; type: string; status: string }[] {
  const parsed = JSON.parse(json) as unknown;
  const out: { node: string; type: string; status: string }[] = [];
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (Array.isArray(o['genericXdsConfigs'])) {
        const node = (o['node'] as { id?: string } | undefined)?.id ?? '';
        const text = (x: unknown) => (typeof x === 'string' ? x : '');
        for (const c of o['genericXdsConfigs'] as Record<string, unknown>[])
          out.push({ node, type: text(c['typeUrl']), status: text(c['configStatus']) });
      } else Object.values(o).forEach(visit);
    }
  };
  visit(parsed);
  return out;
}

/** root-cert.pem, and istioctl's identity as a key openssl makes here and a chain our CA signs. */
async function makeCertDir(dir: string, plane: LocalControlPlane, root: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'root-cert.pem'), root);
  const key = path.join(dir, 'key.pem');
  execFileSync('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
  chmodSync(key, 0o600);
  const csr = execFileSync(
    'openssl',
    ['req', '-new', '-key', key, '-subj', '/', '-addext', `subjectAltName=critical,URI:${ISTIOCTL_IDENTITY}`],
    { encoding: 'utf8' },
  );
  const token = plane.token({
    name: 'istioctl',
    namespace: 'istio-system',
    serviceAccount: 'default',
    node: '',
    ip: '',
  });
  const chain = await createCertificate({
    address: `127.0.0.1:${plane.ports.secure}`,
    rootCertPem: root,
    serverName: SERVER_NAME,
    token,
    csr,
    validitySeconds: 3600,
    timeoutMs: 15_000,
  });
  writeFileSync(path.join(dir, 'cert-chain.pem'), chain.map((c) => `${c.trim()}\n`).join(''));
  if (!readFileSync(path.join(dir, 'cert-chain.pem'), 'utf8').includes('BEGIN CERTIFICATE'))
    throw new Error('the CA returned no certificate for istioctl');
}
