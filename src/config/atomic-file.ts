// Writes a state file so that a crash at any instant leaves either the old file or the new one,
// never a torn or empty one: the bytes go to a temporary file in the same directory (same
// filesystem, so the final step is a rename), are fsynced, then renamed (or hard-linked, when the
// file must not already exist) over the target, and the directory is fsynced so the new name
// itself survives a power loss. Every file the server keeps between restarts goes through here.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';

/** Private keys: readable and writable by the owner only. */
export const PRIVATE_FILE_MODE = 0o600;
/** Certificates: public by nature, readable by everyone. */
export const PUBLIC_FILE_MODE = 0o644;
/** The state directory holds private keys, so only its owner may list or enter it. */
export const STATE_DIR_MODE = 0o700;

export interface AtomicWriteOptions {
  /** The file's exact mode (umask does not apply). */
  mode: number;
  /**
   * Create only: fail with EEXIST when the file exists, leaving it untouched. The final step is
   * then link(2), which never replaces a file, instead of rename(2), which does.
   */
  exclusive?: boolean;
}

/** Temporary files start with this, so a leftover one from a crash is recognisable (and dot-hidden). */
export const TEMP_FILE_PREFIX = '.tmp-';

function tempPathFor(file: string): string {
  return path.join(
    path.dirname(file),
    `${TEMP_FILE_PREFIX}${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}`,
  );
}

function isIgnorableDirSyncError(err: unknown): boolean {
  // Some filesystems (and Windows) refuse to fsync a directory; the rename is still atomic there.
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'EISDIR' || code === 'EINVAL' || code === 'EPERM' || code === 'ENOTSUP';
}

/** Writes `data` to `file` atomically (see the file comment); creates the parent directory if needed. */
export async function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions,
): Promise<void> {
  const dir = path.dirname(file);
  await fs.promises.mkdir(dir, { recursive: true, mode: STATE_DIR_MODE });
  const tmp = tempPathFor(file);
  try {
    const handle = await fs.promises.open(tmp, 'wx', options.mode);
    try {
      await handle.chmod(options.mode);
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (options.exclusive) await fs.promises.link(tmp, file);
    else await fs.promises.rename(tmp, file);
  } finally {
    // After a rename the temp name is gone already; after a link or a failure it must go.
    await fs.promises.rm(tmp, { force: true });
  }
  await syncDirectory(dir);
}

/** The synchronous twin of writeFileAtomic, for start-up paths and commands that are synchronous. */
export function writeFileAtomicSync(file: string, data: string | Uint8Array, options: AtomicWriteOptions): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: STATE_DIR_MODE });
  const tmp = tempPathFor(file);
  try {
    const fd = fs.openSync(tmp, 'wx', options.mode);
    try {
      fs.fchmodSync(fd, options.mode);
      fs.writeFileSync(fd, data);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    if (options.exclusive) fs.linkSync(tmp, file);
    else fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  syncDirectorySync(dir);
}

/** Removes a file if it exists and makes the removal durable. */
export async function removeFileDurably(file: string): Promise<void> {
  await fs.promises.rm(file, { force: true });
  await syncDirectory(path.dirname(file));
}

async function syncDirectory(dir: string): Promise<void> {
  let handle: fs.promises.FileHandle | undefined;
  try {
    handle = await fs.promises.open(dir, 'r');
    await handle.sync();
  } catch (err) {
    if (!isIgnorableDirSyncError(err)) throw err;
  } finally {
    await handle?.close();
  }
}

function syncDirectorySync(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch (err) {
    if (!isIgnorableDirSyncError(err)) throw err;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
