// --stateDir holds private keys (the CA's, the token key): it is the server's alone. A folder or a
// key file that others may read, left by a copy, a restore or an older version, is tightened at
// start, and each change is reported so the operator learns the keys were exposed.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { PRIVATE_FILE_MODE, STATE_DIR_MODE } from './atomic-file';
import { UsageError } from './settings';

/** Permission bits for group and others: none of them may be set on the folder or a key. */
const GROUP_OTHER_BITS = 0o077;

export interface Tightened {
  path: string;
  from: string;
  to: string;
}

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, '0');

/** Folder levels createStateDir makes at most: a path deeper than this is a mistake, not a layout. */
export const MAX_STATE_DIR_NEW_LEVELS = 64;

/**
 * Makes `dir` and its missing parents, one level at a time. Node's recursive mkdir never returns on
 * a filesystem that answers ENOENT for a folder it will not create (/proc, /sys): it retries the
 * same level forever. Here each level is made once, and a refusal throws a UsageError (exit 2)
 * naming the flag, the level and the reason.
 */
export function createStateDir(dir: string, mode: number = STATE_DIR_MODE): void {
  const missing: string[] = [];
  for (let at = path.resolve(dir); !fs.existsSync(at); at = path.dirname(at)) {
    if (missing.length === MAX_STATE_DIR_NEW_LEVELS)
      throw new UsageError(
        `invalid value for --stateDir: ${dir} needs more than ${MAX_STATE_DIR_NEW_LEVELS} new folders`,
      );
    missing.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const level of missing) {
    try {
      fs.mkdirSync(level, { mode });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'EEXIST' && fs.statSync(level, { throwIfNoEntry: false })?.isDirectory()) continue;
      const why = e.code === 'ENOENT' ? 'its filesystem does not allow new folders there' : (e.code ?? e.message);
      throw new UsageError(`invalid value for --stateDir: ${level} cannot be created (${why})`);
    }
  }
}

/**
 * Creates `dir` (0700) when absent; otherwise removes group/other bits from it and from each of
 * `privateFiles` that exists. Returns what it changed; a file it cannot change throws, naming it.
 */
export function tightenStateDir(dir: string, privateFiles: readonly string[]): Tightened[] {
  const changed: Tightened[] = [];
  const tighten = (p: string, mode: number) => {
    const st = fs.statSync(p, { throwIfNoEntry: false });
    if (!st || (st.mode & GROUP_OTHER_BITS) === 0) return;
    try {
      fs.chmodSync(p, mode);
    } catch (err) {
      throw new Error(
        `${p} is readable by others (mode ${octal(st.mode)}) and cannot be tightened: ${(err as Error).message}`,
      );
    }
    changed.push({ path: p, from: octal(st.mode), to: octal(mode) });
  };
  createStateDir(dir);
  tighten(dir, STATE_DIR_MODE);
  for (const name of privateFiles) tighten(path.join(dir, name), PRIVATE_FILE_MODE);
  return changed;
}
