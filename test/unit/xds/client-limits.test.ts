// Every string a client sends has a named limit. A request over one is decoded no further than
// needed to say which field and which limit, and the message never echoes the value.

import type * as grpc from '@grpc/grpc-js';
import { ADDRESS_TYPE_URL } from '../../../src/contract/xds-resources';
import {
  CLIENT_TEXT_LOG_CHARS,
  MAX_ERROR_DETAIL_BYTES,
  MAX_METADATA_DEPTH,
  MAX_METADATA_STRING_BYTES,
  MAX_METADATA_VALUES,
  MAX_NODE_BYTES,
  MAX_NODE_ID_BYTES,
  MAX_NONCE_BYTES,
  MAX_RESOURCE_NAMES_PER_REQUEST,
  MAX_RESOURCE_NAME_BYTES,
  MAX_RESOURCE_VERSION_BYTES,
  MAX_TYPE_URL_BYTES,
  clientText,
} from '../../../src/xds/wire/client-limits';
import { ADS_SERVICE, DELTA_METHOD, loadProtos } from '../../../src/xds/grpc/proto';
import { decodeDeltaRequest } from '../../../src/xds/wire/request-wire';

const method = (loadProtos(['xds.proto'])[ADS_SERVICE] as grpc.ServiceDefinition)[DELTA_METHOD]!;
const encode = (req: Record<string, unknown>) => method.requestSerialize(req);
const ZTUNNEL_ID = 'ztunnel~10.0.0.1~ztunnel-abc.istio-system~istio-system.svc.cluster.local';

/** The violation of a request, checked to name the limit and stay short. */
function violation(bytes: Buffer, limitName: string): string {
  const req = decodeDeltaRequest(bytes);
  expect(req.invalid).toBeDefined();
  const message = req.invalid!;
  expect(message).toContain(limitName);
  expect(message.length).toBeLessThan(200);
  return message;
}

function accepted(bytes: Buffer): void {
  expect(decodeDeltaRequest(bytes).invalid).toBeUndefined();
}

const stringValue = (s: string) => ({ stringValue: s });

describe('node', () => {
  test(`a node id of more than MAX_NODE_ID_BYTES (${MAX_NODE_ID_BYTES}) is refused, naming the field and the limit`, () => {
    accepted(encode({ node: { id: 'z'.repeat(MAX_NODE_ID_BYTES) } }));
    const message = violation(encode({ node: { id: 'z'.repeat(100_000) } }), 'MAX_NODE_ID_BYTES');
    expect(message).toContain('node.id');
    expect(message).not.toContain('zzzzzzzzzz');
  });

  test(`a node message of more than MAX_NODE_BYTES (${MAX_NODE_BYTES}) is refused before it is decoded`, () => {
    const message = violation(
      encode({ node: { id: ZTUNNEL_ID, cluster: 'c'.repeat(MAX_NODE_BYTES) } }),
      'MAX_NODE_BYTES',
    );
    expect(message).toContain('node');
  });

  test(`more than MAX_METADATA_VALUES (${MAX_METADATA_VALUES}) metadata values are refused, nested ones counted`, () => {
    const fields = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`K${i}`, stringValue('v')]));
    accepted(encode({ node: { id: ZTUNNEL_ID, metadata: { fields: fields(MAX_METADATA_VALUES) } } }));
    violation(
      encode({ node: { id: ZTUNNEL_ID, metadata: { fields: fields(MAX_METADATA_VALUES + 1) } } }),
      'MAX_METADATA_VALUES',
    );
    const list = { listValue: { values: Array.from({ length: MAX_METADATA_VALUES }, () => stringValue('v')) } };
    violation(encode({ node: { id: ZTUNNEL_ID, metadata: { fields: { LIST: list } } } }), 'MAX_METADATA_VALUES');
  });

  test(`a metadata string or key of more than MAX_METADATA_STRING_BYTES (${MAX_METADATA_STRING_BYTES}) is refused`, () => {
    const long = 'x'.repeat(MAX_METADATA_STRING_BYTES + 1);
    accepted(
      encode({
        node: { id: ZTUNNEL_ID, metadata: { fields: { LABELS: stringValue('x'.repeat(MAX_METADATA_STRING_BYTES)) } } },
      }),
    );
    expect(
      violation(
        encode({ node: { id: ZTUNNEL_ID, metadata: { fields: { LABELS: stringValue(long) } } } }),
        'MAX_METADATA_STRING_BYTES',
      ),
    ).toContain('node.metadata');
    violation(
      encode({ node: { id: ZTUNNEL_ID, metadata: { fields: { [long]: stringValue('v') } } } }),
      'MAX_METADATA_STRING_BYTES',
    );
  });

  test(`metadata nested deeper than MAX_METADATA_DEPTH (${MAX_METADATA_DEPTH}) is refused without recursion, even 10,000 levels deep`, () => {
    const nested = (depth: number) => {
      let v: Record<string, unknown> = stringValue('leaf');
      for (let i = 0; i < depth; i++) v = { structValue: { fields: { a: v } } };
      return v;
    };
    // The top-level Struct is level 1.
    accepted(encode({ node: { id: ZTUNNEL_ID, metadata: { fields: { J: nested(MAX_METADATA_DEPTH - 1) } } } }));
    violation(
      encode({ node: { id: ZTUNNEL_ID, metadata: { fields: { J: nested(MAX_METADATA_DEPTH) } } } }),
      'MAX_METADATA_DEPTH',
    );
    // protobufjs would recurse to encode this; built by hand from the inside out instead.
    const field = (no: number, payload: Buffer) =>
      Buffer.concat([Buffer.from([(no << 3) | 2]), varint(payload.length), payload]);
    let value = field(3, Buffer.from('leaf')); // Value.string_value
    for (let i = 0; i < 10_000; i++)
      value = field(5, field(1, Buffer.concat([field(1, Buffer.from('a')), field(2, value)]))); // Value.struct_value{fields{a: value}}
    const metadata = field(1, Buffer.concat([field(1, Buffer.from('J')), field(2, value)]));
    const node = Buffer.concat([field(1, Buffer.from(ZTUNNEL_ID)), field(3, metadata)]);
    violation(field(1, node), 'MAX_METADATA_DEPTH');
  });
});

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

describe('resource names', () => {
  test(`a name of more than MAX_RESOURCE_NAME_BYTES (${MAX_RESOURCE_NAME_BYTES}) is refused wherever it is listed`, () => {
    const long = 'n'.repeat(MAX_RESOURCE_NAME_BYTES + 1);
    accepted(encode({ type_url: ADDRESS_TYPE_URL, resource_names_subscribe: ['n'.repeat(MAX_RESOURCE_NAME_BYTES)] }));
    expect(
      violation(encode({ type_url: ADDRESS_TYPE_URL, resource_names_subscribe: [long] }), 'MAX_RESOURCE_NAME_BYTES'),
    ).toContain('resource_names_subscribe');
    expect(
      violation(encode({ type_url: ADDRESS_TYPE_URL, resource_names_unsubscribe: [long] }), 'MAX_RESOURCE_NAME_BYTES'),
    ).toContain('resource_names_unsubscribe');
    expect(
      violation(
        encode({ type_url: ADDRESS_TYPE_URL, initial_resource_versions: { [long]: '' } }),
        'MAX_RESOURCE_NAME_BYTES',
      ),
    ).toContain('initial_resource_versions');
  });

  test(`a held version of more than MAX_RESOURCE_VERSION_BYTES (${MAX_RESOURCE_VERSION_BYTES}) is refused`, () => {
    accepted(
      encode({ type_url: ADDRESS_TYPE_URL, initial_resource_versions: { a: 'v'.repeat(MAX_RESOURCE_VERSION_BYTES) } }),
    );
    violation(
      encode({
        type_url: ADDRESS_TYPE_URL,
        initial_resource_versions: { a: 'v'.repeat(MAX_RESOURCE_VERSION_BYTES + 1) },
      }),
      'MAX_RESOURCE_VERSION_BYTES',
    );
  });

  test(`a request may list MAX_RESOURCE_NAMES_PER_REQUEST (${MAX_RESOURCE_NAMES_PER_REQUEST}) names in all, and no more`, () => {
    // A reconnect of a large mesh: every held name in initial_resource_versions, as ztunnel sends them.
    const half = MAX_RESOURCE_NAMES_PER_REQUEST / 2;
    // Framed by hand into one buffer: protobufjs takes seconds to encode a million names.
    const repeated = (tag: number, entry: boolean, n: number, prefix: string) => {
      const out = Buffer.allocUnsafe(n * 16);
      let p = 0;
      for (let i = 0; i < n; i++) {
        const name = `${prefix}${i.toString(36)}`;
        out[p++] = tag;
        if (entry) {
          out[p++] = name.length + 2;
          out[p++] = 0x0a;
        }
        out[p++] = name.length;
        p += out.write(name, p, 'latin1');
      }
      return out.subarray(0, p);
    };
    const atLimit = Buffer.concat([
      encode({ type_url: ADDRESS_TYPE_URL }),
      repeated(0x1a, false, half, 's'),
      repeated(0x2a, true, half, 'w'),
    ]);
    const req = decodeDeltaRequest(atLimit);
    expect(req.invalid).toBeUndefined();
    expect(req.initial_resource_versions.size).toBe(half);
    const over = Buffer.concat([atLimit, encode({ resource_names_unsubscribe: ['one-more'] })]);
    expect(violation(over, 'MAX_RESOURCE_NAMES_PER_REQUEST')).toContain('names');
  });

  test('the limit holds within one run of initial_resource_versions entries, and across runs split by other fields', () => {
    // The decoder digests consecutive entries in one loop; the count must be exact at its edges.
    const entries = (n: number, prefix: string) => {
      const out = Buffer.allocUnsafe(n * 16);
      let p = 0;
      for (let i = 0; i < n; i++) {
        const name = `${prefix}${i.toString(36)}`;
        out[p++] = 0x2a;
        out[p++] = name.length + 2;
        out[p++] = 0x0a;
        out[p++] = name.length;
        p += out.write(name, p, 'latin1');
      }
      return out.subarray(0, p);
    };
    const head = encode({ type_url: ADDRESS_TYPE_URL });
    const exact = decodeDeltaRequest(Buffer.concat([head, entries(MAX_RESOURCE_NAMES_PER_REQUEST, 'w')]));
    expect(exact.invalid).toBeUndefined();
    expect(exact.initial_resource_versions.size).toBe(MAX_RESOURCE_NAMES_PER_REQUEST);
    expect(
      violation(
        Buffer.concat([head, entries(MAX_RESOURCE_NAMES_PER_REQUEST + 1, 'w')]),
        'MAX_RESOURCE_NAMES_PER_REQUEST',
      ),
    ).toContain(`${MAX_RESOURCE_NAMES_PER_REQUEST + 1} names or more`);
    // Three runs of entries between subscribe names: the count carries over each run.
    const third = MAX_RESOURCE_NAMES_PER_REQUEST / 4;
    const split = (last: number) =>
      Buffer.concat([
        head,
        entries(third, 'a'),
        encode({ resource_names_subscribe: ['s1'] }),
        entries(third, 'b'),
        encode({ resource_names_subscribe: ['s2'] }),
        entries(last, 'c'),
      ]);
    const fits = decodeDeltaRequest(split(MAX_RESOURCE_NAMES_PER_REQUEST - 2 * third - 2));
    expect(fits.invalid).toBeUndefined();
    expect(fits.initial_resource_versions.size).toBe(MAX_RESOURCE_NAMES_PER_REQUEST - 2);
    expect(
      violation(split(MAX_RESOURCE_NAMES_PER_REQUEST - 2 * third - 1), 'MAX_RESOURCE_NAMES_PER_REQUEST'),
    ).toContain('names or more');
  });
});

describe('other request strings', () => {
  test(`a type URL of more than MAX_TYPE_URL_BYTES (${MAX_TYPE_URL_BYTES}) is refused`, () => {
    accepted(encode({ type_url: 't'.repeat(MAX_TYPE_URL_BYTES) }));
    expect(violation(encode({ type_url: 't'.repeat(MAX_TYPE_URL_BYTES + 1) }), 'MAX_TYPE_URL_BYTES')).toContain(
      'type_url',
    );
  });

  test(`a nonce of more than MAX_NONCE_BYTES (${MAX_NONCE_BYTES}) is refused`, () => {
    accepted(encode({ type_url: ADDRESS_TYPE_URL, response_nonce: 'n'.repeat(MAX_NONCE_BYTES) }));
    expect(
      violation(
        encode({ type_url: ADDRESS_TYPE_URL, response_nonce: 'n'.repeat(MAX_NONCE_BYTES + 1) }),
        'MAX_NONCE_BYTES',
      ),
    ).toContain('response_nonce');
  });

  test(`a NACK message of more than MAX_ERROR_DETAIL_BYTES (${MAX_ERROR_DETAIL_BYTES}) is refused`, () => {
    accepted(
      encode({
        type_url: ADDRESS_TYPE_URL,
        response_nonce: 'n',
        error_detail: { code: 3, message: 'e'.repeat(MAX_ERROR_DETAIL_BYTES) },
      }),
    );
    const over = encode({
      type_url: ADDRESS_TYPE_URL,
      response_nonce: 'n',
      error_detail: { code: 3, message: 'e'.repeat(MAX_ERROR_DETAIL_BYTES + 1) },
    });
    expect(violation(over, 'MAX_ERROR_DETAIL_BYTES')).toContain('error_detail.message');
  });
});

describe('clientText', () => {
  test(`logs show at most CLIENT_TEXT_LOG_CHARS (${CLIENT_TEXT_LOG_CHARS}) characters of a client string, and its full length`, () => {
    expect(clientText(ZTUNNEL_ID)).toBe(ZTUNNEL_ID);
    const shown = clientText('x'.repeat(100_000));
    expect(shown.startsWith('x'.repeat(CLIENT_TEXT_LOG_CHARS))).toBe(true);
    expect(shown).not.toContain('x'.repeat(CLIENT_TEXT_LOG_CHARS + 1));
    expect(shown).toContain('100000');
    expect(clientText(undefined)).toBe('');
  });
});
