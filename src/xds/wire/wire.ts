// Hand-written protobuf framing for DeltaDiscoveryResponse. Protobuf lets fields appear in any
// order and repeated fields be split, so a response is a concatenation of independently encoded
// pieces: each resource is framed once per version and shared by every stream, the part common
// to all streams of a push is encoded once, and only the nonce is appended per stream.

import type { XdsResource } from '../../contract/xds-resources';

const WIRE_LEN = 2;
// Field numbers of envoy.service.discovery.v3 messages (see proto/xds.proto).
const RESPONSE_RESOURCES = 2;
const RESPONSE_TYPE_URL = 4;
const RESPONSE_NONCE = 5;
const RESPONSE_REMOVED = 6;
const RESOURCE_VERSION = 1;
const RESOURCE_ANY = 2;
const RESOURCE_NAME = 3;
const ANY_TYPE_URL = 1;
const ANY_VALUE = 2;

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

function writeVarint(buf: Buffer, pos: number, n: number): number {
  while (n >= 0x80) {
    buf[pos++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  buf[pos++] = n;
  return pos;
}

/** Size of a length-delimited field (tag, length, payload) whose payload has `len` bytes. */
function fieldSize(field: number, len: number): number {
  return varintSize((field << 3) | WIRE_LEN) + varintSize(len) + len;
}

function writeHeader(buf: Buffer, pos: number, field: number, len: number): number {
  pos = writeVarint(buf, pos, (field << 3) | WIRE_LEN);
  return writeVarint(buf, pos, len);
}

function writeBytes(buf: Buffer, pos: number, field: number, bytes: Uint8Array): number {
  pos = writeHeader(buf, pos, field, bytes.length);
  buf.set(bytes, pos);
  return pos + bytes.length;
}

/** A string as one length-delimited field. */
export function encodeStringField(field: number, value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  const buf = Buffer.allocUnsafe(fieldSize(field, bytes.length));
  writeBytes(buf, 0, field, bytes);
  return buf;
}

/** `resources` entry (field 2) of a DeltaDiscoveryResponse: a Resource with name, version and Any. */
export function encodeResourceFrame(typeUrl: string, resource: XdsResource): Buffer {
  const name = Buffer.from(resource.name, 'utf8');
  const version = Buffer.from(resource.version, 'utf8');
  const type = Buffer.from(typeUrl, 'utf8');
  const anyLen = fieldSize(ANY_TYPE_URL, type.length) + fieldSize(ANY_VALUE, resource.bytes.length);
  const resourceLen =
    fieldSize(RESOURCE_NAME, name.length) +
    fieldSize(RESOURCE_VERSION, version.length) +
    fieldSize(RESOURCE_ANY, anyLen);
  const buf = Buffer.allocUnsafe(fieldSize(RESPONSE_RESOURCES, resourceLen));
  let pos = writeHeader(buf, 0, RESPONSE_RESOURCES, resourceLen);
  pos = writeBytes(buf, pos, RESOURCE_NAME, name);
  pos = writeBytes(buf, pos, RESOURCE_VERSION, version);
  pos = writeHeader(buf, pos, RESOURCE_ANY, anyLen);
  pos = writeBytes(buf, pos, ANY_TYPE_URL, type);
  writeBytes(buf, pos, ANY_VALUE, resource.bytes);
  return buf;
}

/**
 * Frames are cached per resource object: the cache hands out one object per version, so each
 * version is framed once however many streams receive it. A WeakMap lets replaced versions go.
 */
const frames = new WeakMap<XdsResource, Buffer>();

export function resourceFrame(typeUrl: string, resource: XdsResource): Buffer {
  let frame = frames.get(resource);
  if (!frame) {
    frame = encodeResourceFrame(typeUrl, resource);
    frames.set(resource, frame);
  }
  return frame;
}

export interface ResponseBody {
  typeUrl: string;
  resources: readonly XdsResource[];
  removed: readonly string[];
}

/** Room left after a body for a nonce field; longer nonces take the slow path. */
export const NONCE_SLACK = 64;
const MAX_INLINE_NONCE = NONCE_SLACK - 2; // tag byte + one length byte

/**
 * Everything of a DeltaDiscoveryResponse except the nonce, in one buffer with room after it.
 * withNonce() writes a stream's nonce into that room and returns a view of the whole message;
 * the response serializer calls it and grpc-js copies the view into its frame in the same
 * synchronous call, so one body serves every stream without a copy of its own per stream.
 */
export class EncodedBody {
  private readonly buf: Buffer;

  constructor(parts: readonly Buffer[]) {
    let total = 0;
    for (const p of parts) total += p.length;
    this.buf = Buffer.allocUnsafe(total + NONCE_SLACK);
    let pos = 0;
    for (const p of parts) {
      p.copy(this.buf, pos);
      pos += p.length;
    }
    this.length = total;
  }

  readonly length: number;

  /** The complete message; valid until the next withNonce() on this body (copy it at once). */
  withNonce(nonce: string): Buffer {
    const bytes = Buffer.byteLength(nonce);
    if (bytes > MAX_INLINE_NONCE)
      return Buffer.concat([this.buf.subarray(0, this.length), encodeStringField(RESPONSE_NONCE, nonce)]);
    let pos = writeHeader(this.buf, this.length, RESPONSE_NONCE, bytes);
    pos += this.buf.write(nonce, pos, 'utf8');
    return this.buf.subarray(0, pos);
  }

  /**
   * The complete message framed for gRPC (uncompressed), as pieces to write in order: the 5-byte
   * prefix, the shared body and this stream's nonce field. The body piece is a view of the shared
   * buffer that no later call changes (the nonce goes in a piece of its own), so it may sit in a
   * write queue while other streams write the same body.
   */
  grpcFrame(nonce: string): Buffer[] {
    const nonceField = encodeStringField(RESPONSE_NONCE, nonce);
    const prefix = Buffer.allocUnsafe(GRPC_PREFIX_BYTES);
    prefix.writeUInt8(0, 0); // not compressed
    prefix.writeUInt32BE(this.length + nonceField.length, 1);
    return [prefix, this.buf.subarray(0, this.length), nonceField];
  }
}

/** gRPC's message prefix: a compressed flag and a 4-byte big-endian length. */
const GRPC_PREFIX_BYTES = 5;

/** A response on its way out: the shared body and this stream's nonce, joined by the serializer. */
export interface OutgoingResponse {
  body: EncodedBody;
  nonce: string;
}

export function serializeOutgoing(r: OutgoingResponse): Buffer {
  return r.body.withNonce(r.nonce);
}

/** Everything of a DeltaDiscoveryResponse except the nonce. */
export function encodeResponseBody(body: ResponseBody): EncodedBody {
  const parts: Buffer[] = [encodeStringField(RESPONSE_TYPE_URL, body.typeUrl)];
  for (const r of body.resources) parts.push(resourceFrame(body.typeUrl, r));
  for (const name of body.removed) parts.push(encodeStringField(RESPONSE_REMOVED, name));
  return new EncodedBody(parts);
}
