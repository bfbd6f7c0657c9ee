// DeltaRequestFramer in place of grpc-js's message decoder: however a request's bytes are cut into
// DATA chunks, the decoded request is the one decodeDeltaRequest reads from the whole message, and
// whatever the streamed reading does not expect is handed over whole, framed as grpc-js frames it.

import type * as grpc from '@grpc/grpc-js';
import { ADDRESS_TYPE_URL } from '../../../src/contract/xds-resources';
import { MAX_RESOURCE_NAME_BYTES } from '../../../src/xds/wire/client-limits';
import { ADS_SERVICE, DELTA_METHOD, loadProtos } from '../../../src/xds/grpc/proto';
import { DeltaRequestFramer, STREAMED_REQUEST_MIN_BYTES } from '../../../src/xds/wire/request-stream';
import { decodeDeltaRequest } from '../../../src/xds/wire/request-wire';
import type { DeltaDiscoveryRequest } from '../../../src/xds/wire/messages';
import { digestMap, digestStrings } from '../../../src/xds/wire/version-digest';

function varint(n: number): number[] {
  const out: number[] = [];
  for (; n >= 0x80; n >>>= 7) out.push((n & 0x7f) | 0x80);
  out.push(n);
  return out;
}

const method = (loadProtos(['xds.proto'])[ADS_SERVICE] as grpc.ServiceDefinition)[DELTA_METHOD]!;
const encode = (req: Record<string, unknown>) => method.requestSerialize(req);
const NODE = {
  id: 'ztunnel~10.0.0.1~ztunnel-abc.istio-system~istio-system.svc.cluster.local',
  metadata: { fields: { NAMESPACE: { stringValue: 'istio-system' }, NODE_NAME: { stringValue: 'node-1' } } },
};

function held(n: number, version = (i: number) => `v${i % 7}-0123456789abcdef`): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < n; i++) out[`Kubernetes//Pod/ns-${i % 10}/app-${i}`] = version(i);
  return out;
}

/** A reconnect's first Address request: node, type_url and `count` held versions. */
const reconnect = (count: number, extra: Record<string, unknown> = {}) =>
  encode({ node: NODE, type_url: ADDRESS_TYPE_URL, initial_resource_versions: held(count), ...extra });

function frame(message: Buffer, compressed = false): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out[0] = compressed ? 1 : 0;
  out.writeUInt32BE(message.length, 1);
  message.copy(out, 5);
  return out;
}

/** Feeds `bytes` to a framer in pieces of the given sizes (cycled), as DATA chunks. */
function feed(framer: DeltaRequestFramer, bytes: Buffer, sizes: readonly number[]): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const n = sizes[i % sizes.length]!;
    // Each chunk a buffer of its own, as node:http2 hands them.
    out.push(...framer.write(Buffer.from(bytes.subarray(at, at + n))));
    at += n;
  }
  return out;
}

/** What grpc-js's decompression hands the decoder for an uncompressed message. */
const decodeFramed = (framed: Buffer) => decodeDeltaRequest(framed.subarray(5));

function expectSameRequest(got: DeltaDiscoveryRequest, want: DeltaDiscoveryRequest): void {
  expect(got.invalid).toEqual(want.invalid);
  expect(got.node).toEqual(want.node);
  expect(got.type_url).toBe(want.type_url);
  expect(got.resource_names_subscribe).toEqual(want.resource_names_subscribe);
  expect(got.resource_names_unsubscribe).toEqual(want.resource_names_unsubscribe);
  expect(got.response_nonce).toBe(want.response_nonce);
  expect(got.error_detail).toEqual(want.error_detail);
  expect(got.initial_resource_versions.size).toBe(want.initial_resource_versions.size);
  expect(got.initial_resource_versions.digest).toEqual(want.initial_resource_versions.digest);
  expect([...got.initial_resource_versions.map()]).toEqual([...want.initial_resource_versions.map()]);
}

const SPLITS: [string, number[]][] = [
  ['16 KiB DATA frames', [16_384]],
  ['one byte at a time', [1]],
  ['uneven pieces', [1, 2, 3, 5, 7, 11, 13, 997, 4093]],
  ['one chunk', [1 << 30]],
];

describe('a large request read as it arrives', () => {
  const message = reconnect(3_000, { resource_names_subscribe: ['*'], response_nonce: '' });

  test('is large enough to be streamed', () => {
    expect(message.length).toBeGreaterThan(STREAMED_REQUEST_MIN_BYTES);
  });

  test.each(SPLITS)('decodes as the whole message does, cut into %s', (_, sizes) => {
    const framed = feed(new DeltaRequestFramer(-1), frame(message), sizes);
    expect(framed).toHaveLength(1);
    // The entries were digested as they came: the message handed on holds only the other fields.
    expect(framed[0]!.length).toBeLessThan(2_000);
    expectSameRequest(decodeFramed(framed[0]!), decodeDeltaRequest(message));
  });

  test('messages before and after it, in the same chunks, come out in order and unchanged', () => {
    const ack = encode({ type_url: ADDRESS_TYPE_URL, response_nonce: 'n-1' });
    const bytes = Buffer.concat([frame(ack), frame(message), frame(ack), frame(Buffer.alloc(0))]);
    for (const [, sizes] of SPLITS) {
      const framed = feed(new DeltaRequestFramer(-1), bytes, sizes);
      expect(framed).toHaveLength(4);
      expect(framed[0]).toEqual(frame(ack));
      expectSameRequest(decodeFramed(framed[1]!), decodeDeltaRequest(message));
      expect(framed[2]).toEqual(frame(ack));
      expect(framed[3]).toEqual(frame(Buffer.alloc(0)));
    }
  });

  test('entries written in two runs with other fields between them are all digested', () => {
    const split = Buffer.concat([
      encode({ initial_resource_versions: held(1_500) }),
      encode({ node: NODE, type_url: ADDRESS_TYPE_URL, response_nonce: 'x' }),
      encode({ initial_resource_versions: held(3_000, (i) => `w${i}`) }),
    ]);
    const framed = feed(new DeltaRequestFramer(-1), frame(split), [4_093]);
    expectSameRequest(decodeFramed(framed[0]!), decodeDeltaRequest(split));
  });

  test('an empty entry (empty name and version) is digested as the decoder digests it', () => {
    const withEmpty = Buffer.concat([message, Buffer.from([0x2a, 0x00])]);
    const framed = feed(new DeltaRequestFramer(-1), frame(withEmpty), [16_384]);
    expect(framed[0]!.length).toBeLessThan(2_000);
    expectSameRequest(decodeFramed(framed[0]!), decodeDeltaRequest(withEmpty));
  });

  test('entries written otherwise than protobufjs writes them digest as the same pairs', () => {
    // prost leaves an empty version out; another encoder may put the version first; a long name
    // takes a two-byte length. The streamed reading hands these to the slow path, which digests
    // the same (name, version) pairs as the canonical entries around them.
    const entry = (payload: Buffer) => Buffer.concat([Buffer.from([0x2a, ...varint(payload.length)]), payload]);
    const str = (tag: number, s: string) =>
      Buffer.concat([Buffer.from([tag, ...varint(Buffer.byteLength(s))]), Buffer.from(s)]);
    const long = 'Kubernetes//Pod/ns/' + 'x'.repeat(300);
    const odd = Buffer.concat([
      entry(str(0x0a, 'no-version')),
      entry(Buffer.concat([str(0x12, 'v-first'), str(0x0a, 'version-first')])),
      entry(Buffer.concat([str(0x0a, long), str(0x12, 'v-long')])),
    ]);
    const withOdd = Buffer.concat([message, odd, message]);
    for (const [, sizes] of SPLITS) {
      const framed = feed(new DeltaRequestFramer(-1), frame(withOdd), sizes);
      expect(framed[0]!.length).toBeLessThan(2_000);
      const got = decodeFramed(framed[0]!);
      expectSameRequest(got, decodeDeltaRequest(withOdd));
      const pairs = new Map(Object.entries(held(3_000)));
      const twice = digestMap(pairs);
      for (const [n, v] of pairs) digestStrings(twice, n, v);
      for (const [n, v] of [
        ['no-version', ''],
        ['version-first', 'v-first'],
        [long, 'v-long'],
      ] as const)
        digestStrings(twice, n, v);
      expect(got.initial_resource_versions.digest).toEqual(twice);
    }
  });

  test('the digest is not taken by a message it was not made for', () => {
    const framed = feed(new DeltaRequestFramer(-1), frame(message), [16_384]);
    // A copy of the compact message: the same bytes, no digest beside them, so no held versions.
    const copy = Buffer.from(framed[0]!);
    expect(decodeFramed(copy).initial_resource_versions.size).toBe(0);
    expect(decodeFramed(framed[0]!).initial_resource_versions.size).toBe(3_000);
  });
});

describe('handed over whole, as grpc-js frames it', () => {
  const concat = (framedMessage: Buffer) => [framedMessage];

  test('a message under STREAMED_REQUEST_MIN_BYTES', () => {
    const small = reconnect(10);
    expect(feed(new DeltaRequestFramer(-1), frame(small), [7])).toEqual(concat(frame(small)));
  });

  test('a compressed message (the decompressor needs every byte)', () => {
    const bytes = frame(reconnect(3_000), true);
    expect(feed(new DeltaRequestFramer(-1), bytes, [16_384])).toEqual(concat(bytes));
  });

  test('a field of another wire type at the top level', () => {
    const odd = Buffer.concat([reconnect(3_000), Buffer.from([(9 << 3) | 0, 0x01])]);
    expect(feed(new DeltaRequestFramer(-1), frame(odd), [16_384])).toEqual(concat(frame(odd)));
  });

  test('a field running past the end of the message: the decoder refuses it as before', () => {
    const truncated = Buffer.concat([reconnect(3_000), Buffer.from([0x32, 0x40, 0x61])]);
    const framed = feed(new DeltaRequestFramer(-1), frame(truncated), [16_384]);
    expect(framed).toEqual(concat(frame(truncated)));
    expect(() => decodeFramed(framed[0]!)).toThrow(/runs past the end/);
  });

  test('a held name over MAX_RESOURCE_NAME_BYTES: refused with the same words as the whole message', () => {
    const long = encode({
      node: NODE,
      type_url: ADDRESS_TYPE_URL,
      initial_resource_versions: { ...held(3_000), ['n'.repeat(MAX_RESOURCE_NAME_BYTES + 1)]: 'v' },
    });
    const framed = feed(new DeltaRequestFramer(-1), frame(long), [16_384]);
    expect(framed).toEqual(concat(frame(long)));
    const req = decodeFramed(framed[0]!);
    expect(req.invalid).toContain('MAX_RESOURCE_NAME_BYTES');
    expect(req.invalid).toBe(decodeDeltaRequest(long).invalid);
  });
});

test('a message over grpc.max_receive_message_length is refused as grpc-js refuses it, before its body', () => {
  const framer = new DeltaRequestFramer(1_000);
  expect(() => framer.write(frame(reconnect(100)))).toThrow(/^Received message larger than max \(\d+ vs 1000\)$/);
});
