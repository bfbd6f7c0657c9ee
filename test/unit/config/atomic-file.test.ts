// State files are replaced whole or not at all, with exact modes and no temporary files left.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  PRIVATE_FILE_MODE,
  PUBLIC_FILE_MODE,
  STATE_DIR_MODE,
  TEMP_FILE_PREFIX,
  writeFileAtomic,
  writeFileAtomicSync,
} from '../../../src/config/atomic-file';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-atomic-'));
}

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe.each([
  ['writeFileAtomic', writeFileAtomic],
  [
    'writeFileAtomicSync',
    // In a promise, so both are called alike; a throw becomes the rejection, as it would from an async function.
    (...args: Parameters<typeof writeFileAtomicSync>) =>
      new Promise<void>((resolve) => {
        writeFileAtomicSync(...args);
        resolve();
      }),
  ],
] as const)('%s', (_name, write) => {
  let dir: string;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test(`a key is written with mode 0${PRIVATE_FILE_MODE.toString(8)} and no temporary file is left`, async () => {
    const file = path.join(dir, 'key.pem');
    await write(file, 'secret', { mode: PRIVATE_FILE_MODE });
    expect(fs.readFileSync(file, 'utf8')).toBe('secret');
    expect(modeOf(file)).toBe(PRIVATE_FILE_MODE);
    expect(fs.readdirSync(dir)).toEqual(['key.pem']);
  });

  test('the mode is exact whatever the umask', async () => {
    const previous = process.umask(0o077);
    try {
      const file = path.join(dir, 'cert.pem');
      await write(file, 'cert', { mode: PUBLIC_FILE_MODE });
      expect(modeOf(file)).toBe(PUBLIC_FILE_MODE);
    } finally {
      process.umask(previous);
    }
  });

  test('a rewrite replaces the content and the mode, leaving only the file', async () => {
    const file = path.join(dir, 'root-cert.pem');
    fs.writeFileSync(file, 'old', { mode: 0o666 });
    await write(file, 'new', { mode: PUBLIC_FILE_MODE });
    expect(fs.readFileSync(file, 'utf8')).toBe('new');
    expect(modeOf(file)).toBe(PUBLIC_FILE_MODE);
    expect(fs.readdirSync(dir)).toEqual(['root-cert.pem']);
  });

  test('an exclusive write over an existing file fails with EEXIST and changes nothing', async () => {
    const file = path.join(dir, 'key.pem');
    fs.writeFileSync(file, 'first', { mode: PRIVATE_FILE_MODE });
    await expect(write(file, 'second', { mode: PRIVATE_FILE_MODE, exclusive: true })).rejects.toMatchObject({
      code: 'EEXIST',
    });
    expect(fs.readFileSync(file, 'utf8')).toBe('first');
    expect(fs.readdirSync(dir)).toEqual(['key.pem']);
  });

  test('a write that cannot be completed leaves the old file and no temporary file', async () => {
    // A directory in the way: the final rename fails after the temporary file was written.
    const target = path.join(dir, 'in-the-way');
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, 'keep'), 'x');
    await expect(write(target, 'data', { mode: PRIVATE_FILE_MODE })).rejects.toThrow();
    expect(fs.readdirSync(dir)).toEqual(['in-the-way']);
    expect(fs.readdirSync(dir).some((n) => n.startsWith(TEMP_FILE_PREFIX))).toBe(false);
  });

  test(`a missing state directory is created with mode 0${STATE_DIR_MODE.toString(8)}`, async () => {
    const state = path.join(dir, 'state');
    await write(path.join(state, 'key.pem'), 'k', { mode: PRIVATE_FILE_MODE });
    expect(modeOf(state)).toBe(STATE_DIR_MODE);
  });
});
