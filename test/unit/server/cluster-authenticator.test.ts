// The composition root's authenticator over a ClusterDirectory: which clusters get a verifier in
// each mode, and that closing it lets go of the directory and every cluster's pod subscription.

import * as grpc from '@grpc/grpc-js';
import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';
import { parseServeOptions } from '../../../src/config/options';
import { loadOrCreateTokenKey, signLocalToken } from '../../../src/security/local-jwt';
import type { TokenReviewer } from '../../../src/security/token-review';
import { callAuthenticatorFactory } from '../../../src/server/authenticator';
import { MemoryStore } from '../../../src/store/memory-store';
import { tempDir } from '../../support/ca/fixtures';
import { staticMesh } from '../../support/ca/harness';
import { meshCluster, TestClusterDirectory } from '../../support/cluster-directory';

function call(token: string, clusterid: string): ServerSurfaceCall {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  metadata.set('clusterid', clusterid);
  return { metadata, getAuthContext: () => ({}) } as unknown as ServerSurfaceCall;
}

/** A store that counts its subscribers, through the subscribe it offers. */
class CountingStore extends MemoryStore {
  subscribers = 0;
  override subscribe(listener: Parameters<MemoryStore['subscribe']>[0]): () => void {
    this.subscribers++;
    const off = super.subscribe(listener);
    return () => {
      this.subscribers--;
      off();
    };
  }
}

describe('callAuthenticatorFactory over a ClusterDirectory', () => {
  it("local mode: the server's own tokens are the local cluster's; a remote cluster has no verifier", async () => {
    const stateDir = tempDir();
    const options = parseServeOptions(['--configDir', stateDir, '--stateDir', stateDir], { CLUSTER_ID: 'east' });
    const dir = new TestClusterDirectory('east', [
      meshCluster('east', new MemoryStore(), { local: true }),
      meshCluster('west', new MemoryStore()),
    ]);
    const auth = callAuthenticatorFactory(options, staticMesh(), dir)(() => []);
    const token = signLocalToken(
      loadOrCreateTokenKey(stateDir),
      { namespace: 'istio-system', serviceAccount: 'ztunnel', podName: 'z', podUid: 'u' },
      ['istio-ca'],
      600,
    );
    expect(await auth.authenticate(call(token, 'east'))).toMatchObject({
      clusterId: 'east',
      serviceAccount: 'ztunnel',
    });
    await expect(auth.authenticate(call(token, 'west'))).rejects.toMatchObject({
      reason: 'unknown_cluster',
      cluster: 'west',
    });
    auth.close?.();
  });

  it('Kubernetes mode: each cluster reviews with its own reviewer, and close() ends every subscription', async () => {
    const options = parseServeOptions([], { CLUSTER_ID: 'east' });
    const asked: string[] = [];
    const reviewer: TokenReviewer = {
      review: (token) => {
        asked.push(token);
        return Promise.resolve({
          authenticated: true,
          username: 'system:serviceaccount:istio-system:ztunnel',
          audiences: ['istio-ca'],
        });
      },
    };
    const eastStore = new CountingStore();
    const westStore = new CountingStore();
    const dir = new TestClusterDirectory('east', [
      meshCluster('east', eastStore, { local: true }),
      // No client: a remote this server cannot ask.
      meshCluster('west', westStore),
    ]);
    const auth = callAuthenticatorFactory(options, staticMesh(), dir, { tokenReviewer: reviewer })(() => []);
    expect(await auth.authenticate(call('t', 'east'))).toMatchObject({ clusterId: 'east' });
    expect(asked).toEqual(['t']);
    await expect(auth.authenticate(call('t', 'west'))).rejects.toMatchObject({ reason: 'unknown_cluster' });
    // The local verifier watches the local store for pod deletions; the directory is followed.
    expect(eastStore.subscribers).toBe(1);
    expect(westStore.subscribers).toBe(0);
    expect(dir.subscribers).toBe(1);
    auth.close?.();
    expect(eastStore.subscribers).toBe(0);
    expect(dir.subscribers).toBe(0);
  });

  it('Kubernetes mode without any way to reach the local API server is refused at start', () => {
    const options = parseServeOptions([], { CLUSTER_ID: 'east' });
    const dir = new TestClusterDirectory('east', [meshCluster('east', new MemoryStore(), { local: true })]);
    expect(() => callAuthenticatorFactory(options, staticMesh(), dir)(() => [])).toThrow(
      'Kubernetes mode needs a kubeConfig (or a tokenReviewer) for the CA',
    );
  });
});
