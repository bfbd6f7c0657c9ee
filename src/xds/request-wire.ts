// Decoding DeltaDiscoveryRequest by hand. A reconnecting ztunnel sends every name it holds in
// initial_resource_versions (100k entries, ~6 MB). The generic proto-loader decoder builds that
// map at ~4 µs per entry; here the entries are only digested in place (version-digest.ts), and the
// map is decoded from the same bytes only if the server asks for it (the client's set differs from
// the cache's). The node is decoded with protobufjs.

import * as path from 'node:path';
import * as protobuf from 'protobufjs';
import type { DeltaDiscoveryRequest, HeldVersions, NodeMessage } from './proto';
import { PROTO_LOADER_OPTIONS, protoDir } from './proto';
import { VersionDigest, digestEntry, emptyDigest } from './version-digest';

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;

class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  varint(): number {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new Error('truncated varint');
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
    throw new Error('varint longer than 10 bytes');
  }

  /** Start and end of a length-delimited payload; advances past it. */
  len(): [number, number] {
    const n = this.varint();
    const start = this.pos;
    if (start + n > this.end) throw new Error(`field length ${n} runs past the end of the message`);
    this.pos = start + n;
    return [start, start + n];
  }

  string(): string {
    const [s, e] = this.len();
    return this.buf.toString('utf8', s, e);
  }

  skip(wire: number): void {
    if (wire === WIRE_VARINT) this.varint();
    else if (wire === WIRE_LEN) this.len();
    else if (wire === WIRE_I64) this.pos += 8;
    else if (wire === WIRE_I32) this.pos += 4;
    else throw new Error(`unsupported wire type ${wire}`);
    if (this.pos > this.end) throw new Error('truncated field');
  }
}

let nodeType: protobuf.Type | undefined;

function decodeNode(buf: Buffer, start: number, end: number): NodeMessage {
  if (!nodeType) {
    const root = new protobuf.Root();
    root.loadSync(path.join(protoDir(), 'xds.proto'), { keepCase: true });
    nodeType = root.lookupType('envoy.service.discovery.v3.Node');
  }
  const msg = nodeType.decode(buf.subarray(start, end));
  return nodeType.toObject(msg, PROTO_LOADER_OPTIONS as protobuf.IConversionOptions) as unknown as NodeMessage;
}

function decodeStatus(r: Reader, end: number): { code: number; message: string } {
  const out = { code: 0, message: '' };
  const sub = new Reader(r.buf, r.pos, end);
  while (sub.pos < end) {
    const tag = sub.varint();
    const field = tag >>> 3;
    if (field === 1 && (tag & 7) === WIRE_VARINT) out.code = sub.varint() | 0;
    else if (field === 2 && (tag & 7) === WIRE_LEN) out.message = sub.string();
    else sub.skip(tag & 7);
  }
  return out;
}

const NO_VERSIONS: HeldVersions = { size: 0, digest: emptyDigest(), map: () => new Map() };

/** Byte ranges of the last key and value of one map entry (field 1 key, field 2 value); absent ones are empty. */
function entryRanges(buf: Buffer, start: number, end: number, out: Int32Array): void {
  // What every encoder writes for short strings: key (tag 0x0a, one length byte), then value
  // (tag 0x12, one length byte), nothing else.
  if (buf[start] === 0x0a) {
    const keyLen = buf[start + 1]!;
    const v = start + 2 + keyLen;
    if (keyLen < 0x80 && buf[v] === 0x12 && buf[v + 1]! < 0x80 && v + 2 + buf[v + 1]! === end) {
      out[0] = start + 2;
      out[1] = v;
      out[2] = v + 2;
      out[3] = end;
      return;
    }
  }
  out[0] = out[1] = out[2] = out[3] = start;
  const entry = new Reader(buf, start, end);
  while (entry.pos < end) {
    const t = entry.varint();
    if (t === ((1 << 3) | WIRE_LEN) || t === ((2 << 3) | WIRE_LEN)) {
      const n = entry.varint();
      const s = entry.pos;
      if (s + n > end) throw new Error(`map entry field length ${n} runs past the end of the entry`);
      entry.pos = s + n;
      const at = t === ((1 << 3) | WIRE_LEN) ? 0 : 2;
      out[at] = s;
      out[at + 1] = s + n;
    } else {
      entry.skip(t & 7);
    }
  }
}

/** Calls `each(start, end)` for every initial_resource_versions entry of a request. */
function forEachEntry(buf: Buffer, each: (start: number, end: number) => void): void {
  const r = new Reader(buf);
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag === ((5 << 3) | WIRE_LEN)) {
      const n = r.varint();
      const s = r.pos;
      if (s + n > r.end) throw new Error(`field length ${n} runs past the end of the message`);
      r.pos = s + n;
      each(s, s + n);
    } else {
      r.skip(tag & 7);
    }
  }
}

/** initial_resource_versions read lazily: the map is decoded from the request bytes on the first call to map(). */
class RawHeldVersions implements HeldVersions {
  private decoded: Map<string, string> | undefined;

  constructor(
    private buf: Buffer | undefined,
    readonly digest: VersionDigest,
  ) {}

  get size(): number {
    return this.digest.count;
  }

  map(): ReadonlyMap<string, string> {
    if (this.decoded) return this.decoded;
    const map = new Map<string, string>();
    const buf = this.buf!;
    const r = new Int32Array(4);
    forEachEntry(buf, (s, e) => {
      entryRanges(buf, s, e, r);
      map.set(buf.toString('utf8', r[0], r[1]), buf.toString('utf8', r[2], r[3]));
    });
    // Let the request bytes go once decoded.
    this.buf = undefined;
    this.decoded = map;
    return map;
  }
}

/** Decodes a DeltaDiscoveryRequest; throws on malformed bytes (grpc-js then ends the call). */
export function decodeDeltaRequest(buf: Buffer): DeltaDiscoveryRequest {
  const req: DeltaDiscoveryRequest = {
    node: null,
    type_url: '',
    resource_names_subscribe: [],
    resource_names_unsubscribe: [],
    initial_resource_versions: NO_VERSIONS,
    response_nonce: '',
    error_detail: null,
  };
  let digest: VersionDigest | undefined;
  const entry = new Int32Array(4);
  const r = new Reader(buf);
  while (r.pos < r.end) {
    const tag = r.varint();
    const field = tag >>> 3;
    const wire = tag & 7;
    if (wire !== WIRE_LEN || field < 1 || field > 7) {
      r.skip(wire);
      continue;
    }
    switch (field) {
      case 1: {
        const [s, e] = r.len();
        req.node = decodeNode(buf, s, e);
        break;
      }
      case 2:
        req.type_url = r.string();
        break;
      case 3:
        req.resource_names_subscribe.push(r.string());
        break;
      case 4:
        req.resource_names_unsubscribe.push(r.string());
        break;
      case 5: {
        const n = r.varint();
        const s = r.pos;
        if (s + n > r.end) throw new Error(`field length ${n} runs past the end of the message`);
        r.pos = s + n;
        entryRanges(buf, s, s + n, entry);
        digest ??= emptyDigest();
        digestEntry(digest, buf, entry[0]!, entry[1]!, entry[2]!, entry[3]!);
        break;
      }
      case 6:
        req.response_nonce = r.string();
        break;
      case 7: {
        const [s, e] = r.len();
        r.pos = s;
        req.error_detail = decodeStatus(r, e);
        r.pos = e;
        break;
      }
    }
  }
  if (digest) req.initial_resource_versions = new RawHeldVersions(buf, digest);
  return req;
}
