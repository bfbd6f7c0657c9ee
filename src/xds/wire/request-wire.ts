// Decoding DeltaDiscoveryRequest by hand. A reconnecting ztunnel sends every name it holds in
// initial_resource_versions (100k entries, ~6 MB). The generic proto-loader decoder builds that
// map, two strings and an insert per entry; here the entries are only digested in place
// (version-digest.ts), and the map is decoded from the same bytes only if the server asks for it
// (the client's set differs from the cache's). The node is decoded with protobufjs once its bytes
// are within the limits of client-limits.ts; every other client string is measured before it is
// decoded.

import * as path from 'node:path';
import * as protobuf from 'protobufjs';
import { PROTO_LOADER_OPTIONS, protoDir } from '../../proto-files';
import type { DeltaDiscoveryRequest, HeldVersions, NodeMessage } from './messages';
import {
  MAX_ERROR_DETAIL_BYTES,
  MAX_NONCE_BYTES,
  MAX_RESOURCE_NAMES_PER_REQUEST,
  MAX_RESOURCE_NAME_BYTES,
  MAX_RESOURCE_VERSION_BYTES,
  MAX_TYPE_URL_BYTES,
  checkNodeBytes,
  overLimit,
} from './client-limits';
import { EntryRanges, entryRanges, newEntryRanges } from './irv-entry';
import { Reader, WIRE_LEN, WIRE_VARINT } from './proto-reader';
import { takePredigest } from './request-stream';
import { VersionDigest, bytesView, digestEntryIn, emptyDigest } from './version-digest';

let nodeType: protobuf.Type | undefined;

function decodeNode(buf: Buffer, start: number, end: number): NodeMessage {
  if (!nodeType) {
    const root = new protobuf.Root();
    root.loadSync(path.join(protoDir(), 'xds.proto'), { keepCase: true });
    nodeType = root.lookupType('envoy.service.discovery.v3.Node');
  }
  const msg = nodeType.decode(buf.subarray(start, end));
  return nodeType.toObject(msg, PROTO_LOADER_OPTIONS) as unknown as NodeMessage;
}

/** error_detail (google.rpc.Status), or the violated limit. */
function decodeStatus(r: Reader, end: number): { code: number; message: string } | string {
  const out = { code: 0, message: '' };
  const sub = new Reader(r.buf, r.pos, end);
  while (sub.pos < end) {
    const tag = sub.varint();
    const field = tag >>> 3;
    if (field === 1 && (tag & 7) === WIRE_VARINT) out.code = sub.varint() | 0;
    else if (field === 2 && (tag & 7) === WIRE_LEN) {
      const [s, e] = sub.len();
      if (e - s > MAX_ERROR_DETAIL_BYTES)
        return overLimit('error_detail.message', e - s, MAX_ERROR_DETAIL_BYTES, 'MAX_ERROR_DETAIL_BYTES');
      out.message = r.buf.toString('utf8', s, e);
    } else sub.skip(tag & 7);
  }
  return out;
}

/** A length-delimited string field of at most `limit` bytes, or the violation. */
function boundedString(r: Reader, field: string, limit: number, name: string): string | { invalid: string } {
  const [s, e] = r.len();
  if (e - s > limit) return { invalid: overLimit(field, e - s, limit, name) };
  return r.buf.toString('utf8', s, e);
}

const NO_VERSIONS: HeldVersions = { size: 0, digest: emptyDigest(), map: () => new Map() };

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
  /** The request bytes (or how to assemble them) until the first map() call, then the decoded map (the bytes are let go). */
  private held: Buffer | (() => Buffer) | Map<string, string>;

  constructor(
    bytes: Buffer | (() => Buffer),
    readonly digest: VersionDigest,
  ) {
    this.held = bytes;
  }

  get size(): number {
    return this.digest.count;
  }

  map(): ReadonlyMap<string, string> {
    const held = this.held;
    if (held instanceof Map) return held;
    const buf = typeof held === 'function' ? held() : held;
    const map = new Map<string, string>();
    const r = newEntryRanges();
    forEachEntry(buf, (s, e) => {
      entryRanges(buf, s, e, r);
      map.set(buf.toString('utf8', r.keyStart, r.keyEnd), buf.toString('utf8', r.valueStart, r.valueEnd));
    });
    this.held = map;
    return map;
  }
}

/**
 * Digests the initial_resource_versions entry whose tag was just read, and every entry that
 * directly follows it (encoders write the map's entries in one run), counting at most `allowed`
 * more names. Returns how many entries after the first it took, or the violated limit. Apart from
 * decodeDeltaRequest's switch, this loop stays optimized across requests: inside it, a 100k-entry
 * request ran partly unoptimized (on-stack replacement, and deoptimizations on the switch's other
 * arms), at more than twice the cost.
 */
function digestEntries(r: Reader, digest: VersionDigest, entry: EntryRanges, allowed: number): number | string {
  const buf = r.buf;
  const words = bytesView(buf);
  const tag = (5 << 3) | WIRE_LEN;
  let extra = -1;
  for (;;) {
    const n = r.varint();
    const s = r.pos;
    if (s + n > r.end) throw new Error(`field length ${n} runs past the end of the message`);
    r.pos = s + n;
    entryRanges(buf, s, s + n, entry);
    const keyBytes = entry.keyEnd - entry.keyStart;
    const versionBytes = entry.valueEnd - entry.valueStart;
    if (keyBytes > MAX_RESOURCE_NAME_BYTES)
      return overLimit(
        'a name in initial_resource_versions',
        keyBytes,
        MAX_RESOURCE_NAME_BYTES,
        'MAX_RESOURCE_NAME_BYTES',
      );
    if (versionBytes > MAX_RESOURCE_VERSION_BYTES)
      return overLimit(
        'a version in initial_resource_versions',
        versionBytes,
        MAX_RESOURCE_VERSION_BYTES,
        'MAX_RESOURCE_VERSION_BYTES',
      );
    digestEntryIn(digest, words, entry.keyStart, entry.keyEnd, entry.valueStart, entry.valueEnd, 1);
    extra++;
    // The next field is another entry when its one-byte tag says so (0x2a).
    if (r.pos >= r.end || buf[r.pos] !== tag) return extra;
    if (extra + 1 > allowed)
      return overLimit(
        'the request',
        MAX_RESOURCE_NAMES_PER_REQUEST + 1,
        MAX_RESOURCE_NAMES_PER_REQUEST,
        'MAX_RESOURCE_NAMES_PER_REQUEST',
        'names or more',
      );
    r.pos++;
  }
}

/**
 * Decodes a DeltaDiscoveryRequest; throws on malformed bytes (grpc-js then ends the call). A
 * request over a limit of client-limits.ts comes back with `invalid` set and is decoded no further.
 */
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
  const refuse = (message: string): DeltaDiscoveryRequest => {
    req.invalid = message;
    return req;
  };
  const streamed = takePredigest(buf);
  let digest: VersionDigest | undefined;
  let names = 0;
  const entry = newEntryRanges();
  const r = new Reader(buf);
  while (r.pos < r.end) {
    const tag = r.varint();
    const field = tag >>> 3;
    const wire = tag & 7;
    if (wire !== WIRE_LEN || field < 1 || field > 7) {
      r.skip(wire);
      continue;
    }
    if (field >= 3 && field <= 5 && ++names > MAX_RESOURCE_NAMES_PER_REQUEST) {
      return refuse(
        overLimit(
          'the request',
          names,
          MAX_RESOURCE_NAMES_PER_REQUEST,
          'MAX_RESOURCE_NAMES_PER_REQUEST',
          'names or more',
        ),
      );
    }
    switch (field) {
      case 1: {
        const [s, e] = r.len();
        const problem = checkNodeBytes(buf, s, e);
        if (problem) return refuse(problem);
        req.node = decodeNode(buf, s, e);
        break;
      }
      case 2: {
        const v = boundedString(r, 'type_url', MAX_TYPE_URL_BYTES, 'MAX_TYPE_URL_BYTES');
        if (typeof v !== 'string') return refuse(v.invalid);
        req.type_url = v;
        break;
      }
      case 3:
      case 4: {
        const list = field === 3 ? 'resource_names_subscribe' : 'resource_names_unsubscribe';
        const v = boundedString(r, `a name in ${list}`, MAX_RESOURCE_NAME_BYTES, 'MAX_RESOURCE_NAME_BYTES');
        if (typeof v !== 'string') return refuse(v.invalid);
        req[list].push(v);
        break;
      }
      case 5: {
        digest ??= emptyDigest();
        const run = digestEntries(r, digest, entry, MAX_RESOURCE_NAMES_PER_REQUEST - names);
        if (typeof run === 'string') return refuse(run);
        names += run;
        break;
      }
      case 6: {
        const v = boundedString(r, 'response_nonce', MAX_NONCE_BYTES, 'MAX_NONCE_BYTES');
        if (typeof v !== 'string') return refuse(v.invalid);
        req.response_nonce = v;
        break;
      }
      case 7: {
        const [s, e] = r.len();
        r.pos = s;
        const status = decodeStatus(r, e);
        if (typeof status === 'string') return refuse(status);
        req.error_detail = status;
        r.pos = e;
        break;
      }
    }
  }
  if (digest) {
    req.initial_resource_versions = new RawHeldVersions(buf, digest);
  } else if (streamed && streamed.digest.count > 0) {
    // A compact message from DeltaRequestFramer: its entries were digested as they arrived.
    req.initial_resource_versions = new RawHeldVersions(streamed.whole, streamed.digest);
  }
  return req;
}
