// Building istio.io/debug/syncz's ClientConfigs from the connected streams.

import type { DeltaStream } from '../../../src/xds/protocol/delta-stream';
import { parseNode } from '../../../src/xds/protocol/node';
import {
  MAX_SYNCZ_CLIENT_CONFIGS,
  clientConfig,
  controlPlaneIdentifier,
  synczClientConfigs,
  visibleTo,
} from '../../../src/xds/debug/sotw-syncz';
import { TypeSubscription } from '../../../src/xds/protocol/subscription';
import type { ProtoStruct } from '../../../src/xds/grpc/proto';

const ADDRESS = 'type.googleapis.com/istio.workload.Address';
const AUTHZ = 'type.googleapis.com/istio.security.Authorization';

function struct(m: Record<string, string>): ProtoStruct {
  return {
    fields: Object.fromEntries(Object.entries(m).map(([k, v]) => [k, { kind: 'stringValue', stringValue: v }])),
  };
}

/** A stream as syncz reads it: node and subscriptions only. */
function stream(pod: string, namespace: string, subs: TypeSubscription[] = []): DeltaStream {
  const node = parseNode({
    id: `ztunnel~10.0.0.1~${pod}.${namespace}~${namespace}.svc.cluster.local`,
    cluster: '',
    metadata: struct({ NAMESPACE: namespace, CLUSTER_ID: 'Kubernetes', NODE_NAME: 'node-1' }),
    locality: null,
  });
  return { node, subs: new Map(subs.map((s) => [s.typeUrl, s])) } as unknown as DeltaStream;
}

test('a type asked for and not answered yet is NOT_SENT, with no last_updated', () => {
  const pending = new TypeSubscription(AUTHZ, true);
  const sent = new TypeSubscription(ADDRESS, true);
  sent.nonceSent = 'a-1';
  sent.sentAt = new Date('2026-12-03T10:00:00.250Z');
  const c = clientConfig(stream('ztunnel-a', 'istio-system', [pending, sent]));
  expect(c.generic_xds_configs).toEqual([
    { type_url: AUTHZ, config_status: 'NOT_SENT' },
    { type_url: ADDRESS, config_status: 'STALE', last_updated: { seconds: 1796292000, nanos: 250_000_000 } },
  ]);
  // ISTIO_VERSION is sent only when the ztunnel sent it.
  expect(Object.keys(c.node.metadata.fields)).toEqual(['CLUSTER_ID', 'NAMESPACE']);
  // Named as istiod names the proxy (proxy-status's NAME column): pod.namespace, not the node id.
  expect(c.node.id).toBe('ztunnel-a.istio-system');
});

test('the system namespace sees every proxy; any other namespace only its own', () => {
  const streams = [stream('a', 'istio-system'), stream('b', 'app'), stream('c', 'other')];
  const ids = (ns: string) => synczClientConfigs(streams, visibleTo(ns, 'istio-system')).configs.map((c) => c.node.id);
  expect(ids('istio-system')).toHaveLength(3);
  expect(ids('app')).toEqual(['b.app']);
  expect(ids('nobody')).toEqual([]);
});

test('a stream whose node is not known yet is never listed', () => {
  const unknown = { node: undefined, subs: new Map() } as unknown as DeltaStream;
  expect(synczClientConfigs([unknown], visibleTo('istio-system', 'istio-system')).configs).toEqual([]);
});

test(`one answer holds at most MAX_SYNCZ_CLIENT_CONFIGS (${MAX_SYNCZ_CLIENT_CONFIGS}) ClientConfigs, sorted by node id; the rest are counted`, () => {
  const streams = Array.from({ length: MAX_SYNCZ_CLIENT_CONFIGS + 2 }, (_, i) => stream(`z${i}`, 'istio-system'));
  const { configs, omitted } = synczClientConfigs(streams, visibleTo('istio-system', 'istio-system'));
  expect(configs).toHaveLength(MAX_SYNCZ_CLIENT_CONFIGS);
  expect(omitted).toBe(2);
  const ids = configs.map((c) => c.node.id);
  expect(ids).toEqual([...ids].sort());
});

test("the control plane identifier is istiod's JSON: Component, ID (pod name) and BuildInfo", () => {
  expect(JSON.parse(controlPlaneIdentifier('istiod-1', { version: '0.9.0', runtime: 'v20.18.0' }))).toEqual({
    Component: 'istiod',
    ID: 'istiod-1',
    Info: { version: '0.9.0', revision: 'unknown', golang_version: 'v20.18.0', status: 'Clean', tag: '0.9.0' },
  });
});
