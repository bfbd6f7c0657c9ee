// Multicluster in the charts: the remote profile renders only what a remote cluster needs (the
// reader's RBAC, and the Service leading to the primary), a primary that names its cluster may read
// the remote secrets, and the reader's ClusterRole is exactly what a primary does on a remote:
// checked statically against create-remote-secret's rules (src/cli/remote-secret-account.ts), and
// live: the remote cluster's informers (store/clusters.ts REMOTE_KINDS) and a TokenReview run
// against the test API server with the token of a printed remote secret, every call granted and
// every grant used.

import { KubeConfig } from '@kubernetes/client-node';
import { RemoteRootDistribution, remoteRootStarter } from '../../../src/ca/roots/remote-root-distribution';
import type { ClusterDirectory } from '../../../src/store/clusters';
import { loadKubeConfig } from '../../../src/store/kube/config';
import { KubeLeaderElector } from '../../../src/store/kube/leader';
import { parse } from 'yaml';
import { runCreateRemoteSecretCommand } from '../../../src/cli/create-remote-secret';
import { readerRules, READER_SERVICE_ACCOUNT } from '../../../src/cli/remote-secret-account';
import { REMOTE_KINDS } from '../../../src/store/clusters';
import { KubeClient } from '../../../src/store/kube/client';
import { KubeWriter } from '../../../src/store/kube/writes';
import { TestApiServer, eventually, serviceAccountIdentity, type RecordedRequest } from '../../support/apiserver';
import { namespace } from '../../support/apiserver/fixtures';
import { syncedKubeStore } from '../../support/apiserver/synced-store';
import { startTokenController } from '../../support/apiserver/token-controller';
import { findObject, helmInstallNotes, helmLint, helmTemplate, type Rendered } from '../../support/helm';
import { kubeSchemaProblems } from './kube-schema';
import { readerRulesOf, rulesOf, ungranted, unusedGrants, type PolicyRule } from './istiod-objects';

const NS = 'istio-system';
const READER_ROLE = `istio-reader-clusterrole-${NS}`;
const ROOT_PUBLISHER = 'istio-reader-root-publisher';
/** The reader's RBAC in a remote: its ClusterRole, and what an EXTERNAL_ISTIOD primary writes here (remote-root-publisher-rbac.yaml). */
const REMOTE_RBAC = [
  `ClusterRole/${READER_ROLE}`,
  `ClusterRole/${ROOT_PUBLISHER}-${NS}`,
  `ClusterRoleBinding/${READER_ROLE}`,
  `ClusterRoleBinding/${ROOT_PUBLISHER}-${NS}`,
  `Role/${ROOT_PUBLISHER}`,
  `RoleBinding/${ROOT_PUBLISHER}`,
];
const render = (values: Record<string, unknown> = {}) => helmTemplate('istiod', { namespace: NS, values });
const names = (objects: readonly Rendered[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
/** A rule as comparable text, independent of the order of its lists. */
const canonical = (rules: readonly PolicyRule[]) =>
  rules
    .map((r) => JSON.stringify({ g: [...r.apiGroups].sort(), r: [...r.resources].sort(), v: [...r.verbs].sort(), n: r.resourceNames ?? [] }))
    .sort();

describe('charts/istiod remote profile', () => {
  const remote = render({ profile: 'remote', global: { remotePilotAddress: '10.20.30.40' } });

  test('renders only the reader ClusterRole and binding, and the Service and EndpointSlice leading to the primary', () => {
    expect(names(remote)).toEqual([...REMOTE_RBAC, 'EndpointSlice/istiod', 'Service/istiod'].sort());
    const slice = findObject(remote, 'EndpointSlice');
    expect(slice).toMatchObject({ addressType: 'IPv4', endpoints: [{ addresses: ['10.20.30.40'] }], ports: [{ name: 'tcp-istiod', port: 15012, protocol: 'TCP' }] });
    expect(slice.metadata.labels?.['kubernetes.io/service-name']).toBe('istiod');
    // Selectorless: the EndpointSlice is its only backend.
    expect(findObject(remote, 'Service')['spec']).toEqual({ ports: [{ name: 'tcp-istiod', port: 15012, protocol: 'TCP' }] });
  });

  test('istiodRemote.enabled is the same profile; a host name becomes an ExternalName Service; without an address only the RBAC', () => {
    expect(render({ istiodRemote: { enabled: true }, global: { remotePilotAddress: '10.20.30.40' } })).toEqual(remote);
    const byName = render({ profile: 'remote', revision: 'canary', global: { remotePilotAddress: 'istiod.primary.example.com' } });
    expect(names(byName)).toEqual(
      [
        'ClusterRole/istio-reader-clusterrole-canary-istio-system',
        'ClusterRole/istio-reader-root-publisher-canary-istio-system',
        'ClusterRoleBinding/istio-reader-clusterrole-canary-istio-system',
        'ClusterRoleBinding/istio-reader-root-publisher-canary-istio-system',
        'Role/istio-reader-root-publisher-canary',
        'RoleBinding/istio-reader-root-publisher-canary',
        'Service/istiod-canary',
      ].sort(),
    );
    expect(findObject(byName, 'Service')['spec']).toMatchObject({ type: 'ExternalName', externalName: 'istiod.primary.example.com' });
    expect(names(render({ profile: 'remote', global: { remotePilotAddress: 'fd00::5' } }))).toContain('EndpointSlice/istiod');
    expect(names(render({ profile: 'remote' }))).toEqual(REMOTE_RBAC);
  });

  test('every object is valid for the Kubernetes API, and helm lint --strict passes', () => {
    for (const o of [...remote, ...render({ profile: 'remote', global: { remotePilotAddress: 'istiod.example.com' } })])
      expect({ object: `${o.kind}/${o.metadata.name}`, problems: kubeSchemaProblems(o) }).toEqual({ object: `${o.kind}/${o.metadata.name}`, problems: [] });
    const r = helmLint('istiod', { profile: 'remote', global: { remotePilotAddress: '10.20.30.40' } });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  test('the values of Istio’s documented primary-remote install render the same remote profile', () => {
    // istio.io, "Install Primary-Remote": the remote's istiod chart values, as given there.
    const istioDocs = {
      profile: 'remote',
      global: { multiCluster: { clusterName: 'cluster2' }, network: 'network1', remotePilotAddress: '10.20.30.40' },
      istiodRemote: { injectionPath: '/inject/cluster/cluster2/net/network1' },
    };
    expect(render(istioDocs)).toEqual(remote);
  });

  test('global.resourceScope splits it as it splits a primary', () => {
    expect(names(render({ profile: 'remote', global: { remotePilotAddress: '10.0.0.1', resourceScope: 'cluster' } }))).toEqual(REMOTE_RBAC.filter((n) => n.startsWith('Cluster')));
    expect(names(render({ profile: 'remote', global: { remotePilotAddress: '10.0.0.1', resourceScope: 'namespace' } }))).toEqual([`EndpointSlice/istiod`, `Role/${ROOT_PUBLISHER}`, `RoleBinding/${ROOT_PUBLISHER}`, 'Service/istiod']);
  });

  test('the install notes say no istiod runs here and how to join the primary', () => {
    const notes = helmInstallNotes('istiod', { namespace: NS, values: { profile: 'remote', global: { remotePilotAddress: '10.20.30.40' } } });
    expect(notes).toContain('no istiod-ts runs here');
    expect(notes).toContain('istiod.istio-system.svc:15012, which leads to 10.20.30.40');
    expect(notes).toContain('istiod-ts create-remote-secret --name');
  });
});

describe('the reader ClusterRole (primary and remote alike)', () => {
  const primary = render();

  test('grants exactly what create-remote-secret grants when it creates the reader, in both profiles', () => {
    expect(canonical(readerRulesOf(primary))).toEqual(canonical(readerRules()));
    expect(readerRulesOf(render({ profile: 'remote' }))).toEqual(readerRulesOf(primary));
  });

  test('is bound to the base chart’s reader account, or to the one global.readerServiceAccount names', () => {
    const sa = findObject(helmTemplate('base', { namespace: NS }), 'ServiceAccount');
    expect(findObject(primary, 'ClusterRoleBinding', READER_ROLE)['subjects']).toEqual([{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace }]);
    expect(sa.metadata.name).toBe(READER_SERVICE_ACCOUNT);
    const other = render({ global: { readerServiceAccount: { name: 'reader', namespace: 'ops' } } });
    expect(findObject(other, 'ClusterRoleBinding', READER_ROLE)['subjects']).toEqual([{ kind: 'ServiceAccount', name: 'reader', namespace: 'ops' }]);
  });

  test('global.enableReaderRBAC false leaves it out', () => {
    expect(names(render({ global: { enableReaderRBAC: false } })).filter((n) => n.includes('istio-reader'))).toEqual([]);
    expect(names(render({ profile: 'remote', global: { enableReaderRBAC: false } })).filter((n) => n.includes('istio-reader'))).toEqual([]);
  });

  test('every primary may list and watch the remote secrets in its namespace (it always reads them, as istiod does)', () => {
    const secretReads = (objects: readonly Rendered[]) => rulesOf(objects, 'Role').filter((r) => r.resources.includes('secrets') && r.verbs.includes('list'));
    expect(secretReads(primary)).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['list', 'watch'] }]);
    expect(secretReads(render({ global: { multiCluster: { clusterName: 'cluster-1' } } }))).toEqual(secretReads(primary));
    expect(rulesOf(render({ global: { multiCluster: { clusterName: 'cluster-1' } } }), 'ClusterRole')).toEqual(rulesOf(primary, 'ClusterRole'));
  });
});

describe('the reader ClusterRole against what a primary does on a remote cluster', () => {
  const rules = readerRulesOf(render({ profile: 'remote' }));
  let api: TestApiServer;
  let calls: { verb: string; group: string; resource: string }[];
  let username: string;

  beforeAll(async () => {
    api = await TestApiServer.start();
    for (const ns of [NS, 'kube-system', 'default']) api.put(namespace(ns));
    api.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: READER_SERVICE_ACCOUNT, namespace: NS } });
    api.put({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-r' } });
    api.put({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ztunnel-r', namespace: NS }, spec: { serviceAccountName: 'ztunnel', nodeName: 'node-r', containers: [{ name: 'z', image: 'x' }] } });
    api.registerToken('remote-ztunnel-token', serviceAccountIdentity({ namespace: NS, serviceAccount: 'ztunnel', audiences: ['istio-ca'] }));
    const tokens = startTokenController(api, { caPem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n', delayMs: 50 });
    let out = '';
    try {
      const code = await runCreateRemoteSecretCommand(['--kubeconfig', api.writeKubeconfig(), '--name', 'remote-1', '--server', api.url], (s) => (out += s), () => undefined);
      expect(code).toBe(0);
    } finally {
      tokens.stop();
    }
    // The primary's view of the remote: the printed kubeconfig (plain HTTP here, so no CA).
    const secret = parse(out.replace(/---\n$/, '')) as { stringData: Record<string, string> };
    const written = parse(secret.stringData['remote-1']!) as { clusters: { cluster: Record<string, unknown> }[] };
    delete written.clusters[0]!.cluster['certificate-authority-data'];
    written.clusters[0]!.cluster['insecure-skip-tls-verify'] = true;
    const kc = new KubeConfig();
    kc.loadFromString(JSON.stringify(written));
    const before = api.requests.length;
    const { store, source } = await syncedKubeStore(kc, { kinds: [...REMOTE_KINDS] });
    try {
      expect(store.get('Pod', NS, 'ztunnel-r')).toBeDefined();
      // Who the printed token is, and a remote ztunnel's token reviewed as the CA reviews it.
      const writer = new KubeWriter(new KubeClient(kc));
      username = (await writer.createTokenReview(kc.getCurrentUser()!.token!)).username;
      expect((await writer.createTokenReview('remote-ztunnel-token', ['istio-ca'])).authenticated).toBe(true);
    } finally {
      await source.stop();
    }
    calls = api.requests.slice(before).map((r) => ({ verb: r.verb, group: r.group, resource: r.subresource ? `${r.resource}/${r.subresource}` : r.resource }));
  }, 30_000);

  afterAll(async () => {
    await api.close();
  });

  test('the printed kubeconfig authenticates as the account the ClusterRole is bound to', () => {
    expect(username).toBe(`system:serviceaccount:${NS}:${READER_SERVICE_ACCOUNT}`);
  });

  test('every call is granted, and every grant is used', () => {
    const grants = rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${v} ${g}/${res}`))));
    const made = [...new Set(calls.map((c) => `${c.verb} ${c.group}/${c.resource}`))];
    expect(made.filter((c) => !grants.includes(c))).toEqual([]);
    expect(grants.filter((g) => !made.includes(g))).toEqual([]);
  });
});

describe('the root publisher RBAC against what an EXTERNAL_ISTIOD primary does on a remote cluster', () => {
  const remote = render({ profile: 'remote' });
  const clusterRules = findObject(remote, 'ClusterRole', `${ROOT_PUBLISHER}-${NS}`)['rules'] as PolicyRule[];
  const roleRules = findObject(remote, 'Role', ROOT_PUBLISHER)['rules'] as PolicyRule[];
  let api: TestApiServer;
  let requests: RecordedRequest[];

  beforeAll(async () => {
    api = await TestApiServer.start();
    for (const ns of [NS, 'apps']) api.put(namespace(ns));
    api.put(namespace('drifted'));
    api.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, annotations: { 'topology.istio.io/controlPlaneClusters': 'cluster-1' } } });
    // Drifted copies in one namespace, so each name's update is taken.
    for (const [name, key] of [['istio-ca-root-cert', 'root-cert.pem'], ['istio-ca-crl', 'ca-crl.pem']] as const)
      api.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'drifted' }, data: { [key]: 'old' } });
    const kc = loadKubeConfig(api.writeKubeconfig());
    const { store, source } = await syncedKubeStore(kc, { kinds: [...REMOTE_KINDS] });
    const before = api.requests.length;
    const cluster = { id: 'cluster-2', local: false, store, client: new KubeClient(kc), synced: () => true };
    const directory: ClusterDirectory = { localId: 'cluster-1', get: () => cluster, list: () => [cluster], subscribe: () => () => undefined };
    const distribution = new RemoteRootDistribution(
      directory,
      NS,
      remoteRootStarter({
        configMaps: [
          { name: 'istio-ca-root-cert', key: 'root-cert.pem', content: () => 'root', onContentChange: () => () => undefined },
          { name: 'istio-ca-crl', key: 'ca-crl.pem', content: () => 'crl', onContentChange: () => () => undefined },
        ],
        elector: (client) =>
          new KubeLeaderElector({ client, namespace: NS, identity: 'istiod-1', remote: true, timing: { leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 250 } }),
      }),
    );
    const stop = distribution.run();
    try {
      await eventually('written everywhere', () => ['apps', 'drifted', NS].every((ns) => (api.get('v1', 'ConfigMap', ns, 'istio-ca-crl') as { data?: Record<string, string> } | undefined)?.data?.['ca-crl.pem'] === 'crl'));
      // A renewal of the lock (read, then update by name).
      await eventually('the lock renewed', () => api.requests.slice(before).some((r) => r.verb === 'update' && r.name === 'istio-namespace-controller-election'), 10_000);
    } finally {
      await stop();
      await source.stop();
    }
    requests = api.requests.slice(before);
  }, 30_000);

  afterAll(async () => {
    await api.close();
  });

  test('every call is granted to the reader by these rules or its ClusterRole (the lock and the tag Service in the system namespace only)', () => {
    const readerRules = readerRulesOf(remote);
    const denied = ungranted(requests, [...readerRules, ...clusterRules], roleRules, NS);
    expect(denied.map((r) => `${r.verb} ${r.resource} ${r.name ?? ''} in ${r.namespace ?? '(cluster)'}`)).toEqual([]);
  });

  test('every grant, each resourceName included, was used', () => {
    expect(unusedGrants(requests, clusterRules, roleRules, NS)).toEqual([]);
  });
});
