// --clusterAliases, as istiod's token authenticator reads it: a caller whose clusterid header names
// an alias of this cluster is this cluster's caller; any other cluster is still refused.

import * as grpc from '@grpc/grpc-js';
import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';
import { clusterAliasMap, parseServeOptions } from '../../../src/config/options';
import { AuthError } from '../../../src/security/auth-error';
import { createCallAuthenticator, type TokenVerifier } from '../../../src/security/authenticator';
import { singleCluster } from '../../../src/store/clusters';
import { MemoryStore } from '../../../src/store/memory-store';

const tokens: TokenVerifier = {
  verify: () =>
    Promise.resolve({
      namespace: 'istio-system',
      serviceAccount: 'ztunnel',
      podName: '',
      podUid: '',
      audiences: ['istio-ca'],
      exp: 0,
    }),
};

function callFrom(cluster: string): ServerSurfaceCall {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', 'Bearer t');
  metadata.set('clusterid', cluster);
  return { metadata, getAuthContext: () => ({}) } as unknown as ServerSurfaceCall;
}

function authenticator(aliases: string[]) {
  return createCallAuthenticator({
    trustDomain: () => 'cluster.local',
    clusters: singleCluster({ id: 'east', local: true, store: new MemoryStore(), synced: () => true }),
    clusterAliases: clusterAliasMap(aliases),
    meshIssuers: () => [],
    tokens: () => tokens,
  });
}

describe('--clusterAliases', () => {
  it('accepts a clusterid that is an alias of this cluster', async () => {
    const id = await authenticator(['old-east=east']).authenticate(callFrom('old-east'));
    expect(id.identities).toEqual(['spiffe://cluster.local/ns/istio-system/sa/ztunnel']);
  });

  it('still refuses a cluster that is neither this one nor an alias of it', async () => {
    await expect(authenticator(['old-east=east']).authenticate(callFrom('west'))).rejects.toMatchObject({
      reason: 'unknown_cluster',
    });
    await expect(authenticator(['old-west=west']).authenticate(callFrom('old-west'))).rejects.toBeInstanceOf(AuthError);
  });

  it('is parsed as alias=clusterID pairs, and a pair without both sides is a usage error', () => {
    const o = parseServeOptions(['--clusterAliases', 'a=b, c=d'], {});
    expect([...clusterAliasMap(o.flags.clusterAliases)]).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    expect(() => parseServeOptions(['--clusterAliases=a'], {})).toThrow(
      'invalid value for --clusterAliases: "a" is not alias=clusterID',
    );
    expect(() => parseServeOptions(['--clusterAliases', '=b'], {})).toThrow('"=b" is not alias=clusterID');
  });
});
