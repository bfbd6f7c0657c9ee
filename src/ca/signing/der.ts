// A minimal, strict DER reader and writer: just what the CA needs to parse untrusted CSRs and to
// assemble certificates from pre-encoded parts. Reading is bounded (nesting depth, element count)
// and rejects every non-DER length form, so a hostile input cannot make it loop or allocate.

/** Deepest nesting the reader follows; a CSR needs about 7 levels. */
export const MAX_DER_DEPTH = 16;
/** Most elements the reader visits in one document. */
export const MAX_DER_ELEMENTS = 4096;

export const TAG = {
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  IA5_STRING: 0x16,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/** Malformed DER; the message says where and what. */
export class DerError extends Error {
  override name = 'DerError';
}

/** One tag-length-value element, as offsets into the buffer it came from. */
export interface Tlv {
  tag: number;
  /** The whole element, header included. */
  start: number;
  /** First content byte. */
  contentStart: number;
  /** One past the last content byte. */
  end: number;
}

/** The byte at `at`, or a DerError when the input ends before it. */
export function byteAt(buf: Uint8Array, at: number): number {
  const byte = buf[at];
  if (byte === undefined) throw new DerError(`truncated input at byte ${at}`);
  return byte;
}

/** Reads the element at `offset`; single-byte tags only (all X.509 needs). */
export function readTlv(buf: Uint8Array, offset: number, limit: number = buf.length): Tlv {
  if (offset + 2 > limit) throw new DerError(`truncated element at byte ${offset}`);
  const tag = byteAt(buf, offset);
  if ((tag & 0x1f) === 0x1f) throw new DerError(`multi-byte tag at byte ${offset}`);
  const first = byteAt(buf, offset + 1);
  let length: number;
  let contentStart: number;
  if (first < 0x80) {
    length = first;
    contentStart = offset + 2;
  } else {
    const count = first & 0x7f;
    if (count === 0) throw new DerError(`indefinite length at byte ${offset}`);
    if (count > 3) throw new DerError(`length of ${count} bytes at byte ${offset} is too long`);
    if (offset + 2 + count > limit) throw new DerError(`truncated length at byte ${offset}`);
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + byteAt(buf, offset + 2 + i);
    if (byteAt(buf, offset + 2) === 0) throw new DerError(`non-minimal length at byte ${offset}`);
    if (length < 0x80) throw new DerError(`non-minimal length at byte ${offset}`);
    contentStart = offset + 2 + count;
  }
  const end = contentStart + length;
  if (end > limit) throw new DerError(`element at byte ${offset} runs past its container`);
  return { tag, start: offset, contentStart, end };
}

/** The child elements of a constructed element, in order. */
export function children(buf: Uint8Array, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  let at = parent.contentStart;
  while (at < parent.end) {
    const child = readTlv(buf, at, parent.end);
    out.push(child);
    at = child.end;
    if (out.length > MAX_DER_ELEMENTS) throw new DerError('too many elements');
  }
  return out;
}

/** A tuple of `N` elements, so a caller that checked the count destructures without a check per element. */
export type TlvTuple<N extends number, Acc extends Tlv[] = []> = Acc['length'] extends N
  ? Acc
  : TlvTuple<N, [...Acc, Tlv]>;

/**
 * The children of a constructed element when there are exactly `count` of them; otherwise a DerError
 * naming `what`, the count expected and the count found.
 */
export function childrenExactly<N extends number>(buf: Uint8Array, parent: Tlv, count: N, what: string): TlvTuple<N> {
  const out = children(buf, parent);
  if (out.length !== count) throw new DerError(`${what}: expected ${count} elements, got ${out.length}`);
  return out as TlvTuple<N>;
}

/** The element at `index` of `list`, or a DerError naming `what` when there is none. */
export function nth(list: readonly Tlv[], index: number, what: string): Tlv {
  const element = list[index];
  if (!element) throw new DerError(`${what}: missing (element ${index} of ${list.length})`);
  return element;
}

/**
 * Checks that a whole document is well-formed DER down to its leaves: every constructed element
 * parses exactly into children, within the depth and element bounds.
 */
export function checkWellFormed(buf: Uint8Array, root: Tlv): void {
  let visited = 0;
  const walk = (tlv: Tlv, depth: number): void => {
    if (depth > MAX_DER_DEPTH) throw new DerError(`nesting deeper than ${MAX_DER_DEPTH}`);
    if (++visited > MAX_DER_ELEMENTS) throw new DerError(`more than ${MAX_DER_ELEMENTS} elements`);
    if ((tlv.tag & 0x20) === 0) return;
    for (const child of children(buf, tlv)) walk(child, depth + 1);
  };
  walk(root, 0);
}

export function expectTag(tlv: Tlv, tag: number, what: string): void {
  if (tlv.tag !== tag) throw new DerError(`${what}: expected tag 0x${tag.toString(16)}, got 0x${tlv.tag.toString(16)}`);
}

export function content(buf: Uint8Array, tlv: Tlv): Buffer {
  return Buffer.from(buf.buffer, buf.byteOffset + tlv.contentStart, tlv.end - tlv.contentStart);
}

export function whole(buf: Uint8Array, tlv: Tlv): Buffer {
  return Buffer.from(buf.buffer, buf.byteOffset + tlv.start, tlv.end - tlv.start);
}

/** Dotted form of an OBJECT IDENTIFIER's content. */
export function decodeOid(bytes: Uint8Array): string {
  if (bytes.length === 0 || bytes.length > 64) throw new DerError('bad object identifier length');
  const parts: number[] = [];
  let value = 0;
  for (const [i, b] of bytes.entries()) {
    if (value === 0 && b === 0x80) throw new DerError('non-minimal object identifier');
    value = value * 128 + (b & 0x7f);
    if (value > Number.MAX_SAFE_INTEGER / 128) throw new DerError('object identifier arc too large');
    if ((b & 0x80) === 0) {
      if (parts.length === 0) parts.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80);
      else parts.push(value);
      value = 0;
    } else if (i === bytes.length - 1) {
      throw new DerError('truncated object identifier');
    }
  }
  return parts.join('.');
}

// ---- writing ----

export function encodeLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  if (length < 0x100) return Buffer.from([0x81, length]);
  if (length < 0x10000) return Buffer.from([0x82, length >> 8, length & 0xff]);
  return Buffer.from([0x83, length >> 16, (length >> 8) & 0xff, length & 0xff]);
}

/** Bytes a DER length takes (the short form below 0x80, then 0x81-0x83 and the count). */
function lengthBytes(length: number): number {
  return length < 0x80 ? 1 : length < 0x100 ? 2 : length < 0x10000 ? 3 : 4;
}

// One allocation per element: the certificate path calls this about twenty times per leaf, and
// concatenating the parts, then header and body, made three buffers (and as much garbage) each.
export function tlv(tag: number, ...parts: Uint8Array[]): Buffer {
  let length = 0;
  for (const p of parts) length += p.length;
  const header = 1 + lengthBytes(length);
  const out = Buffer.allocUnsafe(header + length);
  out[0] = tag;
  if (length < 0x80) out[1] = length;
  else {
    out[1] = 0x80 | (header - 2);
    for (let i = header - 1, v = length; i >= 2; i--, v >>>= 8) out[i] = v & 0xff;
  }
  let at = header;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function encodeOid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number);
  if (first === undefined || second === undefined)
    throw new Error(`object identifier ${dotted} has fewer than two arcs`);
  const bytes: number[] = [40 * first + second];
  for (const arc of rest) {
    const chunk: number[] = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(TAG.OID, Buffer.from(bytes));
}

/** A positive INTEGER from unsigned big-endian bytes. */
export function encodeUnsignedInteger(bytes: Uint8Array): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const trimmed = bytes.subarray(i);
  return (trimmed[0] ?? 0) & 0x80 ? tlv(TAG.INTEGER, Buffer.from([0]), trimmed) : tlv(TAG.INTEGER, trimmed);
}

/**
 * The last few times encoded, by whole second: every certificate issued within one second has the
 * same notBefore and notAfter (for a given lifetime), so under load the encoding is a lookup.
 * Callers get a shared buffer and only ever copy it into a larger one.
 */
const TIME_CACHE_ENTRIES = 8;
const timeCache = new Map<number, Buffer>();

/** RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050. */
export function encodeTime(date: Date): Buffer {
  const second = Math.floor(date.getTime() / 1000);
  const cached = timeCache.get(second);
  if (cached) return cached;
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  const year = date.getUTCFullYear();
  const encoded =
    year < 2050
      ? tlv(TAG.UTC_TIME, Buffer.from(`${digits.slice(2)}Z`, 'latin1'))
      : tlv(TAG.GENERALIZED_TIME, Buffer.from(`${digits}Z`, 'latin1'));
  if (timeCache.size >= TIME_CACHE_ENTRIES) {
    const oldest = timeCache.keys().next();
    if (!oldest.done) timeCache.delete(oldest.value);
  }
  timeCache.set(second, encoded);
  return encoded;
}
