// A plugged-in CA: the four files of ROOT_CA_DIR (the "cacerts" Secret in a cluster). Any one of
// them present means the operator meant to plug in a CA, so a partial set is an error rather than
// a silent fall-back to a self-signed root. The directory is watched so that a rotated
// intermediate signs new certificates without a restart.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { scopedLogger } from '../log/logger';
import { CaKeyMaterial, buildKeyMaterial } from './key-material';

const log = scopedLogger('ca');

export const PLUGGED_IN_FILES = ['ca-cert.pem', 'ca-key.pem', 'root-cert.pem', 'cert-chain.pem'] as const;
/** Quiet time after a file event before reloading, so a multi-file update is read once. */
export const PLUGGED_IN_DEBOUNCE_MS = 100;
/** Periodic re-check, for filesystems where watch events are unreliable (some volume mounts). */
export const PLUGGED_IN_POLL_MS = 30_000;

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
}

/** Reads ROOT_CA_DIR; undefined when none of the files exist (use a self-signed root). */
export function loadPluggedInCa(dir: string): CaKeyMaterial | undefined {
  const contents = PLUGGED_IN_FILES.map((name) => readIfExists(path.join(dir, name)));
  if (contents.every((c) => c === undefined)) return undefined;
  const [caCertPem, caKeyPem, rootCertPem, certChainPem] = contents;
  if (caCertPem === undefined || caKeyPem === undefined || rootCertPem === undefined || certChainPem === undefined) {
    const missing = PLUGGED_IN_FILES.filter((_, i) => contents[i] === undefined);
    const present = PLUGGED_IN_FILES.filter((_, i) => contents[i] !== undefined);
    throw new Error(
      `plugged-in CA in ${dir} is incomplete: missing ${missing.join(', ')}; add them, or remove ${present.join(', ')} to use a self-signed root`,
    );
  }
  try {
    return buildKeyMaterial({ caCertPem, caKeyPem, rootCertPem, certChainPem }, 'plugged-in');
  } catch (err) {
    throw new Error(`plugged-in CA in ${dir}: ${(err as Error).message}`);
  }
}

/**
 * Watches ROOT_CA_DIR and calls `onChange` with new material when the files change and still
 * form a valid CA. An invalid update is logged and the previous material stays in use.
 */
export function watchPluggedInCa(
  dir: string,
  current: CaKeyMaterial,
  onChange: (m: CaKeyMaterial) => void,
): () => void {
  let fingerprint = fingerprintOf(current);
  let timer: NodeJS.Timeout | undefined;
  const reload = () => {
    timer = undefined;
    let next: CaKeyMaterial | undefined;
    try {
      next = loadPluggedInCa(dir);
    } catch (err) {
      log.error(
        { dir, reason: (err as Error).message },
        'plugged-in CA files changed but are not usable; keeping the previous CA',
      );
      return;
    }
    if (!next) {
      log.error({ dir }, 'plugged-in CA files disappeared; keeping the previous CA');
      return;
    }
    const fp = fingerprintOf(next);
    if (fp === fingerprint) return;
    fingerprint = fp;
    log.info({ dir, signer: next.signingCert.subject, notAfter: next.signingCert.validTo }, 'plugged-in CA reloaded');
    onChange(next);
  };
  const schedule = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(reload, PLUGGED_IN_DEBOUNCE_MS);
  };
  let watcher: fs.FSWatcher | undefined;
  try {
    watcher = fs.watch(dir, schedule);
    watcher.on('error', (err) =>
      log.warn({ dir, err: err.message }, 'watching the plugged-in CA failed; polling only'),
    );
  } catch (err) {
    log.warn({ dir, err: (err as Error).message }, 'cannot watch the plugged-in CA directory; polling only');
  }
  const poll = setInterval(reload, PLUGGED_IN_POLL_MS);
  poll.unref();
  return () => {
    watcher?.close();
    clearInterval(poll);
    if (timer) clearTimeout(timer);
  };
}

function fingerprintOf(m: CaKeyMaterial): string {
  return `${m.signingCert.fingerprint256}|${m.chainPems.join('')}|${m.rootBundlePem}`;
}
