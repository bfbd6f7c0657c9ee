import { NodeError, parseNode } from '../../../src/xds/protocol/node';
import type { NodeMessage } from '../../../src/xds/grpc/proto';

const node = (id: string, metadata: Record<string, string> = {}): NodeMessage => ({
  id,
  cluster: '',
  locality: null,
  metadata: {
    fields: Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, { kind: 'stringValue', stringValue: v }])),
  },
});

test('a ztunnel node id and metadata give type, namespace, node name, cluster and IPs', () => {
  const p = parseNode(
    node('ztunnel~10.0.0.9~ztunnel-x.istio-system~istio-system.svc.cluster.local', {
      NAMESPACE: 'istio-system',
      NODE_NAME: 'worker-1',
      CLUSTER_ID: 'Kubernetes',
      INSTANCE_IPS: '10.0.0.9',
    }),
  );
  expect(p).toMatchObject({
    type: 'ztunnel',
    proxyId: 'ztunnel-x.istio-system',
    namespace: 'istio-system',
    nodeName: 'worker-1',
    clusterId: 'Kubernetes',
    ips: ['10.0.0.9'],
  });
});

test('without NAMESPACE metadata the namespace comes from the node id', () => {
  expect(parseNode(node('ztunnel~1.1.1.1~zt.kube-system~kube-system.svc.cluster.local')).namespace).toBe('kube-system');
});

test('non-string metadata values are kept as JSON', () => {
  const n = node('ztunnel~1.1.1.1~zt.ns~ns.svc.cluster.local');
  n.metadata!.fields!['LABELS'] = {
    kind: 'structValue',
    structValue: { fields: { app: { kind: 'stringValue', stringValue: 'z' } } },
  };
  expect(parseNode(n).metadata['LABELS']).toBe('{"app":"z"}');
});

test('a missing node or node id is refused', () => {
  expect(() => parseNode(null)).toThrow(NodeError);
  expect(() => parseNode(node(''))).toThrow('missing node id');
});

test('a node id without four parts is refused with the expected shape', () => {
  expect(() => parseNode(node('ztunnel~1.1.1.1'))).toThrow('must have 4 parts');
});

test('an unknown proxy type is refused naming the accepted ones', () => {
  expect(() => parseNode(node('gateway~1.1.1.1~a.b~b.svc.cluster.local'))).toThrow('unknown proxy type "gateway"');
});
