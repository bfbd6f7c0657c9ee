// The CA across clusters (issue 36 part 2), over real gRPC and TLS: three test API servers, the
// local cluster `east` and the remotes `west` and `north`, each with its own store fed by its own
// watches, joined in a ClusterDirectory driven by hand as the remote-secret controller will drive
// it. A ztunnel's token is reviewed by the API server of the cluster its `clusterid` names, and it
// may ask only for identities with a pod on its own node in that cluster. Every cluster has a node
// named node-1, so a grant that read the wrong cluster's pods would show.

import * as grpc from '@grpc/grpc-js';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../../src/store/kube/client';
import { loadKubeConfig } from '../../../src/store/kube/config';
import type { KubeSource } from '../../../src/store/kube/source';
import { MemoryStore } from '../../../src/store/memory-store';
import { serviceAccountIdentity, TestApiServer } from '../../support/apiserver';
import { FAST_WATCH_TIMING, namespace, scheduledPod as pod } from '../../support/apiserver/fixtures';
import { syncedKubeStore } from '../../support/apiserver/synced-store';
import { makeCsr, opensslVerify, peculiarSan } from '../../support/ca/fixtures';
import { type Harness, startHarness, ZtunnelLikeClient } from '../../support/ca/harness';
import { meshCluster, TestClusterDirectory } from '../../support/cluster-directory';
import { captureLogs } from '../../support/logs';

const id = (ns: string, sa: string) => `spiffe://cluster.local/ns/${ns}/sa/${sa}`;
const IMPERSONATION_FAILURE = {
  code: grpc.status.UNAUTHENTICATED,
  details: 'request impersonation authentication failure',
};
const AUTHENTICATE_FAILURE = { code: grpc.status.UNAUTHENTICATED, details: 'request authenticate failure' };

interface Cluster {
  id: string;
  api: TestApiServer;
  kubeConfig: KubeConfig;
  store: MemoryStore;
  /** The local cluster's watches; a remote's store is filled here as its watches would fill it. */
  source?: KubeSource;
}

/**
 * One process runs one Kubernetes source (KubeSource refuses a second), so the local cluster is
 * watched and each remote store is written with exactly what its API server stored (uids included),
 * as the remote-secret controller's watches would write it.
 */
async function startCluster(clusterId: string, pods: ReturnType<typeof pod>[], watched = false): Promise<Cluster> {
  const api = await TestApiServer.start();
  for (const ns of ['istio-system', 'default']) api.put(namespace(ns));
  const kubeConfig = loadKubeConfig(api.writeKubeconfig());
  let c: Cluster;
  if (watched) {
    for (const p of pods) api.put(p);
    const { store, source } = await syncedKubeStore(kubeConfig, { timing: FAST_WATCH_TIMING });
    c = { id: clusterId, api, kubeConfig, store, source };
  } else {
    c = { id: clusterId, api, kubeConfig, store: new MemoryStore() };
    for (const p of pods) putPod(c, p);
  }
  return c;
}

function putPod(c: Cluster, p: ReturnType<typeof pod>): void {
  const stored = c.api.put(p);
  if (!c.source) c.store.upsert('Pod', [stored]);
}

/** A fresh store holding the remote's pods as its API server has them now (a replaced cluster's). */
function restore(c: Cluster): MemoryStore {
  const store = new MemoryStore();
  store.upsert(
    'Pod',
    c.store.list('Pod').map((p) => c.api.get('v1', 'Pod', p.metadata.namespace, p.metadata.name)!),
  );
  return store;
}

/** TokenReviews the cluster's API server has been asked for so far. */
function reviews(c: Cluster): number {
  return c.api.requests.filter((r) => r.verb === 'create' && r.resource === 'tokenreviews').length;
}

describe('the CA across clusters (three test API servers)', () => {
  let east: Cluster;
  let west: Cluster;
  let north: Cluster;
  let all: Cluster[];
  let dir: TestClusterDirectory;
  let h: Harness;
  let client: ZtunnelLikeClient;

  /** Registers `token` at the cluster's API server only, bound to its pod as stored (its real uid). */
  function bind(c: Cluster, token: string, podName: string): string {
    const stored = c.api.get('v1', 'Pod', 'istio-system', podName)!;
    c.api.registerToken(
      token,
      serviceAccountIdentity({
        namespace: 'istio-system',
        serviceAccount: 'ztunnel',
        podName,
        podUid: stored.metadata.uid!,
        audiences: ['istio-ca'],
      }),
    );
    return token;
  }

  const remote = (c: Cluster, store = c.store) => meshCluster(c.id, store, { client: new KubeClient(c.kubeConfig) });

  async function counter(name: string, labels: Record<string, string>): Promise<number> {
    const metric = await h.metrics.getSingleMetric(name)?.get();
    return (metric?.values ?? [])
      .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
      .reduce((sum, v) => sum + v.value, 0);
  }

  const ask = async (token: string, clusterId: string, impersonate?: string) =>
    client.createCertificate((await makeCsr()).pem, {
      token,
      clusterId,
      ...(impersonate ? { impersonate } : {}),
    });

  beforeAll(async () => {
    east = await startCluster(
      'east',
      [pod('istio-system', 'ztunnel-e', 'ztunnel', 'node-1'), pod('default', 'httpbin-e', 'httpbin', 'node-1')],
      true,
    );
    west = await startCluster('west', [
      pod('istio-system', 'ztunnel-w', 'ztunnel', 'node-1'),
      pod('istio-system', 'ztunnel-w2', 'ztunnel', 'node-1'),
      pod('default', 'sleep-w', 'sleep', 'node-1'),
      pod('default', 'reviews-w', 'reviews', 'node-2'),
    ]);
    north = await startCluster('north', [
      pod('istio-system', 'ztunnel-n', 'ztunnel', 'node-1'),
      pod('istio-system', 'ztunnel-n2', 'ztunnel', 'node-1'),
      pod('default', 'ratings-n', 'ratings', 'node-1'),
    ]);
    all = [east, west, north];
    dir = new TestClusterDirectory('east', [
      meshCluster('east', east.store, { local: true, client: new KubeClient(east.kubeConfig) }),
      remote(west),
      remote(north),
    ]);
    h = await startHarness({
      mode: 'kubernetes',
      env: { CLUSTER_ID: 'east' },
      store: east.store,
      deps: { kubeConfig: east.kubeConfig, clusters: dir },
    });
    client = new ZtunnelLikeClient(h.port, h.ca.rootCertPem());
  });

  afterAll(async () => {
    client.close();
    await h.close();
    for (const c of all) {
      await c.source?.stop();
      await c.api.close();
    }
  });

  test("a remote ztunnel's token is reviewed by its own API server, and it gets a workload on its node in its cluster", async () => {
    const token = bind(west, 'west-token', 'ztunnel-w');
    const before = all.map(reviews);
    const res = await ask(token, 'west', id('default', 'sleep'));
    expect(peculiarSan(res.cert_chain[0]!).uris).toEqual([id('default', 'sleep')]);
    expect(opensslVerify(h.ca.rootCertPem(), res.cert_chain[0]!, res.cert_chain.slice(1, -1).join(''))).toContain('OK');
    expect(all.map(reviews)).toEqual([before[0], before[1]! + 1, before[2]]);
    expect(await counter('citadel_server_success_cert_issuance_count', { cluster: 'west' })).toBeGreaterThanOrEqual(1);
  });

  test.each([
    ['whose pods are only in the local cluster, on a node of the same name', id('default', 'httpbin')],
    ['whose pods are only in another remote cluster, on a node of the same name', id('default', 'ratings')],
    ['whose pod is in its cluster but on another node', id('default', 'reviews')],
  ])('a remote ztunnel is refused an identity %s', async (_name, identity) => {
    const token = bind(west, 'west-token', 'ztunnel-w');
    const before = await counter('citadel_server_node_authorization_denial_count', {
      reason: 'no_pod_on_node',
      cluster: 'west',
    });
    await expect(ask(token, 'west', identity)).rejects.toMatchObject(IMPERSONATION_FAILURE);
    expect(
      await counter('citadel_server_node_authorization_denial_count', { reason: 'no_pod_on_node', cluster: 'west' }),
    ).toBe(before + 1);
  });

  test("a ztunnel naming a cluster other than its own is refused: that cluster's API server does not know its token", async () => {
    const token = bind(west, 'west-only-token', 'ztunnel-w');
    const before = all.map(reviews);
    await expect(ask(token, 'north', id('default', 'ratings'))).rejects.toMatchObject(AUTHENTICATE_FAILURE);
    expect(all.map(reviews)).toEqual([before[0], before[1], before[2]! + 1]);
    expect(
      await counter('citadel_server_authentication_failure_count', { reason: 'invalid_token', cluster: 'north' }),
    ).toBe(1);
  });

  test('the local cluster still answers a ztunnel without a clusterid, and reviews on the local API server', async () => {
    const token = bind(east, 'east-token', 'ztunnel-e');
    const before = all.map(reviews);
    const res = await client.createCertificate((await makeCsr()).pem, { token, impersonate: id('default', 'httpbin') });
    expect(peculiarSan(res.cert_chain[0]!).uris).toEqual([id('default', 'httpbin')]);
    expect(all.map(reviews)).toEqual([before[0]! + 1, before[1], before[2]]);
    // The local ztunnel on node-1 is no more entitled to west's workload on its own node-1.
    await expect(
      client.createCertificate((await makeCsr()).pem, { token, impersonate: id('default', 'sleep') }),
    ).rejects.toMatchObject(IMPERSONATION_FAILURE);
  });

  test('an unknown clusterid is refused without any TokenReview, logged with the id, counted', async () => {
    const token = bind(west, 'west-token', 'ztunnel-w');
    const before = all.map(reviews);
    const counted = await counter('citadel_server_authentication_failure_count', {
      reason: 'unknown_cluster',
      cluster: '',
    });
    const captured = captureLogs();
    try {
      await expect(ask(token, 'south', id('default', 'sleep'))).rejects.toMatchObject(AUTHENTICATE_FAILURE);
    } finally {
      captured.restore();
    }
    expect(all.map(reviews)).toEqual(before);
    const line = captured.lines().find((l) => l['reason'] === 'unknown_cluster');
    expect(line).toMatchObject({
      msg: 'request authenticate failure',
      detail: 'clusterid "south" is not a cluster of this mesh (local "east", remote [north, west])',
    });
    // The token itself is never logged.
    expect(JSON.stringify(captured.lines())).not.toContain(token);
    expect(
      await counter('citadel_server_authentication_failure_count', { reason: 'unknown_cluster', cluster: '' }),
    ).toBe(counted + 1);
  });

  test('token caches are per cluster: one token string, two clusters, each reviewed once by its own server', async () => {
    const token = 'shared-token';
    bind(west, token, 'ztunnel-w');
    bind(north, token, 'ztunnel-n');
    const before = all.map(reviews);
    // west's review says ztunnel-w (on west's node-1); north's says ztunnel-n. A shared cache would
    // answer north with ztunnel-w, a pod north's store does not hold.
    await ask(token, 'west', id('default', 'sleep'));
    await ask(token, 'north', id('default', 'ratings'));
    await ask(token, 'west', id('default', 'sleep'));
    await ask(token, 'north', id('default', 'ratings'));
    expect(all.map(reviews)).toEqual([before[0], before[1]! + 1, before[2]! + 1]);
  });

  test("a pod deleted in one cluster ends that cluster's cached reviews, not another's", async () => {
    const token = 'shared-token-2';
    bind(west, token, 'ztunnel-w2');
    bind(north, token, 'ztunnel-n2');
    await ask(token, 'west', id('default', 'sleep'));
    await ask(token, 'north', id('default', 'ratings'));
    const before = all.map(reviews);
    north.api.delete('v1', 'Pod', 'istio-system', 'ztunnel-n2');
    north.store.remove('Pod', [north.store.get('Pod', 'istio-system', 'ztunnel-n2')!]);
    // north reviews again, and its API server refuses the deleted pod's token.
    await expect(ask(token, 'north', id('default', 'ratings'))).rejects.toMatchObject(AUTHENTICATE_FAILURE);
    // west still answers from its cache.
    await ask(token, 'west', id('default', 'sleep'));
    expect(all.map(reviews)).toEqual([before[0], before[1], before[2]! + 1]);
  });

  test('a mesh client certificate names no cluster: its own identity whatever clusterid it sends, and no impersonation', async () => {
    // west's ztunnel obtains its own certificate for a key held here, then calls with it alone.
    const csr = await makeCsr();
    const issued = await client.createCertificate(csr.pem, {
      token: bind(west, 'west-token', 'ztunnel-w'),
      clusterId: 'west',
    });
    const mtls = new ZtunnelLikeClient(h.port, h.ca.rootCertPem(), {
      certPem: issued.cert_chain.slice(0, -1).join(''),
      keyPem: csr.keyPem,
    });
    try {
      const before = all.map(reviews);
      const issuedEast = await counter('citadel_server_success_cert_issuance_count', { cluster: 'east' });
      const res = await mtls.createCertificate((await makeCsr()).pem, { clusterId: 'south' });
      expect(peculiarSan(res.cert_chain[0]!).uris).toEqual([id('istio-system', 'ztunnel')]);
      // Filed under the local cluster (docs/ca.md); no API server was asked.
      expect(await counter('citadel_server_success_cert_issuance_count', { cluster: 'east' })).toBe(issuedEast + 1);
      // A trusted account, asking for a workload that is on west's node-1: a certificate carries no pod,
      // so no node is known for it in any cluster.
      await expect(
        mtls.createCertificate((await makeCsr()).pem, { clusterId: 'west', impersonate: id('default', 'sleep') }),
      ).rejects.toMatchObject(IMPERSONATION_FAILURE);
      expect(
        await counter('citadel_server_node_authorization_denial_count', {
          reason: 'caller_pod_unknown',
          cluster: 'east',
        }),
      ).toBe(1);
      expect(all.map(reviews)).toEqual(before);
    } finally {
      mtls.close();
    }
  });

  test('a cluster removed from the directory is refused at once, even with a cached review; re-added, it is reviewed afresh', async () => {
    const token = bind(north, 'north-token', 'ztunnel-n');
    await ask(token, 'north', id('default', 'ratings'));
    const before = reviews(north);
    dir.remove('north');
    await expect(ask(token, 'north', id('default', 'ratings'))).rejects.toMatchObject(AUTHENTICATE_FAILURE);
    expect(reviews(north)).toBe(before);
    // Its verifier (and cache) went with it: back in the mesh, the token is reviewed again.
    dir.add(remote(north));
    await ask(token, 'north', id('default', 'ratings'));
    expect(reviews(north)).toBe(before + 1);
  });

  test('an updated cluster (a new secret, a new store) answers from the replacement, with a fresh cache', async () => {
    const token = bind(west, 'west-token', 'ztunnel-w');
    await ask(token, 'west', id('default', 'sleep'));
    const before = reviews(west);
    const replaced = west.store;
    west.store = restore(west);
    dir.update(remote(west));
    await ask(token, 'west', id('default', 'sleep'));
    expect(reviews(west)).toBe(before + 1);
    // The replacement's store decides: a pod written to it now is granted, the replaced store is not read.
    putPod(west, pod('default', 'late-w', 'late', 'node-1'));
    expect(replaced.get('Pod', 'default', 'late-w')).toBeUndefined();
    const res = await ask(token, 'west', id('default', 'late'));
    expect(peculiarSan(res.cert_chain[0]!).uris).toEqual([id('default', 'late')]);
  });
});

describe('a caller whose cluster leaves between its authentication and its authorization', () => {
  let h: Harness;
  let client: ZtunnelLikeClient;

  beforeAll(async () => {
    // The authenticator has vouched for a caller of `west`, which the directory no longer holds.
    h = await startHarness({
      deps: {
        authenticator: () => ({
          authenticate: () =>
            Promise.resolve({
              identities: [id('istio-system', 'ztunnel')] as [string],
              namespace: 'istio-system',
              serviceAccount: 'ztunnel',
              podName: 'ztunnel-w',
              podUid: 'u',
              clusterId: 'west',
              via: 'token' as const,
            }),
        }),
      },
    });
    client = new ZtunnelLikeClient(h.port, h.ca.rootCertPem());
  });

  afterAll(async () => {
    client.close();
    await h.close();
  });

  test('is refused as unknown_cluster: no node of a cluster that is gone is read', async () => {
    await expect(client.createCertificate((await makeCsr()).pem, { token: 't' })).rejects.toMatchObject(
      AUTHENTICATE_FAILURE,
    );
    const metric = await h.metrics.getSingleMetric('citadel_server_authentication_failure_count')!.get();
    expect(metric.values).toEqual([{ value: 1, labels: { reason: 'unknown_cluster', cluster: 'west' } }]);
  });
});
