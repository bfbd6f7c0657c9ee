// The chart's RBAC is exactly what the code uses. The Kubernetes-mode components run against the
// test API server, which records every request as (verb, group, resource, namespace); each
// recorded request must be granted by the rendered ClusterRole or (in istiod's namespace) Role,
// and every permission the chart grants must have been used.

import * as grpc from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { parseServeOptions } from '../../../src/config/options';
import { startCertificateAuthority, type CaHandle } from '../../../src/ca';
import { servingCertCredentials } from '../../../src/ca/grpc-credentials';
import { CA_SECRET_NAME } from '../../../src/ca/kube-ca-secret-store';
import { ROOT_CERT_KEY } from '../../../src/ca/root-cert-publisher';
import type { ServerContext } from '../../../src/server/context';
import { ServingCertHolder } from '../../../src/server/serving-cert';
import { connectKubernetes, LEASE_NAMES, type KubernetesBackend } from '../../../src/store/kube';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { MemoryStore } from '../../../src/store/memory-store';
import { TestApiServer, eventually, serviceAccountIdentity, type RecordedRequest } from '../../support/apiserver';
import { namespace } from '../../support/apiserver/fixtures';
import { helmTemplate } from '../../support/helm';
import { makeCsr } from '../../unit/ca/fixtures';
import { staticMesh, ZtunnelLikeClient } from '../ca/harness';
import { rulesOf, type PolicyRule } from './istiod-objects';

const NS = 'istio-system';
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
const FAST_LEADER = { leaseDurationMs: 1_500, renewDeadlineMs: 500, retryPeriodMs: 100 };

function grants(rules: readonly PolicyRule[], r: { verb: string; group: string; resource: string; subresource?: string }): boolean {
  const resource = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
  return rules.some(
    (rule) =>
      (rule.apiGroups.includes(r.group) || rule.apiGroups.includes('*')) &&
      (rule.resources.includes(resource) || rule.resources.includes('*')) &&
      (rule.verbs.includes(r.verb) || rule.verbs.includes('*')),
  );
}

const describeRequest = (r: RecordedRequest) => `${r.verb} ${r.group || 'core'}/${r.resource}${r.subresource ? `/${r.subresource}` : ''}${r.namespace ? ` in ${r.namespace}` : ' (cluster-wide)'}`;

describe('chart RBAC against the calls the code makes', () => {
  const objects = helmTemplate('istiod', { namespace: NS });
  const clusterRules = rulesOf(objects, 'ClusterRole');
  const roleRules = rulesOf(objects, 'Role');

  let api: TestApiServer;
  let backend: KubernetesBackend;
  let ca: CaHandle;
  let server: grpc.Server;
  let requests: RecordedRequest[];
  const shutdown: (() => void | Promise<void>)[] = [];

  beforeAll(async () => {
    api = await TestApiServer.start();
    for (const ns of [NS, 'default', 'kube-system']) api.put(namespace(ns));
    api.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'istio', namespace: NS }, data: { mesh: 'trustDomain: cluster.local' } });
    api.put({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ztunnel-a', namespace: NS }, spec: { serviceAccountName: 'ztunnel', nodeName: 'node-a', containers: [{ name: 'c', image: 'x' }] }, status: { phase: 'Running' } });
    // A stale root ConfigMap, so root distribution both creates and updates.
    api.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'istio-ca-root-cert', namespace: 'default' }, data: { [ROOT_CERT_KEY]: 'stale' } });
    const kubeconfig = api.writeKubeconfig();

    const store = new MemoryStore();
    backend = await connectKubernetes({ kubeconfig, systemNamespace: NS, podName: 'istiod-0', revision: 'default', store, leaderTiming: FAST_LEADER });
    await backend.source.start();
    await store.whenSynced();

    const options = parseServeOptions([], { POD_NAMESPACE: NS, POD_NAME: 'istiod-0', ROOT_CA_DIR: '/nonexistent/cacerts' });
    server = new grpc.Server();
    const ctx: ServerContext = {
      options,
      store,
      mesh: staticMesh(),
      metrics: new Registry(),
      grpc: { addService: (def, impl) => server.addService(def, impl), secureEnabled: true },
      readiness: { register: () => () => undefined },
      debug: { add: () => undefined },
      servingCerts: new ServingCertHolder(),
      leader: backend.leader,
      onShutdown: (hook) => void shutdown.push(hook),
    };
    ca = await startCertificateAuthority(ctx, { kubeConfig: loadKubeConfig(kubeconfig), rootCertResyncMs: 200 });
    const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', servingCertCredentials(ctx.servingCerts), (err, p) => (err ? reject(err) : resolve(p))));

    // A ztunnel asks for a certificate: its token goes through TokenReview.
    api.registerToken('zt-token', serviceAccountIdentity({ namespace: NS, serviceAccount: 'ztunnel', podName: 'ztunnel-a', podUid: String(api.get('v1', 'Pod', NS, 'ztunnel-a')!.metadata.uid), audiences: ['istio-ca'] }));
    const client = new ZtunnelLikeClient(port, ca.rootCertPem());
    await client.createCertificate((await makeCsr()).pem, { token: 'zt-token', clusterId: 'Kubernetes' });
    client.close();

    const root = ca.rootCertPem();
    const rootIn = (ns: string) => (api.get('v1', 'ConfigMap', ns, 'istio-ca-root-cert')?.['data'] as Record<string, string> | undefined)?.[ROOT_CERT_KEY] === root;
    await eventually('the root reaches every namespace', () => [NS, 'default', 'kube-system'].every(rootIn));
    await eventually('the leader renews its lease', () => api.requests.some((r) => r.resource === 'leases' && r.verb === 'update'));

    // Stopping releases the lease, as a rolling update does.
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    for (const hook of shutdown.reverse()) await hook();
    await backend.leader.stop();
    await backend.source.stop();
    requests = [...api.requests];
  });

  afterAll(async () => {
    await api.close();
  });

  test('the run exercised the CA secret, root distribution, caller authentication and leader election', () => {
    expect(api.get('v1', 'Secret', NS, CA_SECRET_NAME)).toBeDefined();
    const seen = new Set(requests.map((r) => `${r.verb} ${r.resource}`));
    for (const call of ['create secrets', 'list configmaps', 'create configmaps', 'update configmaps', 'create tokenreviews', 'create leases', 'update leases', 'watch pods']) {
      expect({ call, seen: seen.has(call) }).toEqual({ call, seen: true });
    }
    expect(requests.find((r) => r.resource === 'leases')?.name).toBe(LEASE_NAMES.namespaceController);
  });

  test('every request the code made is granted by the ClusterRole, or by the Role in its own namespace', () => {
    const denied = requests.filter((r) => !(grants(clusterRules, r) || (r.namespace === NS && grants(roleRules, r))));
    expect(denied.map(describeRequest)).toEqual([]);
  });

  test('every permission the chart grants is one the code used', () => {
    const unused: string[] = [];
    for (const [scope, rules] of [['ClusterRole', clusterRules], ['Role', roleRules]] as const) {
      for (const rule of rules) {
        for (const group of rule.apiGroups) {
          for (const resource of rule.resources) {
            for (const verb of rule.verbs) {
              const used = requests.some((r) => r.group === group && r.resource === resource && r.verb === verb && (scope === 'ClusterRole' || r.namespace === NS));
              if (!used) unused.push(`${scope}: ${verb} ${group || 'core'}/${resource}`);
            }
          }
        }
      }
    }
    expect(unused).toEqual([]);
  });

  test('writes stay where the chart scopes them: Secrets and Leases only in the istiod namespace', () => {
    const writes = requests.filter((r) => WRITE_VERBS.has(r.verb));
    for (const r of writes.filter((w) => w.resource === 'secrets' || w.resource === 'leases')) expect(r.namespace).toBe(NS);
    expect(grants(clusterRules, { verb: 'create', group: '', resource: 'secrets' })).toBe(false);
  });
});
