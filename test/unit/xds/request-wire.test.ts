import type * as grpc from '@grpc/grpc-js';
import { ADDRESS_TYPE_URL } from '../../../src/contract/xds-resources';
import { ADS_SERVICE, DELTA_METHOD, adsServiceDefinition, loadProtos } from '../../../src/xds/grpc/proto';
import { decodeDeltaRequest } from '../../../src/xds/wire/request-wire';
import { digestMap, sameDigest } from '../../../src/xds/wire/version-digest';
import { ack } from '../../../bench/xds-client-worker';

const method = (loadProtos(['xds.proto'])[ADS_SERVICE] as grpc.ServiceDefinition)[DELTA_METHOD]!;
const encode = (req: Record<string, unknown>) => method.requestSerialize(req);

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
  expect([...req.initial_resource_versions.map()]).toEqual([
    ['a', 'v1'],
    ['ns/b', 'v2'],
  ]);
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

describe('initial_resource_versions read from the raw bytes', () => {
  const held = {
    'Kubernetes//Pod/ns-1/a': '0123456789abcdef',
    'ns-1/svc.ns-1.svc.cluster.local': 'fedcba9876543210',
    'ns/ünï': 'v',
  };

  test('the digest read from the bytes equals the digest of the same map held by the server', () => {
    const req = decodeDeltaRequest(encode({ type_url: ADDRESS_TYPE_URL, initial_resource_versions: held }));
    expect(req.initial_resource_versions.size).toBe(3);
    expect(sameDigest(req.initial_resource_versions.digest, digestMap(new Map(Object.entries(held))))).toBe(true);
    expect(Object.fromEntries(req.initial_resource_versions.map())).toEqual(held);
  });

  // A map entry is a message: its fields may come in any order, be absent, repeat, or be unknown.
  const entry = (...fields: Buffer[]) => {
    const body = Buffer.concat(fields);
    return Buffer.concat([Buffer.from([0x2a, body.length]), body]);
  };
  const str = (tag: number, s: string) => Buffer.concat([Buffer.from([tag, Buffer.byteLength(s)]), Buffer.from(s)]);

  test('unusual entry encodings decode as protobufjs decodes them, and digest the same', () => {
    const bytes = Buffer.concat([
      encode({ type_url: ADDRESS_TYPE_URL }),
      entry(str(0x12, 'v-b'), str(0x0a, 'b')), // value first
      entry(str(0x0a, 'c')), // no value
      entry(str(0x0a, 'd'), Buffer.from([0x18, 0x07]), str(0x12, 'v-d')), // an unknown varint field
      entry(str(0x0a, 'x'), str(0x0a, 'e'), str(0x12, 'old'), str(0x12, 'v-e')), // repeated fields: the last wins
    ]);
    const reference = method.requestDeserialize(bytes) as { initial_resource_versions: Record<string, string> };
    const req = decodeDeltaRequest(bytes);
    const map = req.initial_resource_versions.map();
    expect(Object.fromEntries(map)).toEqual(reference.initial_resource_versions);
    expect(Object.fromEntries(map)).toEqual({ b: 'v-b', c: '', d: 'v-d', e: 'v-e' });
    expect(sameDigest(req.initial_resource_versions.digest, digestMap(map))).toBe(true);
  });

  test("a name listed twice: the last value wins in the map, and the digest differs from the map's", () => {
    const bytes = Buffer.concat([
      encode({ type_url: ADDRESS_TYPE_URL }),
      entry(str(0x0a, 'a'), str(0x12, '1')),
      entry(str(0x0a, 'a'), str(0x12, '2')),
    ]);
    const req = decodeDeltaRequest(bytes);
    expect(req.initial_resource_versions.size).toBe(2);
    expect([...req.initial_resource_versions.map()]).toEqual([['a', '2']]);
    expect(sameDigest(req.initial_resource_versions.digest, digestMap(new Map([['a', '2']])))).toBe(false);
  });

  test('an entry running past its end is refused', () => {
    const bytes = Buffer.concat([
      encode({ type_url: ADDRESS_TYPE_URL }),
      Buffer.from([0x2a, 0x04, 0x0a, 0x09, 0x61, 0x62]),
    ]);
    expect(() => decodeDeltaRequest(bytes)).toThrow('runs past the end');
  });

  test('fuzz: a mutated request either fails to decode or, when its digest matches the set, holds exactly that set', () => {
    // The property the server relies on: equal digests are only ever taken for equal sets; a
    // garbled request must not throw anything but an Error.
    let seed = 42;
    const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const set = new Map<string, string>();
    for (let i = 0; i < 50; i++)
      set.set(`Kubernetes//Pod/ns-${i % 3}/pod-${i}`, ((i * 2654435761) >>> 0).toString(16).padStart(16, '0'));
    const valid = encode({ type_url: ADDRESS_TYPE_URL, initial_resource_versions: Object.fromEntries(set) });
    const target = digestMap(set);
    let decoded = 0;
    let matched = 0;
    for (let round = 0; round < 3000; round++) {
      const bytes = Buffer.from(valid);
      const mutations = 1 + Math.floor(rand() * 4);
      for (let m = 0; m < mutations; m++) {
        const at = Math.floor(rand() * bytes.length);
        const kind = rand();
        if (kind < 0.6) bytes[at] = Math.floor(rand() * 256);
        else if (kind < 0.8) bytes[at] = bytes[at]! ^ (1 << Math.floor(rand() * 8));
        else bytes.copyWithin(at, Math.floor(rand() * bytes.length));
      }
      const input = rand() < 0.2 ? bytes.subarray(0, Math.floor(rand() * bytes.length)) : bytes;
      let req;
      try {
        req = decodeDeltaRequest(input);
      } catch (err) {
        expect(err).toBeInstanceOf(Error);
        continue;
      }
      decoded++;
      // The digest pass already walked these bytes, so decoding the map cannot fail afterwards.
      const map = req.initial_resource_versions.map();
      if (sameDigest(req.initial_resource_versions.digest, target)) {
        matched++;
        expect(new Map(map)).toEqual(set);
      }
    }
    expect(decoded).toBeGreaterThan(100);
    // Some mutations land outside initial_resource_versions (type_url, tags of unknown fields) and keep the set.
    expect(matched).toBeGreaterThan(0);
  });
});

test("the bench client's hand-framed ACK is the message protobufjs frames", () => {
  const frame = ack(ADDRESS_TYPE_URL, 'ab-12');
  expect(frame.readUInt32BE(1)).toBe(frame.length - 5);
  expect(frame.subarray(5)).toEqual(encode({ type_url: ADDRESS_TYPE_URL, response_nonce: 'ab-12' }));
  const req = decodeDeltaRequest(frame.subarray(5));
  expect(req.type_url).toBe(ADDRESS_TYPE_URL);
  expect(req.response_nonce).toBe('ab-12');
});
