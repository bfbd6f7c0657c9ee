// The zip reader behind the helm helper, on small archives written here byte by byte.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { readZipEntry } from '../../support/helm';

interface Entry {
  name: string;
  data: Buffer;
  method: 0 | 8;
  /** Stored CRC-32; defaults to the data's real one. */
  crc?: number;
}

/** A minimal zip: local headers with data, a central directory, an end record. */
function zipOf(entries: Entry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const body = e.method === 8 ? zlib.deflateRawSync(e.data) : e.data;
    const name = Buffer.from(e.name);
    const crc = e.crc ?? zlib.crc32(e.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(e.method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(e.method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(e.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += 30 + name.length + body.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-zip-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(name: string, bytes: Buffer): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
}

describe('readZipEntry', () => {
  const text = Buffer.from('helm '.repeat(1000));

  test('reads a deflated entry and a stored entry by name', () => {
    const file = write('ok.zip', zipOf([{ name: 'a/stored', data: Buffer.from('plain'), method: 0 }, { name: 'b/deflated', data: text, method: 8 }]));
    expect(readZipEntry(file, 'b/deflated')).toEqual(text);
    expect(readZipEntry(file, 'a/stored').toString()).toBe('plain');
  });

  test('an entry whose CRC-32 does not match is refused', () => {
    const file = write('crc.zip', zipOf([{ name: 'x', data: text, method: 8, crc: 1234 }]));
    expect(() => readZipEntry(file, 'x')).toThrow(`${file}: x fails its CRC-32 check`);
  });

  test('a missing entry is named in the error', () => {
    const file = write('missing.zip', zipOf([{ name: 'x', data: text, method: 8 }]));
    expect(() => readZipEntry(file, 'helm/helm')).toThrow(`${file}: no entry named helm/helm`);
  });

  test('a file that is not a zip says so', () => {
    const file = write('not.zip', Buffer.from('just some text, no zip records in here at all'));
    expect(() => readZipEntry(file, 'x')).toThrow(`${file}: no end-of-central-directory record; not a zip file`);
  });
});
