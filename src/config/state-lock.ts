// One server per --stateDir: two would both rotate the root and overwrite each other's state files.
// The lock is a file created exclusively, naming its holder; a lock whose holder is gone (a crash,
// kill -9) is taken over.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PRIVATE_FILE_MODE } from './atomic-file';
import { UsageError } from './settings';

export const STATE_LOCK_FILE = '.lock';

interface Holder {
  pid: number;
  host: string;
  since: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(file: string): Holder | undefined {
  try {
    const h = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Holder>;
    return typeof h.pid === 'number' && typeof h.host === 'string'
      ? { pid: h.pid, host: h.host, since: String(h.since) }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the folder's lock or throws a UsageError (exit 2) naming the holder. Returns the release,
 * which removes the lock only while it is still this process's.
 */
export function lockStateDir(dir: string): () => void {
  const file = path.join(dir, STATE_LOCK_FILE);
  const me: Holder = { pid: process.pid, host: os.hostname(), since: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, `${JSON.stringify(me)}\n`, { flag: 'wx', mode: PRIVATE_FILE_MODE });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
    }
    const holder = readHolder(file);
    // Another host's holder cannot be checked from here (a shared folder): it is never taken over.
    if (holder && (holder.host !== me.host || alive(holder.pid)))
      throw new UsageError(
        `--stateDir ${dir} is in use by another istiod-ts (pid ${holder.pid} on ${holder.host}, since ${holder.since}); stop it or give this one another folder`,
      );
    // The holder is gone (or the file is not a lock we wrote): take it over.
    fs.rmSync(file, { force: true });
  }
  const release = () => {
    process.removeListener('exit', release);
    if (readHolder(file)?.pid === me.pid) fs.rmSync(file, { force: true });
  };
  // A start that fails after this (exit 1 or 2) leaves the folder as it found it.
  process.once('exit', release);
  return release;
}
