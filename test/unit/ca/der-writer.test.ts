import { TAG, encodeLength, encodeTime, readTlv, tlv } from '../../../src/ca/signing/der';
import { toPem } from '../../../src/ca/signing/leaf-signer';

describe('DER writer', () => {
  it('writes every length form, the header before the concatenated parts', () => {
    for (const size of [0, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0x12345]) {
      const a = Buffer.alloc(size >> 1, 0xaa);
      const b = Buffer.alloc(size - a.length, 0xbb);
      const out = tlv(TAG.OCTET_STRING, a, b);
      expect(out.subarray(0, 1 + encodeLength(size).length)).toEqual(
        Buffer.concat([Buffer.from([TAG.OCTET_STRING]), encodeLength(size)]),
      );
      const read = readTlv(out, 0);
      expect(read.end).toBe(out.length);
      expect(out.subarray(read.contentStart)).toEqual(Buffer.concat([a, b]));
    }
  });

  it('encodes a time the same whether or not it was encoded in the same second before', () => {
    const t = new Date('2031-05-06T07:08:09.500Z');
    const first = Buffer.from(encodeTime(t));
    expect(first.toString('latin1', 2)).toBe('310506070809Z');
    expect(encodeTime(new Date('2031-05-06T07:08:09.999Z'))).toEqual(first);
    expect(encodeTime(new Date('2031-05-06T07:08:10.000Z')).toString('latin1', 2)).toBe('310506070810Z');
    expect(encodeTime(new Date('2051-01-02T03:04:05Z')).toString('latin1', 2)).toBe('20510102030405Z');
  });

  it('wraps PEM bodies at 64 characters with no empty line', () => {
    for (const size of [1, 47, 48, 49, 96, 500]) {
      const der = Buffer.alloc(size, 7);
      const pem = toPem(der, 'TEST');
      const lines = pem.trimEnd().split('\n');
      expect(lines[0]).toBe('-----BEGIN TEST-----');
      expect(lines[lines.length - 1]).toBe('-----END TEST-----');
      const body = lines.slice(1, -1);
      expect(body.every((l) => l.length > 0 && l.length <= 64)).toBe(true);
      expect(Buffer.from(body.join(''), 'base64')).toEqual(der);
    }
  });
});
