// A bounds-checked reader of protobuf wire format over a byte range, shared by the hand decoders
// of client requests. Every read checks the end of its range; nothing here recurses.

export const WIRE_VARINT = 0;
export const WIRE_I64 = 1;
export const WIRE_LEN = 2;
export const WIRE_I32 = 5;

export class Reader {
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
      const b = this.pos < this.end ? this.buf[this.pos++] : undefined;
      if (b === undefined) throw new Error('truncated varint');
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
