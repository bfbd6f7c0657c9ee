import type * as grpc from '@grpc/grpc-js';
import { ADDRESS_TYPE_URL, XdsResource } from '../../../src/contract/xds-resources';
import { ADS_SERVICE, DELTA_METHOD, adsServiceDefinition, loadProtos } from '../../../src/xds/grpc/proto';
import {
  NONCE_SLACK,
  encodeResourceFrame,
  encodeResponseBody,
  resourceFrame,
  serializeOutgoing,
} from '../../../src/xds/wire/wire';

const method = (loadProtos(['xds.proto'])[ADS_SERVICE] as grpc.ServiceDefinition)[DELTA_METHOD]!;
const decode = (b: Buffer) =>
  method.responseDeserialize(b) as {
    type_url: string;
    nonce: string;
    removed_resources: string[];
    resources: { name: string; version: string; resource: { type_url: string; value: Buffer } }[];
  };

const res = (name: string, size: number): XdsResource => ({ name, version: `v-${name}`, bytes: Buffer.alloc(size, 7) });

test('a hand-encoded response decodes with the proto: type, resources with Any, removals and nonce', () => {
  const body = encodeResponseBody({
    typeUrl: ADDRESS_TYPE_URL,
    resources: [res('a', 3), res('ns/b', 300)],
    removed: ['gone', '/10.0.0.1'],
  });
  const out = decode(body.withNonce('n-1'));
  expect(out.type_url).toBe(ADDRESS_TYPE_URL);
  expect(out.nonce).toBe('n-1');
  expect(out.removed_resources).toEqual(['gone', '/10.0.0.1']);
  expect(out.resources.map((r) => [r.name, r.version, r.resource.type_url, r.resource.value.length])).toEqual([
    ['a', 'v-a', ADDRESS_TYPE_URL, 3],
    ['ns/b', 'v-ns/b', ADDRESS_TYPE_URL, 300],
  ]);
  expect([...out.resources[1]!.resource.value]).toEqual(new Array(300).fill(7));
});

test('lengths that need multi-byte varints are framed correctly', () => {
  const big = res('big', 70_000);
  const out = decode(encodeResponseBody({ typeUrl: ADDRESS_TYPE_URL, resources: [big], removed: [] }).withNonce('x'));
  expect(out.resources[0]!.resource.value.length).toBe(70_000);
});

test('an empty response still names its type', () => {
  const out = decode(encodeResponseBody({ typeUrl: ADDRESS_TYPE_URL, resources: [], removed: [] }).withNonce('n'));
  expect(out).toMatchObject({ type_url: ADDRESS_TYPE_URL, resources: [], removed_resources: [], nonce: 'n' });
});

test('a resource version is framed once and the frame shared', () => {
  const r = res('a', 10);
  expect(resourceFrame(ADDRESS_TYPE_URL, r)).toBe(resourceFrame(ADDRESS_TYPE_URL, r));
  expect(resourceFrame(ADDRESS_TYPE_URL, r)).toEqual(encodeResourceFrame(ADDRESS_TYPE_URL, r));
});

test('one body serves many streams: each nonce replaces the previous one in place', () => {
  const body = encodeResponseBody({ typeUrl: ADDRESS_TYPE_URL, resources: [res('a', 5)], removed: [] });
  const first = Buffer.from(body.withNonce('stream-1-1'));
  const second = Buffer.from(body.withNonce('s2'));
  expect(decode(first).nonce).toBe('stream-1-1');
  expect(decode(second).nonce).toBe('s2');
  expect(decode(second).resources.map((r) => r.name)).toEqual(['a']);
});

test(`a nonce longer than the room after the body (${NONCE_SLACK} bytes) is still encoded`, () => {
  const body = encodeResponseBody({ typeUrl: ADDRESS_TYPE_URL, resources: [], removed: ['x'] });
  const long = 'n'.repeat(NONCE_SLACK * 2);
  expect(decode(body.withNonce(long))).toMatchObject({ nonce: long, removed_resources: ['x'] });
  expect(decode(body.withNonce('short')).nonce).toBe('short');
});

test('the server serializer joins the shared body and the stream nonce', () => {
  const body = encodeResponseBody({ typeUrl: ADDRESS_TYPE_URL, resources: [], removed: [] });
  expect(adsServiceDefinition()[DELTA_METHOD]!.responseSerialize).toBe(serializeOutgoing);
  expect(decode(serializeOutgoing({ body, nonce: 'z' })).nonce).toBe('z');
});

test('a gRPC frame in pieces (prefix, shared body, nonce) carries the same message, and later frames leave the body piece as it was', () => {
  const body = encodeResponseBody({
    typeUrl: ADDRESS_TYPE_URL,
    resources: [res('a', 5), res('b', 70_000)],
    removed: [],
  });
  const pieces = body.grpcFrame('stream-7-1');
  const snapshot = Buffer.from(pieces[1]!);
  body.grpcFrame('n'.repeat(NONCE_SLACK * 2));
  body.withNonce('other');
  expect(pieces[1]!.equals(snapshot)).toBe(true);
  const frame = Buffer.concat(pieces);
  expect(frame[0]).toBe(0); // not compressed
  expect(frame.readUInt32BE(1)).toBe(frame.length - 5);
  const out = decode(frame.subarray(5));
  expect(out.nonce).toBe('stream-7-1');
  expect(out.resources.map((r) => [r.name, r.resource.value.length])).toEqual([
    ['a', 5],
    ['b', 70_000],
  ]);
  expect(frame.subarray(5).equals(Buffer.from(body.withNonce('stream-7-1')))).toBe(true);
});
