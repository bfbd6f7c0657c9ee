// Structural mutations of protobuf bytes: the message is split into fields (tag, wire type,
// payload), and whole fields are dropped, repeated, swapped, re-typed, given boundary varints or
// oversized strings, or mutated one level down when their payload is itself a message.

import { boundaryStrings } from './mutate-json';
import type { Rng } from './prng';

export interface ProtoField {
  field: number;
  wire: number;
  /** The payload as it follows the tag (a length prefix included for wire type 2). */
  raw: Buffer;
}

/** Deepest nesting a mutation descends into (payloads are mutated as messages down to it). */
const MAX_NEST = 6;
/** Most fields read from one message; the rest is kept as an opaque tail. */
const MAX_FIELDS = 2000;

export function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Buffer.from(out);
}

function readVarint(buf: Buffer, pos: number): [number, number] | undefined {
  let result = 0;
  let mul = 1;
  for (let i = 0; i < 10 && pos < buf.length; i++) {
    const b = buf[pos++]!;
    result += (b & 0x7f) * mul;
    if (b < 0x80) return [result, pos];
    mul *= 128;
  }
  return undefined;
}

/** The fields of a message, or undefined when the bytes are not one (then they are mutated as bytes). */
export function splitFields(buf: Buffer): { fields: ProtoField[]; tail: Buffer } | undefined {
  const fields: ProtoField[] = [];
  let pos = 0;
  while (pos < buf.length && fields.length < MAX_FIELDS) {
    const tag = readVarint(buf, pos);
    if (!tag) return undefined;
    const start = tag[1];
    const wire = tag[0] & 7;
    let end: number;
    if (wire === 0) {
      const v = readVarint(buf, start);
      if (!v) return undefined;
      end = v[1];
    } else if (wire === 1) end = start + 8;
    else if (wire === 5) end = start + 4;
    else if (wire === 2) {
      const n = readVarint(buf, start);
      if (!n) return undefined;
      end = n[1] + n[0];
    } else return undefined;
    if (end > buf.length) return undefined;
    fields.push({ field: Math.floor(tag[0] / 8), wire, raw: buf.subarray(start, end) });
    pos = end;
  }
  return { fields, tail: buf.subarray(pos) };
}

export function joinFields(fields: readonly ProtoField[], tail: Buffer = Buffer.alloc(0)): Buffer {
  const parts: Buffer[] = [];
  for (const f of fields) parts.push(varint(f.field * 8 + f.wire), f.raw);
  parts.push(tail);
  return Buffer.concat(parts);
}

export function lengthDelimited(payload: Buffer): Buffer {
  return Buffer.concat([varint(payload.length), payload]);
}

function payloadOf(f: ProtoField): Buffer {
  const n = readVarint(f.raw, 0)!;
  return f.raw.subarray(n[1]);
}

const BOUNDARY_VARINTS = [0, 1, 127, 128, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1];

function byteNoise(rng: Rng, buf: Buffer): Buffer {
  const out = Buffer.from(buf);
  if (out.length === 0) return rng.bytes(rng.size(16));
  switch (rng.int(4)) {
    case 0:
      out[rng.int(out.length)] = rng.int(256);
      return out;
    case 1:
      return out.subarray(0, rng.int(out.length));
    case 2:
      return Buffer.concat([out, rng.bytes(rng.size(32))]);
    default:
      return Buffer.concat([
        out.subarray(0, rng.int(out.length)),
        rng.bytes(rng.size(8)),
        out.subarray(rng.int(out.length)),
      ]);
  }
}

/** One structural mutation of a message's bytes. */
export function mutateProto(rng: Rng, buf: Buffer, depth = 0): Buffer {
  const split = splitFields(buf);
  if (!split || split.fields.length === 0 || rng.chance(0.04)) return byteNoise(rng, buf);
  const { fields, tail } = split;
  const i = rng.int(fields.length);
  const f = fields[i]!;
  switch (rng.int(10)) {
    case 0:
      fields.splice(i, 1);
      break;
    case 1: {
      // repeat a field, up to many times (repeated names, map entries)
      const n = rng.scale([1, 1, 2, 10], [1000, 20000]);
      for (let k = 0; k < n; k++) fields.splice(i, 0, f);
      break;
    }
    case 2: {
      const j = rng.int(fields.length);
      fields[i] = fields[j]!;
      fields[j] = f;
      break;
    }
    case 3: // another wire type under the same number
      fields[i] = {
        field: f.field,
        wire: rng.pick([0, 1, 2, 5]),
        raw: rng.pick([
          varint(rng.pick(BOUNDARY_VARINTS)),
          Buffer.alloc(8),
          Buffer.alloc(4),
          lengthDelimited(Buffer.from('x')),
        ]),
      };
      break;
    case 4: // another field number
      fields[i] = { ...f, field: rng.pick([0, 1, 2, 3, 4, 5, 6, 7, 8, 15, 16, 2 ** 29 - 1]) };
      break;
    case 5: // a boundary string payload
      fields[i] = {
        field: f.field,
        wire: 2,
        raw: lengthDelimited(
          Buffer.from(
            rng.chance(0.2)
              ? 'x'.repeat(rng.scale([256, 1024, 4096], [65536, 100_000, 1_000_000]))
              : boundaryStrings(rng),
          ),
        ),
      };
      break;
    case 6: // a length prefix that lies
      if (f.wire === 2) {
        const payload = payloadOf(f);
        fields[i] = {
          ...f,
          raw: Buffer.concat([varint(Math.max(0, payload.length + rng.pick([-1, 1, 1000, 2 ** 31]))), payload]),
        };
      }
      break;
    case 7: // deep nesting: a message inside itself
      if (f.wire === 2) {
        let payload = payloadOf(f);
        const levels = rng.scale([2, 16, 100], [1000, 5000]);
        for (let k = 0; k < levels && payload.length < 4_000_000; k++)
          payload = Buffer.concat([varint(f.field * 8 + 2), lengthDelimited(payload)]);
        fields[i] = { ...f, raw: lengthDelimited(payload) };
      }
      break;
    case 8: // a boundary varint
      fields[i] = { field: f.field, wire: 0, raw: varint(rng.pick(BOUNDARY_VARINTS)) };
      break;
    default: // one level down when the payload parses as a message, else byte noise in the payload
      if (f.wire === 2) {
        const payload = payloadOf(f);
        fields[i] = {
          ...f,
          raw: lengthDelimited(depth < MAX_NEST ? mutateProto(rng, payload, depth + 1) : byteNoise(rng, payload)),
        };
      }
  }
  return joinFields(fields, tail);
}
