import type * as grpc from '@grpc/grpc-js';
import { ADDRESS_TYPE_URL } from '../../../src/xds/cache';
import { ADS_SERVICE, DELTA_METHOD, adsServiceDefinition, loadProtos } from '../../../src/xds/proto';
import { decodeDeltaRequest } from '../../../src/xds/request-wire';

const method = (loadProtos(['xds.proto'])[ADS_SERVICE] as grpc.ServiceDefinition)[DELTA_METHOD]!;
const encode = (req: Record<string, unknown>) => method.requestSerialize(req) as Buffer;

test('every field of a DeltaDiscoveryRequest encoded by protobufjs is read back', () => {
  const bytes = encode({
    node: {
      id: 'ztunnel~10.0.0.1~zt.istio-system~istio-system.svc.cluster.local',
      metadata: { fields: { NODE_NAME: { stringValue: 'n1' }, COUNT: { numberValue: 3 } } },
      locality: { region: 'r', zone: 'z', sub_zone: 's' },
    },
    type_url: ADDRESS_TYPE_URL,
    resource_names_subscribe: ['a', '/10.0.0.1'],
    resource_names_unsubscribe: ['*'],
    initial_resource_versions: { a: 'v1', 'ns/b': 'v2' },
    response_nonce: 'n-7',
    error_detail: { code: 0, message: 'a: bad enum' },
  });
  const req = decodeDeltaRequest(bytes);
  expect(req.type_url).toBe(ADDRESS_TYPE_URL);
  expect(req.resource_names_subscribe).toEqual(['a', '/10.0.0.1']);
  expect(req.resource_names_unsubscribe).toEqual(['*']);
  expect([...req.initial_resource_versions]).toEqual([['a', 'v1'], ['ns/b', 'v2']]);
  expect(req.response_nonce).toBe('n-7');
  expect(req.error_detail).toEqual({ code: 0, message: 'a: bad enum' });
  expect(req.node?.id).toBe('ztunnel~10.0.0.1~zt.istio-system~istio-system.svc.cluster.local');
  expect(req.node?.metadata?.fields?.['NODE_NAME']).toMatchObject({ kind: 'stringValue', stringValue: 'n1' });
  expect(req.node?.locality).toEqual({ region: 'r', zone: 'z', sub_zone: 's' });
});

test('an ACK has no error_detail and no node', () => {
  const req = decodeDeltaRequest(encode({ type_url: ADDRESS_TYPE_URL, response_nonce: 'n' }));
  expect(req.error_detail).toBeNull();
  expect(req.node).toBeNull();
  expect(req.initial_resource_versions.size).toBe(0);
});

test('a NACK whose error_detail is empty (code 0, no message) is still a NACK', () => {
  // proto3 writes an empty nested message as a zero-length field: presence is what counts.
  const req = decodeDeltaRequest(Buffer.concat([encode({ type_url: ADDRESS_TYPE_URL }), Buffer.from([0x3a, 0x00])]));
  expect(req.error_detail).toEqual({ code: 0, message: '' });
});

test('unknown fields are skipped', () => {
  const unknown = Buffer.from([0x40, 0x05, 0x4d, 1, 2, 3, 4]); // field 8 varint, field 9 fixed32
  const req = decodeDeltaRequest(Buffer.concat([unknown, encode({ type_url: 't' })]));
  expect(req.type_url).toBe('t');
});

test('a truncated message is refused', () => {
  const bytes = encode({ type_url: ADDRESS_TYPE_URL, resource_names_subscribe: ['abcdef'] });
  expect(() => decodeDeltaRequest(bytes.subarray(0, bytes.length - 2))).toThrow('runs past the end');
});

test('the server service definition decodes requests with the hand decoder', () => {
  expect(adsServiceDefinition()[DELTA_METHOD]!.requestDeserialize).toBe(decodeDeltaRequest);
});
