// --stateDir holds private keys (the CA's, the token key): it is the server's alone. A folder or a
// key file that others may read, left by a copy, a restore or an older version, is tightened at
// start, and each change is reported so the operator learns the keys were exposed.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { PRIVATE_FILE_MODE, STATE_DIR_MODE } from './atomic-file';

/** Permission bits for group and others: none of them may be set on the folder or a key. */
const GROUP_OTHER_BITS = 0o077;

export interface Tightened {
  path: string;
  from: string;
  to: string;
}

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, '0');

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
  fs.mkdirSync(dir, { recursive: true, mode: STATE_DIR_MODE });
  tighten(dir, STATE_DIR_MODE);
  for (const name of privateFiles) tighten(path.join(dir, name), PRIVATE_FILE_MODE);
  return changed;
}
