// Limits on every string a client sends on the xDS stream, checked on the request bytes before
// anything is decoded from them, and the truncation applied to client strings in logs. A request
// over a limit ends the stream with INVALID_ARGUMENT naming the field and the limit, never the value.

import { Reader, WIRE_LEN } from './proto-reader';

/**
 * Node ids are "type~ip~pod.namespace~namespace.svc.<domain>": at most ~700 bytes with an IPv6
 * address, a 253-byte pod name, a 63-byte namespace twice and a 253-byte domain. ztunnel's are
 * ~80 bytes.
 */
export const MAX_NODE_ID_BYTES = 1024;
/**
 * The whole Node message (id, cluster, metadata, locality, user agent). ztunnel's is well under
 * 1 KiB; a sidecar's with labels and annotations is tens of KiB, and Kubernetes caps all of a
 * pod's annotations together at 256 KiB.
 */
export const MAX_NODE_BYTES = 1024 * 1024;
/**
 * Metadata values in all: top-level fields plus every nested struct field and list item.
 * ztunnel sends about ten; a sidecar a few dozen plus its labels.
 */
export const MAX_METADATA_VALUES = 1024;
/** Each metadata key and string value; the largest real ones are JSON label/annotation maps. */
export const MAX_METADATA_STRING_BYTES = 64 * 1024;
/**
 * Nesting of metadata structs and lists, the top-level Struct counting as 1. ISTIO_METAJSON_*
 * values are small JSON documents a few levels deep; the bound keeps every walk shallow.
 */
export const MAX_METADATA_DEPTH = 16;
/**
 * Names in one request, subscribe + unsubscribe + initial_resource_versions together. A
 * reconnecting ztunnel lists every name it holds (100k+ in a large mesh); 1M is ten times that,
 * and far more than any request within a sane gRPC receive limit can carry (~60 MB of names).
 * What it bounds is the per-name work (strings, set entries) one request can cost.
 */
export const MAX_RESOURCE_NAMES_PER_REQUEST = 1_000_000;
/**
 * Each resource name or on-demand key: workload uids "<cluster>//Pod/<ns>/<pod>" (≤ ~580
 * bytes), services "<ns>/<hostname>" (≤ 317), addresses "<network>/<ip>".
 */
export const MAX_RESOURCE_NAME_BYTES = 1024;
/** Each version in initial_resource_versions: ztunnel sends "", istiod-ts versions are 16 hex digits. */
export const MAX_RESOURCE_VERSION_BYTES = 256;
/** type.googleapis.com/istio.workload.Address is 42 bytes. */
export const MAX_TYPE_URL_BYTES = 256;
/** Clients echo our nonces, which are under 30 bytes (istiod's are 36-byte UUIDs). */
export const MAX_NONCE_BYTES = 256;
/**
 * A NACK's error_detail.message. ztunnel joins the error of every rejected resource with "; ",
 * so a rejected large push legitimately runs to thousands of ~200-byte errors.
 */
export const MAX_ERROR_DETAIL_BYTES = 1024 * 1024;
/** Logs (and /debug/syncz) show at most this many characters of any client-supplied string. */
export const CLIENT_TEXT_LOG_CHARS = 512;

/** A client string as it may appear in logs: cut to CLIENT_TEXT_LOG_CHARS, saying how long it was. */
export function clientText(s: string | undefined | null): string {
  if (!s) return '';
  if (s.length <= CLIENT_TEXT_LOG_CHARS) return s;
  return `${s.slice(0, CLIENT_TEXT_LOG_CHARS)}…(${s.length} characters)`;
}

/** The message of a violated limit: field, size, limit and its name; never the value. */
export function overLimit(field: string, size: number, limit: number, name: string, unit = 'bytes'): string {
  return `${field} is ${size} ${unit}; the limit is ${limit} (${name})`;
}

// Field numbers (proto/xds.proto and google/protobuf/struct.proto).
const NODE_ID = 1;
const NODE_METADATA = 3;
const STRUCT_FIELDS = 1;
const ENTRY_KEY = 1;
const ENTRY_VALUE = 2;
const VALUE_STRING = 3;
const VALUE_STRUCT = 5;
const VALUE_LIST = 6;
const LIST_VALUES = 1;

const enum Kind {
  Struct,
  Entry,
  Value,
  List,
}

/**
 * Checks a Node message's bytes against the limits: its size, id, and metadata (count, strings,
 * depth). The metadata walk is iterative with an explicit stack no deeper than MAX_METADATA_DEPTH
 * levels, so a hostile nesting costs one pass over its bytes and no recursion. Returns the
 * violation, or undefined. Throws on malformed bytes.
 */
export function checkNodeBytes(buf: Buffer, start: number, end: number): string | undefined {
  if (end - start > MAX_NODE_BYTES) return overLimit('node', end - start, MAX_NODE_BYTES, 'MAX_NODE_BYTES');
  const r = new Reader(buf, start, end);
  while (r.pos < end) {
    const tag = r.varint();
    if ((tag & 7) !== WIRE_LEN || (tag >>> 3 !== NODE_ID && tag >>> 3 !== NODE_METADATA)) {
      r.skip(tag & 7);
      continue;
    }
    const [s, e] = r.len();
    if (tag >>> 3 === NODE_ID) {
      if (e - s > MAX_NODE_ID_BYTES) return overLimit('node.id', e - s, MAX_NODE_ID_BYTES, 'MAX_NODE_ID_BYTES');
    } else {
      const problem = checkMetadata(buf, s, e);
      if (problem) return problem;
    }
  }
  return undefined;
}

function checkMetadata(buf: Buffer, start: number, end: number): string | undefined {
  // The messages being read, innermost last: what each is and where its bytes end.
  const open: { kind: Kind; end: number }[] = [{ kind: Kind.Struct, end }];
  let depth = 1; // Structs and lists open on the stack
  let values = 0;
  const r = new Reader(buf, start, end);
  for (let top = open.at(-1); top; top = open.at(-1)) {
    if (r.pos >= top.end) {
      if (top.kind === Kind.Struct || top.kind === Kind.List) depth--;
      open.pop();
      continue;
    }
    const tag = r.varint();
    const field = tag >>> 3;
    if ((tag & 7) !== WIRE_LEN) {
      r.skip(tag & 7);
      if (r.pos > top.end) throw new Error('metadata field runs past its message');
      continue;
    }
    const n = r.varint();
    const s = r.pos;
    if (s + n > top.end) throw new Error(`metadata field length ${n} runs past its message`);
    r.pos = s + n;
    let child: Kind | undefined;
    switch (top.kind) {
      case Kind.Struct:
        if (field === STRUCT_FIELDS) child = Kind.Entry;
        break;
      case Kind.Entry:
        if (field === ENTRY_KEY && n > MAX_METADATA_STRING_BYTES)
          return overLimit('node.metadata key', n, MAX_METADATA_STRING_BYTES, 'MAX_METADATA_STRING_BYTES');
        if (field === ENTRY_VALUE) child = Kind.Value;
        break;
      case Kind.Value:
        if (field === VALUE_STRING && n > MAX_METADATA_STRING_BYTES)
          return overLimit('node.metadata value', n, MAX_METADATA_STRING_BYTES, 'MAX_METADATA_STRING_BYTES');
        if (field === VALUE_STRUCT) child = Kind.Struct;
        else if (field === VALUE_LIST) child = Kind.List;
        break;
      case Kind.List:
        if (field === LIST_VALUES) child = Kind.Value;
        break;
    }
    if (child === undefined) continue;
    if (child === Kind.Value && ++values > MAX_METADATA_VALUES)
      return overLimit('node.metadata', values, MAX_METADATA_VALUES, 'MAX_METADATA_VALUES', 'values or more');
    if ((child === Kind.Struct || child === Kind.List) && ++depth > MAX_METADATA_DEPTH) {
      return overLimit('node.metadata', depth, MAX_METADATA_DEPTH, 'MAX_METADATA_DEPTH', 'levels deep or more');
    }
    open.push({ kind: child, end: s + n });
    r.pos = s;
  }
  return undefined;
}
