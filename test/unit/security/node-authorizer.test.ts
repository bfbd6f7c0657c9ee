import type { CallerIdentity } from '../../../src/server/context';
import { MemoryStore } from '../../../src/store/memory-store';
import type { KubeObject } from '../../../src/store/types';
import { NODE_SA_INDEX, NodeAuthorizer, podNodeServiceAccountKeys } from '../../../src/security/node-authorizer';

function pod(
  ns: string,
  name: string,
  uid: string,
  sa: string | undefined,
  node: string | undefined,
  phase = 'Running',
): KubeObject {
  return {
    metadata: { name, namespace: ns, uid },
    spec: { ...(sa ? { serviceAccountName: sa } : {}), ...(node ? { nodeName: node } : {}) },
    status: { phase },
  };
}

const ztunnel: CallerIdentity = {
  identities: ['spiffe://cluster.local/ns/istio-system/sa/ztunnel'],
  namespace: 'istio-system',
  serviceAccount: 'ztunnel',
  podName: 'ztunnel-a',
  podUid: 'uid-zt',
  via: 'token',
};

function setup(trusted = ['istio-system/ztunnel']) {
  const store = new MemoryStore();
  store.upsert('Pod', [
    pod('istio-system', 'ztunnel-a', 'uid-zt', 'ztunnel', 'node-a'),
    pod('default', 'sleep-1', 'uid-s', 'sleep', 'node-a'),
    pod('default', 'plain-1', 'uid-p', undefined, 'node-a'),
  ]);
  const authorizer = new NodeAuthorizer(store, {
    trustedAccounts: trusted,
    trustDomains: () => ['cluster.local', 'old.example'],
  });
  return { store, authorizer };
}

describe('node authorization', () => {
  test('an empty CA_TRUSTED_NODE_ACCOUNTS disables impersonation', () => {
    expect(setup([]).authorizer.authorize(ztunnel, 'spiffe://cluster.local/ns/default/sa/sleep')).toMatchObject({
      allowed: false,
      reason: 'impersonation_disabled',
    });
  });

  test('an identity in a trust domain alias is allowed', () => {
    expect(setup().authorizer.authorize(ztunnel, 'spiffe://old.example/ns/default/sa/sleep')).toEqual({
      allowed: true,
      node: 'node-a',
    });
  });

  test('a pod without serviceAccountName runs as "default"', () => {
    expect(setup().authorizer.authorize(ztunnel, 'spiffe://cluster.local/ns/default/sa/default')).toEqual({
      allowed: true,
      node: 'node-a',
    });
  });

  test('a caller without pod claims is denied as caller_pod_unknown', () => {
    const { podName: _n, podUid: _u, ...noPod } = ztunnel;
    expect(setup().authorizer.authorize(noPod, 'spiffe://cluster.local/ns/default/sa/sleep')).toMatchObject({
      allowed: false,
      reason: 'caller_pod_unknown',
    });
  });

  test('the node check is one index lookup, never a scan of pods', () => {
    const { store, authorizer } = setup();
    const list = jest.spyOn(store, 'list');
    const byIndex = jest.spyOn(store, 'byIndex');
    authorizer.authorize(ztunnel, 'spiffe://cluster.local/ns/default/sa/sleep');
    expect(list).not.toHaveBeenCalled();
    expect(byIndex).toHaveBeenCalledTimes(1);
    expect(byIndex).toHaveBeenCalledWith('Pod', NODE_SA_INDEX, 'node-a/default/sleep');
  });

  test('a pod that moves to a terminal phase leaves the index at once', () => {
    const { store, authorizer } = setup();
    store.upsert('Pod', [pod('default', 'sleep-1', 'uid-s', 'sleep', 'node-a', 'Failed')]);
    expect(authorizer.authorize(ztunnel, 'spiffe://cluster.local/ns/default/sa/sleep')).toMatchObject({
      allowed: false,
      reason: 'no_pod_on_node',
    });
  });

  test('unscheduled and terminal pods have no index key', () => {
    expect(podNodeServiceAccountKeys(pod('a', 'p', 'u', 'sa', undefined))).toEqual([]);
    expect(podNodeServiceAccountKeys(pod('a', 'p', 'u', 'sa', 'n', 'Succeeded'))).toEqual([]);
    expect(podNodeServiceAccountKeys(pod('a', 'p', 'u', 'sa', 'n'))).toEqual(['n/a/sa']);
  });

  test.each(['Failed', 'Succeeded'])('a caller whose own pod is %s cannot impersonate', (phase) => {
    const { store, authorizer } = setup();
    store.upsert('Pod', [pod('istio-system', 'ztunnel-a', 'uid-zt', 'ztunnel', 'node-a', phase)]);
    expect(authorizer.authorize(ztunnel, 'spiffe://cluster.local/ns/default/sa/sleep')).toMatchObject({
      allowed: false,
      reason: 'caller_pod_terminated',
    });
  });

  test('an unscheduled caller pod is denied as caller_pod_unscheduled, not as a missing target', () => {
    const { store, authorizer } = setup();
    store.upsert('Pod', [pod('istio-system', 'ztunnel-a', 'uid-zt', 'ztunnel', undefined, 'Pending')]);
    expect(authorizer.authorize(ztunnel, 'spiffe://cluster.local/ns/default/sa/sleep')).toMatchObject({
      allowed: false,
      reason: 'caller_pod_unscheduled',
    });
  });
});
