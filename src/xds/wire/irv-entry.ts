// One initial_resource_versions map entry's key and value, found in place: shared by the request
// decoder (request-wire.ts) and the decoder that digests a large request as its DATA frames
// arrive (request-stream.ts), so both read an entry alike.

import { Reader, WIRE_LEN } from './proto-reader';

/**
 * Byte ranges of one map entry's key and value. One object is reused for every entry of a request,
 * so decoding allocates nothing per entry.
 */
export interface EntryRanges {
  keyStart: number;
  keyEnd: number;
  valueStart: number;
  valueEnd: number;
}

export function newEntryRanges(): EntryRanges {
  return { keyStart: 0, keyEnd: 0, valueStart: 0, valueEnd: 0 };
}

/** Byte ranges of the last key and value of one map entry (field 1 key, field 2 value); absent ones are empty. */
export function entryRanges(buf: Buffer, start: number, end: number, out: EntryRanges): void {
  // What every encoder writes for short strings: key (tag 0x0a, one length byte), then value
  // (tag 0x12, one length byte), nothing else.
  const keyLen = buf[start + 1];
  if (buf[start] === 0x0a && keyLen !== undefined && keyLen < 0x80) {
    const v = start + 2 + keyLen;
    const valueLen = buf[v + 1];
    if (buf[v] === 0x12 && valueLen !== undefined && valueLen < 0x80 && v + 2 + valueLen === end) {
      out.keyStart = start + 2;
      out.keyEnd = v;
      out.valueStart = v + 2;
      out.valueEnd = end;
      return;
    }
  }
  out.keyStart = out.keyEnd = out.valueStart = out.valueEnd = start;
  const entry = new Reader(buf, start, end);
  while (entry.pos < end) {
    const t = entry.varint();
    if (t === ((1 << 3) | WIRE_LEN) || t === ((2 << 3) | WIRE_LEN)) {
      const n = entry.varint();
      const s = entry.pos;
      if (s + n > end) throw new Error(`map entry field length ${n} runs past the end of the entry`);
      entry.pos = s + n;
      if (t === ((1 << 3) | WIRE_LEN)) {
        out.keyStart = s;
        out.keyEnd = s + n;
      } else {
        out.valueStart = s;
        out.valueEnd = s + n;
      }
    } else {
      entry.skip(t & 7);
    }
  }
}
