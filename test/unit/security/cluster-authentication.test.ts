// The authenticator across clusters: the `clusterid` header picks the cluster whose verifier reviews
// the token (istiod's order: "", the local id or an alias of it, then a remote, then a remote's
// alias); an id no cluster has is refused as unknown_cluster, naming the id in the message only.

import * as grpc from '@grpc/grpc-js';
import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';
import { AuthError } from '../../../src/security/auth-error';
import { createCallAuthenticator, resolveCluster, type TokenVerifier } from '../../../src/security/authenticator';
import type { VerifiedToken } from '../../../src/security/local-jwt';
import { MemoryStore } from '../../../src/store/memory-store';
import { meshCluster, TestClusterDirectory } from '../../support/cluster-directory';

/** A verifier that records what it was asked and answers as its cluster's API server would. */
class RecordingVerifier implements TokenVerifier {
  readonly asked: string[] = [];
  constructor(
    private readonly sa: string,
    private readonly gate?: Promise<void>,
  ) {}
  async verify(token: string): Promise<VerifiedToken> {
    this.asked.push(token);
    await this.gate;
    if (token === 'bad') throw new AuthError('invalid_token', 'TokenReview did not authenticate the token');
    return { namespace: 'istio-system', serviceAccount: this.sa, podName: 'zt', podUid: 'u', audiences: [], exp: 0 };
  }
}

function call(clusterid?: string | string[], token = 'tok'): ServerSurfaceCall {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  for (const id of typeof clusterid === 'string' ? [clusterid] : (clusterid ?? [])) metadata.add('clusterid', id);
  return { metadata, getAuthContext: () => ({}) } as unknown as ServerSurfaceCall;
}

function setup(aliases: [string, string][] = []) {
  const dir = new TestClusterDirectory('east', [
    meshCluster('east', new MemoryStore(), { local: true }),
    meshCluster('west', new MemoryStore()),
  ]);
  const verifiers = new Map<string, RecordingVerifier>([
    ['east', new RecordingVerifier('ztunnel-east')],
    ['west', new RecordingVerifier('ztunnel-west')],
  ]);
  const auth = createCallAuthenticator({
    trustDomain: () => 'cluster.local',
    clusters: dir,
    clusterAliases: new Map(aliases),
    meshIssuers: () => [],
    tokens: (id) => (dir.get(id) ? verifiers.get(id) : undefined),
  });
  return { dir, verifiers, auth };
}

describe('authentication across clusters', () => {
  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['the local id', 'east'],
    ['two headers (istiod reads one value only)', ['west', 'west']],
  ])('%s means the local cluster', async (_n, header) => {
    const { auth, verifiers } = setup();
    const caller = await auth.authenticate(call(header));
    expect(caller).toMatchObject({ clusterId: 'east', serviceAccount: 'ztunnel-east', via: 'token' });
    expect(verifiers.get('east')!.asked).toEqual(['tok']);
    expect(verifiers.get('west')!.asked).toEqual([]);
  });

  it("a remote id is reviewed by that cluster's verifier alone, and the caller carries its cluster", async () => {
    const { auth, verifiers } = setup();
    const caller = await auth.authenticate(call('west'));
    expect(caller).toMatchObject({ clusterId: 'west', serviceAccount: 'ztunnel-west' });
    expect(verifiers.get('west')!.asked).toEqual(['tok']);
    expect(verifiers.get('east')!.asked).toEqual([]);
  });

  it('an alias means the cluster it names, local or remote', async () => {
    const { auth } = setup([
      ['old-east', 'east'],
      ['old-west', 'west'],
    ]);
    expect((await auth.authenticate(call('old-east'))).clusterId).toBe('east');
    expect((await auth.authenticate(call('old-west'))).clusterId).toBe('west');
  });

  it('the local cluster (by an alias of it) comes first, then a remote of that id, as in istiod', () => {
    const { dir } = setup();
    expect(resolveCluster(dir, new Map([['west', 'east']]), 'west')?.id).toBe('east');
    expect(resolveCluster(dir, new Map([['west', 'nowhere']]), 'west')?.id).toBe('west');
  });

  it('an unknown id is refused as unknown_cluster, the id in the message, no verifier asked, no cluster label', async () => {
    const { auth, verifiers } = setup();
    const err = (await auth.authenticate(call('south')).catch((e: unknown) => e)) as AuthError;
    expect(err).toBeInstanceOf(AuthError);
    expect(err.reason).toBe('unknown_cluster');
    expect(err.message).toBe('clusterid "south" is not a cluster of this mesh (local "east", remote [west])');
    expect(err.cluster).toBeUndefined();
    expect([...verifiers.values()].flatMap((v) => v.asked)).toEqual([]);
  });

  it('a very long unknown id is cut short in the message', async () => {
    const { auth } = setup();
    const err = (await auth.authenticate(call('x'.repeat(5000))).catch((e: unknown) => e)) as AuthError;
    expect(err.reason).toBe('unknown_cluster');
    expect(err.message.length).toBeLessThan(300);
  });

  it("a refusal by a cluster's verifier keeps its reason and names the cluster", async () => {
    const { auth } = setup();
    const err = (await auth.authenticate(call('west', 'bad')).catch((e: unknown) => e)) as AuthError;
    expect(err).toMatchObject({ reason: 'invalid_token', cluster: 'west' });
    expect(err.message).toBe('cluster "west": TokenReview did not authenticate the token');
  });

  it('a cluster with no verifier (no API client) is refused', async () => {
    const { auth, dir } = setup();
    dir.add(meshCluster('north', new MemoryStore()));
    await expect(auth.authenticate(call('north'))).rejects.toMatchObject({
      reason: 'unknown_cluster',
      message: 'cluster "north" has no API server to review tokens against',
      cluster: 'north',
    });
  });

  it('a removed cluster is refused from then on', async () => {
    const { auth, dir } = setup();
    await auth.authenticate(call('west'));
    dir.remove('west');
    await expect(auth.authenticate(call('west'))).rejects.toMatchObject({ reason: 'unknown_cluster' });
  });

  it('a cluster removed while its review is in flight is refused when the review ends', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const dir = new TestClusterDirectory('east', [
      meshCluster('east', new MemoryStore(), { local: true }),
      meshCluster('west', new MemoryStore()),
    ]);
    const auth = createCallAuthenticator({
      trustDomain: () => 'cluster.local',
      clusters: dir,
      meshIssuers: () => [],
      tokens: () => new RecordingVerifier('ztunnel', gate),
    });
    const pending = auth.authenticate(call('west'));
    dir.remove('west');
    open();
    await expect(pending).rejects.toMatchObject({
      reason: 'unknown_cluster',
      message: 'cluster "west" was removed while its TokenReview was in flight',
      cluster: 'west',
    });
  });
});
