import type * as grpc from '@grpc/grpc-js';
import { ADDRESS_TYPE_URL, XdsResource } from '../../../src/xds/cache';
import { ADS_SERVICE, DELTA_METHOD, adsServiceDefinition, loadProtos } from '../../../src/xds/proto';
import { encodeResourceFrame, encodeResponseBody, resourceFrame, withNonce } from '../../../src/xds/wire';

const method = (loadProtos(['xds.proto'])[ADS_SERVICE] as grpc.ServiceDefinition)[DELTA_METHOD]!;
const decode = (b: Buffer) => method.responseDeserialize(b) as {
  type_url: string;
  nonce: string;
  removed_resources: string[];
  resources: { name: string; version: string; resource: { type_url: string; value: Buffer } }[];
};

const res = (name: string, size: number): XdsResource => ({ name, version: `v-${name}`, bytes: Buffer.alloc(size, 7) });

test('a hand-encoded response decodes with the proto: type, resources with Any, removals and nonce', () => {
  const body = encodeResponseBody({ typeUrl: ADDRESS_TYPE_URL, resources: [res('a', 3), res('ns/b', 300)], removed: ['gone', '/10.0.0.1'] });
  const out = decode(withNonce(body, 'n-1'));
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
  const out = decode(withNonce(encodeResponseBody({ typeUrl: ADDRESS_TYPE_URL, resources: [big], removed: [] }), 'x'));
  expect(out.resources[0]!.resource.value.length).toBe(70_000);
});

test('an empty response still names its type', () => {
  const out = decode(withNonce(encodeResponseBody({ typeUrl: ADDRESS_TYPE_URL, resources: [], removed: [] }), 'n'));
  expect(out).toMatchObject({ type_url: ADDRESS_TYPE_URL, resources: [], removed_resources: [], nonce: 'n' });
});

test('a resource version is framed once and the frame shared', () => {
  const r = res('a', 10);
  expect(resourceFrame(ADDRESS_TYPE_URL, r)).toBe(resourceFrame(ADDRESS_TYPE_URL, r));
  expect(resourceFrame(ADDRESS_TYPE_URL, r)).toEqual(encodeResourceFrame(ADDRESS_TYPE_URL, r));
});

test('the server service definition writes pre-encoded buffers as they are', () => {
  const serialize = adsServiceDefinition()[DELTA_METHOD]!.responseSerialize;
  const bytes = Buffer.from([1, 2, 3]);
  expect(serialize(bytes)).toBe(bytes);
});
