// createStateDir makes each missing level once, so a refusal is an answer, not a hang.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MAX_STATE_DIR_NEW_LEVELS, createStateDir } from '../../../src/config/state-dir';
import { UsageError } from '../../../src/config/settings';

describe('createStateDir', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-statedir-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  test('makes every missing level with the mode given, and accepts a folder that exists', () => {
    const dir = path.join(root, 'a', 'b', 'c');
    createStateDir(dir, 0o700);
    for (const level of [path.join(root, 'a'), path.join(root, 'a', 'b'), dir])
      expect(fs.statSync(level).mode & 0o777).toBe(0o700);
    expect(() => createStateDir(dir)).not.toThrow();
  });

  test(`at most ${MAX_STATE_DIR_NEW_LEVELS} new levels; nothing is made past the limit`, () => {
    const atLimit = path.join(root, ...Array.from({ length: MAX_STATE_DIR_NEW_LEVELS }, (_, i) => `l${i}`));
    createStateDir(atLimit);
    expect(fs.statSync(atLimit).isDirectory()).toBe(true);
    const deep = path.join(root, 'x', ...Array.from({ length: MAX_STATE_DIR_NEW_LEVELS }, (_, i) => `l${i}`));
    expect(() => createStateDir(deep)).toThrow(
      new UsageError(`invalid value for --stateDir: ${deep} needs more than ${MAX_STATE_DIR_NEW_LEVELS} new folders`),
    );
    expect(fs.existsSync(path.join(root, 'x'))).toBe(false);
  });

  test('a filesystem that answers ENOENT for a new folder (/proc) is a usage error naming the level', () => {
    expect(() => createStateDir('/proc/istiod-ts-test/state')).toThrow(
      'invalid value for --stateDir: /proc/istiod-ts-test cannot be created (its filesystem does not allow new folders there)',
    );
  });
});
