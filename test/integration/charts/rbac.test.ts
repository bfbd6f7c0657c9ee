// The chart's RBAC is exactly what the code uses. istiod-ts runs as the chart runs it (the
// rendered container args and environment) against the test API server, which records every
// request as (verb, group, resource, namespace). A ztunnel then asks for a certificate, and a
// root ConfigMap has drifted. Each recorded request must be granted by the rendered ClusterRole
// or (in istiod's namespace) Role, and every permission the chart grants must have been used.
// The process is the built CLI (`npm test` builds dist/ first), so whatever serve wires in
// Kubernetes mode is covered without this test listing components. The webhook configuration
// controller also runs here in-process, against the same API server, so its calls are checked
// whether or not serve has wired it yet.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT_CERT_KEY } from '../../../src/ca/roots/root-cert-publisher';
import { CA_SECRET_NAME } from '../../../src/ca/roots/kube-ca-secret-store';
import { LEASE_NAMES } from '../../../src/store/kube/leader';
import { DEFAULT_TAG_WEBHOOK } from '../../../src/store/kube/leader-default-revision';
import { CA_CRL_CONFIGMAP, CA_CRL_FILE } from '../../../src/ca/roots/ca-crl';
import { KubeApiError, KubeClient, type KubeRequest } from '../../../src/store/kube/client';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { WebhookConfigController } from '../../../src/webhook/config-controller';
import { webhookRejectsInvalidConfig } from '../../../src/webhook/readiness-probe';
import type { ServingCertSource } from '../../../src/server/context';
import { TestApiServer, eventually, serviceAccountIdentity, type RecordedRequest } from '../../support/apiserver';
import { namespace } from '../../support/apiserver/fixtures';
import { ServerProcess, waitForStatus } from '../../support/cli';
import { findObject, helmTemplate, type Rendered } from '../../support/helm';
import { makeCsr } from '../../support/ca/fixtures';
import { chainCrl, pluggedInCaDir } from '../../support/ca/openssl-crl';
import { ZtunnelLikeClient } from '../../support/ca/harness';
import { deploymentOf, grants, grantsOf, resolvedEnv, rulesOf, ungranted, unusedGrants, type PolicyRule } from './istiod-objects';

const NS = 'istio-system';
/** The base chart's validator, which the default revision's istiod-ts patches beside its own. */
const DEFAULT_VALIDATOR = 'istiod-default-validator';
/**
 * Names granted whose code path the first run does not take: the CRL ConfigMap is written only
 * beside a plugged-in CA with ca-crl.pem, and that run uses the self-signed CA. The plugged-in
 * run at the end of this file writes it.
 */
const NOT_EXERCISED_HERE = new Set([CA_CRL_CONFIGMAP]);
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
const ROOT_CONFIGMAP = 'istio-ca-root-cert';

const describeRequest = (r: RecordedRequest) => `${r.verb} ${r.group || 'core'}/${r.resource}${r.subresource ? `/${r.subresource}` : ''}${r.name ? ` ${r.name}` : ''}${r.namespace ? ` in ${r.namespace}` : ' (cluster-wide)'}`;

/**
 * The webhook's readiness probe dry-run creates an Istio Gateway. The test API server does not
 * serve that kind, so the call never reaches its request log; it is captured here from the probe
 * itself and recorded the way the server would.
 */
async function probeCalls(): Promise<RecordedRequest[]> {
  const calls: KubeRequest[] = [];
  const client = {
    call: (req: KubeRequest) => {
      calls.push(req);
      return Promise.reject(new KubeApiError(404, 'NotFound', 'the server could not find the requested resource'));
    },
  } as unknown as KubeClient;
  await webhookRejectsInvalidConfig(client, NS, 'default');
  return calls.map((c) => {
    const m = /^\/apis\/([^/]+)\/([^/]+)\/namespaces\/([^/]+)\/([^/]+)$/.exec(c.path);
    if (!m || c.method !== 'POST') throw new Error(`unexpected probe call ${c.method} ${c.path}`);
    return { verb: 'create', group: m[1]!, version: m[2]!, namespace: m[3]!, resource: m[4]!, dryRun: c.query?.['dryRun'] === 'All', userAgent: 'readiness-probe' };
  });
}

/**
 * The chart's container run against the test API server, with only the addresses, the cluster and
 * the host paths changed for a test machine (no fixed ports, no /etc/cacerts or mesh file from the
 * host): the same flags and the same environment, with `env` over them.
 */
function startChartServer(
  objects: readonly Rendered[],
  kubeconfig: string,
  dir: string,
  env: Record<string, string>,
): ServerProcess {
  const { container } = deploymentOf(objects);
  const [command, ...chartFlags] = container.args;
  return ServerProcess.start(
    [
      command!,
      ...chartFlags,
      '--kubeconfig', kubeconfig,
      '--meshConfig', path.join(dir, 'no-mesh-file'),
      ...['grpcAddr', 'secureGRPCAddr', 'httpsAddr', 'monitoringAddr', 'httpAddr'].flatMap((f) => [`--${f}`, '127.0.0.1:0']),
    ],
    { ...resolvedEnv(container, NS, 'istiod-0'), ...env },
  );
}

describe('chart RBAC against the calls the code makes', () => {
  const objects = helmTemplate('istiod', { namespace: NS });
  const clusterRules = rulesOf(objects, 'ClusterRole');
  const roleRules = rulesOf(objects, 'Role');

  let api: TestApiServer;
  let requests: RecordedRequest[];
  let exitCode: number | null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-rbac-'));

  beforeAll(async () => {
    api = await TestApiServer.start();
    for (const ns of [NS, 'default', 'kube-system']) api.put(namespace(ns));
    api.put({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' } });
    for (const [ns, name, sa] of [[NS, 'ztunnel-a', 'ztunnel'], ['default', 'sleep-1', 'sleep']] as const) {
      api.put({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns }, spec: { serviceAccountName: sa, nodeName: 'node-a', containers: [{ name: 'c', image: 'x' }] }, status: { phase: 'Running', podIP: '10.0.0.1' } });
    }
    // The chart's validator and the base chart's default validator exist, as after `helm install`
    // of both, for istiod-ts to patch.
    api.put(findObject(objects, 'ValidatingWebhookConfiguration'));
    api.put(findObject(helmTemplate('base', { namespace: NS }), 'ValidatingWebhookConfiguration', DEFAULT_VALIDATOR));
    // A drifted root ConfigMap, so root distribution both creates and updates.
    api.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ROOT_CONFIGMAP, namespace: 'default' }, data: { [ROOT_CERT_KEY]: 'stale' } });
    // A ServiceEntry without addresses, for the IP auto-allocation controller to give VIPs.
    api.put({ apiVersion: 'networking.istio.io/v1', kind: 'ServiceEntry', metadata: { name: 'external-api', namespace: 'default' }, spec: { hosts: ['api.example.com'], resolution: 'DNS', ports: [{ number: 443, name: 'tls', protocol: 'TLS' }] } });
    // Objects that get ambient status conditions: a policy, and a Service, a ServiceEntry and a WorkloadEntry naming a waypoint.
    api.put({ apiVersion: 'security.istio.io/v1', kind: 'AuthorizationPolicy', metadata: { name: 'allow', namespace: 'default' }, spec: {} });
    api.put({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'app', namespace: 'default', labels: { 'istio.io/use-waypoint': 'wp' } }, spec: { clusterIP: '10.96.0.10', ports: [{ port: 80 }] } });
    api.put({ apiVersion: 'networking.istio.io/v1', kind: 'ServiceEntry', metadata: { name: 'ext', namespace: 'default', labels: { 'istio.io/use-waypoint': 'wp' } }, spec: { hosts: ['ext.example'], ports: [{ number: 443, name: 'tls', protocol: 'TLS' }], resolution: 'DNS' } });
    api.put({ apiVersion: 'networking.istio.io/v1', kind: 'WorkloadEntry', metadata: { name: 'vm', namespace: 'default', labels: { 'istio.io/use-waypoint': 'wp' } }, spec: { address: '10.0.0.9' } });

    // A grace period of 100 % puts the new root in it at once: the first rotation check begins a
    // rotation, which updates istio-ca-secret (its 24 h distribution delay ends nothing here).
    const kubeconfig = api.writeKubeconfig();
    const server = startChartServer(objects, kubeconfig, dir, {
      ROOT_CA_DIR: path.join(dir, 'no-cacerts'),
      CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: '100',
    });
    try {
      await waitForStatus(`http://127.0.0.1:${await server.port('http')}/ready`, 200, 30_000);
      const rootIn = (ns: string) => (api.get('v1', 'ConfigMap', ns, ROOT_CONFIGMAP)?.['data'] as Record<string, string> | undefined)?.[ROOT_CERT_KEY];
      await eventually('the root reaches every namespace', () => [NS, 'default', 'kube-system'].every((ns) => rootIn(ns)?.includes('BEGIN CERTIFICATE')), 20_000);
      const seAddresses = () => (api.get('networking.istio.io/v1', 'ServiceEntry', 'default', 'external-api')?.['status'] as { addresses?: unknown[] } | undefined)?.addresses ?? [];
      await eventually('the ServiceEntry gets an IPv4 and an IPv6 VIP', () => seAddresses().length === 2, 20_000);
      // A deleted entry is read back before its addresses are freed.
      api.delete('networking.istio.io/v1', 'ServiceEntry', 'default', 'external-api');
      await eventually('the deleted ServiceEntry is read back', () => api.requests.some((r) => r.verb === 'get' && r.resource === 'serviceentries' && r.name === 'external-api'), 20_000);

      // A ztunnel, trusting the root it finds in its namespace, asks for a workload certificate.
      const uid = String(api.get('v1', 'Pod', NS, 'ztunnel-a')!.metadata.uid);
      api.registerToken('zt-token', serviceAccountIdentity({ namespace: NS, serviceAccount: 'ztunnel', podName: 'ztunnel-a', podUid: uid, audiences: ['istio-ca'] }));
      const client = new ZtunnelLikeClient(await server.port('secure-grpc'), rootIn(NS)!);
      try {
        const res = await client.createCertificate((await makeCsr()).pem, { token: 'zt-token', clusterId: 'Kubernetes', impersonate: 'spiffe://cluster.local/ns/default/sa/sleep' });
        expect(res.cert_chain.length).toBeGreaterThan(0);
      } finally {
        client.close();
      }

      // The webhook configuration controller patches the chart's validator with the mesh root.
      const rootsPem = rootIn(NS)!;
      const certs: ServingCertSource = { current: () => ({ certChainPem: '', privateKeyPem: '', rootsPem }), onChange: () => () => undefined };
      const controller = new WebhookConfigController({ client: new KubeClient(loadKubeConfig(kubeconfig)), revision: 'default', namespace: NS, certs, backoff: { initialMs: 20, maxMs: 200 } });
      controller.start();
      try {
        const patched = (name: string) => ((api.get('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', undefined, name)?.['webhooks'] ?? []) as { clientConfig: { caBundle?: string } }[]);
        const carriesRoot = (name: string) => patched(name).length > 0 && patched(name).every((w) => w.clientConfig.caBundle === Buffer.from(rootsPem).toString('base64'));
        await eventually('both validators carry the mesh root', () => carriesRoot(findObject(objects, 'ValidatingWebhookConfiguration').metadata.name) && carriesRoot(DEFAULT_VALIDATOR));
      } finally {
        await controller.stop();
      }
      const conditionTypes = (apiVersion: string, kind: string, name: string) => ((api.get(apiVersion, kind, 'default', name)?.['status'] as { conditions?: { type: string }[] } | undefined)?.conditions ?? []).map((c) => c.type);
      await eventually('ambient status conditions are written', () => conditionTypes('security.istio.io/v1', 'AuthorizationPolicy', 'allow').includes('ZtunnelAccepted') && conditionTypes('v1', 'Service', 'app').includes('istio.io/WaypointBound') && conditionTypes('networking.istio.io/v1', 'ServiceEntry', 'ext').includes('istio.io/WaypointBound') && conditionTypes('networking.istio.io/v1', 'WorkloadEntry', 'vm').includes('istio.io/WaypointBound'), 20_000);
    } finally {
      // SIGTERM releases the leases, as in a rolling update.
      exitCode = (await server.stop()).code;
    }
    requests = [...api.requests, ...(await probeCalls())];
  }, 60_000);

  afterAll(async () => {
    // Unset when beforeAll failed before starting it.
    await (api as TestApiServer | undefined)?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('istiod-ts ran as the chart configures it and stopped cleanly', () => {
    expect(exitCode).toBe(0);
  });

  test('the run exercised the CA secret, root distribution, caller authentication, leader election and the webhook controller', () => {
    expect(api.get('v1', 'Secret', NS, CA_SECRET_NAME)).toBeDefined();
    const seen = new Set(requests.map((r) => `${r.verb} ${r.resource}`));
    for (const call of ['create secrets', 'update secrets', 'list configmaps', 'create configmaps', 'update configmaps', 'create tokenreviews', 'create leases', 'update leases', 'watch pods', 'list validatingwebhookconfigurations', 'watch validatingwebhookconfigurations', 'update validatingwebhookconfigurations', 'create gateways']) {
      expect({ call, seen: seen.has(call) }).toEqual({ call, seen: true });
    }
    // Root distribution runs under istiod's ConfigMap lock; the default revision is read for its priority.
    expect(requests.filter((r) => r.resource === 'configmaps' && r.namespace === NS && r.verb === 'update').map((r) => r.name)).toContain(LEASE_NAMES.namespaceController);
    expect(seen.has('get mutatingwebhookconfigurations')).toBe(true);
  });

  test('every request the code made is granted by the ClusterRole, or by the Role in its own namespace', () => {
    const denied = ungranted(requests, clusterRules, roleRules, NS);
    expect(denied.map(describeRequest)).toEqual([]);
  });

  test('every permission the chart grants, each resourceName included, is one the code used', () => {
    expect(unusedGrants(requests, clusterRules, roleRules, NS, (name) => NOT_EXERCISED_HERE.has(name))).toEqual([]);
  });

  test('updates reach only the objects istiod-ts writes: by name for ConfigMaps, Secrets, Leases and webhook configurations', () => {
    const byName = (rules: readonly PolicyRule[], group: string, resource: string, verb: string) => grants(rules, { verb, group, resource, name: 'some-other-object' });
    for (const [group, resource] of [['', 'configmaps'], ['admissionregistration.k8s.io', 'validatingwebhookconfigurations'], ['admissionregistration.k8s.io', 'mutatingwebhookconfigurations']] as const)
      for (const verb of ['get', 'update', 'patch', 'delete']) expect({ resource, verb, cluster: byName(clusterRules, group, resource, verb) }).toEqual({ resource, verb, cluster: false });
    for (const [group, resource] of [['', 'secrets'], ['', 'configmaps'], ['coordination.k8s.io', 'leases'], ['', 'services']] as const)
      for (const verb of ['get', 'update', 'patch', 'delete']) expect({ resource, verb, role: byName(roleRules, group, resource, verb) }).toEqual({ resource, verb, role: false });
    // The names granted are the code's own.
    const names = (rules: readonly PolicyRule[], resource: string, verb: string) => [...new Set(grantsOf(rules).filter((g) => g.resource === resource && g.verb === verb).map((g) => g.name))].sort();
    expect(names(clusterRules, 'configmaps', 'update')).toEqual([CA_CRL_CONFIGMAP, ROOT_CONFIGMAP].sort());
    expect(names(roleRules, 'secrets', 'update')).toEqual([CA_SECRET_NAME]);
    expect(names(roleRules, 'leases', 'update')).toEqual([LEASE_NAMES.status]);
    expect(names(roleRules, 'configmaps', 'update')).toEqual([LEASE_NAMES.namespaceController, LEASE_NAMES.validationController, LEASE_NAMES.ipAutoallocate].sort());
    expect(names(clusterRules, 'validatingwebhookconfigurations', 'update')).toEqual([DEFAULT_VALIDATOR, findObject(objects, 'ValidatingWebhookConfiguration').metadata.name].sort());
    expect(names(clusterRules, 'mutatingwebhookconfigurations', 'get')).toEqual([DEFAULT_TAG_WEBHOOK]);
  });

  test('writes stay where the chart scopes them: Secrets and Leases only in the istiod namespace', () => {
    const writes = requests.filter((r) => WRITE_VERBS.has(r.verb));
    for (const r of writes.filter((w) => w.resource === 'secrets' || w.resource === 'leases')) expect(r.namespace).toBe(NS);
    expect(grants(clusterRules, { verb: 'create', group: '', resource: 'secrets' })).toBe(false);
  });
});

describe('chart RBAC with taint.enabled against the node untaint controller', () => {
  const values = { taint: { enabled: true } };
  const objects = helmTemplate('istiod', { namespace: NS, values });
  const clusterRules = rulesOf(objects, 'ClusterRole');
  const roleRules = rulesOf(objects, 'Role');
  // The rules taint.enabled adds to the default ClusterRole: each must be one the controller used.
  const defaultRules = new Set(rulesOf(helmTemplate('istiod', { namespace: NS }), 'ClusterRole').map((r) => JSON.stringify(r)));
  const taintRules = clusterRules.filter((r) => !defaultRules.has(JSON.stringify(r)));

  let api: TestApiServer;
  let requests: RecordedRequest[];
  let exitCode: number | null;
  let taintsAfter: unknown;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-rbac-untaint-'));

  beforeAll(async () => {
    api = await TestApiServer.start();
    api.put(namespace(NS));
    api.put({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' }, spec: { taints: [{ key: 'cni.istio.io/not-ready', effect: 'NoSchedule' }, { key: 'dedicated', value: 'infra', effect: 'NoSchedule' }] } });
    api.put({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'istio-cni-node-a', namespace: NS, labels: { 'k8s-app': 'istio-cni-node' } }, spec: { nodeName: 'node-a', hostNetwork: true, containers: [{ name: 'install-cni', image: 'x' }] }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } });

    const server = startChartServer(objects, api.writeKubeconfig(), dir, { ROOT_CA_DIR: path.join(dir, 'no-cacerts') });
    try {
      await waitForStatus(`http://127.0.0.1:${await server.port('http')}/ready`, 200, 30_000);
      const taints = () => (api.get('v1', 'Node', undefined, 'node-a')?.['spec'] as { taints?: { key: string }[] }).taints ?? [];
      await eventually('node-a loses the istio-cni taint', () => !taints().some((t) => t.key === 'cni.istio.io/not-ready'), 20_000);
      taintsAfter = taints();
    } finally {
      exitCode = (await server.stop()).code;
    }
    requests = [...api.requests];
  }, 60_000);

  afterAll(async () => {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('istiod-ts ran as the chart configures it, removed only the istio-cni taint, and stopped cleanly', () => {
    expect(taintsAfter).toEqual([{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }]);
    expect(exitCode).toBe(0);
    // The lock is named as istiod names it, whatever object kind holds it.
    const lockReads = requests.filter((r) => r.namespace === NS && (r.resource === 'leases' || r.resource === 'configmaps'));
    expect(lockReads.map((r) => r.name)).toContain(LEASE_NAMES.nodeUntaint);
  });

  test('every request the code made is granted by the ClusterRole, or by the Role in its own namespace', () => {
    const denied = ungranted(requests, clusterRules, roleRules, NS);
    expect(denied.map(describeRequest)).toEqual([]);
  });

  test('every permission taint.enabled adds is one the code used', () => {
    expect(taintRules.length).toBeGreaterThan(0);
    const unused: string[] = [];
    for (const rule of taintRules)
      for (const group of rule.apiGroups)
        for (const resource of rule.resources)
          for (const verb of rule.verbs)
            if (!requests.some((r) => r.group === group && r.resource === resource && r.verb === verb)) unused.push(`${verb} ${group || 'core'}/${resource}`);
    expect(unused).toEqual([]);
  });
});

describe('chart RBAC with a plugged-in CA and its CRL', () => {
  const objects = helmTemplate('istiod', { namespace: NS });
  const clusterRules = rulesOf(objects, 'ClusterRole');
  const roleRules = rulesOf(objects, 'Role');

  let api: TestApiServer;
  let requests: RecordedRequest[];
  let exitCode: number | null;
  let crl: string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-rbac-crl-'));

  beforeAll(async () => {
    api = await TestApiServer.start();
    for (const ns of [NS, 'default']) api.put(namespace(ns));
    // A drifted copy in one namespace, so distribution both creates and replaces.
    api.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: CA_CRL_CONFIGMAP, namespace: 'default' }, data: { [CA_CRL_FILE]: 'stale' } });
    const ca = pluggedInCaDir();
    crl = chainCrl(ca.intermediate, ca.root, path.join(dir, 'crl'));
    fs.writeFileSync(path.join(ca.dir, CA_CRL_FILE), crl);

    const server = startChartServer(objects, api.writeKubeconfig(), dir, { ROOT_CA_DIR: ca.dir });
    try {
      await waitForStatus(`http://127.0.0.1:${await server.port('http')}/ready`, 200, 30_000);
      const crlIn = (ns: string) => (api.get('v1', 'ConfigMap', ns, CA_CRL_CONFIGMAP)?.['data'] as Record<string, string> | undefined)?.[CA_CRL_FILE];
      await eventually('the CRL reaches every namespace', () => [NS, 'default'].every((ns) => crlIn(ns) === crl), 20_000);
    } finally {
      exitCode = (await server.stop()).code;
    }
    requests = [...api.requests];
  }, 60_000);

  afterAll(async () => {
    await (api as TestApiServer | undefined)?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('istiod-ts created and replaced the CRL ConfigMap by its name, and stopped cleanly', () => {
    expect(exitCode).toBe(0);
    const writes = requests.filter((r) => r.resource === 'configmaps' && (r.name ?? r.createdName) === CA_CRL_CONFIGMAP);
    expect(writes.some((r) => r.verb === 'create')).toBe(true);
    expect(writes.some((r) => r.verb === 'update' && r.namespace === 'default')).toBe(true);
  });

  test('every request the code made is granted by the ClusterRole, or by the Role in its own namespace', () => {
    const denied = ungranted(requests, clusterRules, roleRules, NS);
    expect(denied.map(describeRequest)).toEqual([]);
  });
});
