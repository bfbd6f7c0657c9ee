// Reading a State-of-the-World DiscoveryRequest within its limits.

import * as path from 'node:path';
import * as protobuf from 'protobufjs';
import { protoDir } from '../../../src/proto-files';
import { MAX_SOTW_REQUEST_BYTES, MAX_SOTW_RESOURCE_NAMES, decodeSotwRequest } from '../../../src/xds/wire/sotw-wire';
import { MAX_TYPE_URL_BYTES } from '../../../src/xds/wire/client-limits';

const root = new protobuf.Root();
root.loadSync(path.join(protoDir(), 'xds.proto'), { keepCase: true });
const Request = root.lookupType('envoy.service.discovery.v3.DiscoveryRequest');
const encode = (o: Record<string, unknown>) => Buffer.from(Request.encode(Request.fromObject(o)).finish());

test("istioctl's request: node id, type, names, its own nonce", () => {
  const req = decodeSotwRequest(
    encode({
      node: { id: 'sidecar~10.0.0.9~test-1.default~default.svc.cluster.local' },
      type_url: 'istio.io/debug/syncz',
      resource_names: ['a'],
      response_nonce: 'Thu Dec  3 11:00:00 UTC 2026',
    }),
  );
  expect(req).toEqual({
    nodeId: 'sidecar~10.0.0.9~test-1.default~default.svc.cluster.local',
    type_url: 'istio.io/debug/syncz',
    resource_names: ['a'],
    response_nonce: 'Thu Dec  3 11:00:00 UTC 2026',
    nack: undefined,
  });
});

test('a NACK carries its message', () => {
  expect(decodeSotwRequest(encode({ type_url: 't', error_detail: { code: 3, message: 'no' } })).nack).toBe('no');
});

test(`a request over MAX_SOTW_REQUEST_BYTES (${MAX_SOTW_REQUEST_BYTES}) is refused before it is decoded`, () => {
  const req = decodeSotwRequest(Buffer.alloc(MAX_SOTW_REQUEST_BYTES + 1));
  expect(req.invalid).toMatch(/MAX_SOTW_REQUEST_BYTES/);
  expect(decodeSotwRequest(Buffer.alloc(0)).invalid).toBeUndefined();
});

test(`more than MAX_SOTW_RESOURCE_NAMES (${MAX_SOTW_RESOURCE_NAMES}) names, or an over-long type URL, is refused naming the limit`, () => {
  const names = Array.from({ length: MAX_SOTW_RESOURCE_NAMES + 1 }, (_, i) => `n${i}`);
  expect(decodeSotwRequest(encode({ resource_names: names })).invalid).toMatch(/MAX_SOTW_RESOURCE_NAMES/);
  expect(decodeSotwRequest(encode({ resource_names: names.slice(1) })).invalid).toBeUndefined();
  const type = decodeSotwRequest(encode({ type_url: 'x'.repeat(MAX_TYPE_URL_BYTES + 1) }));
  expect(type.invalid).toMatch(/MAX_TYPE_URL_BYTES/);
  expect(type.invalid).not.toContain('xxxx');
});

test('malformed bytes are refused with a message, not thrown', () => {
  expect(decodeSotwRequest(Buffer.from([0x22, 0x05, 0x61])).invalid).toMatch(/malformed DiscoveryRequest/);
});
