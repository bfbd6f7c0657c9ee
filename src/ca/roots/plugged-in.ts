// A plugged-in CA: the files of ROOT_CA_DIR (the "cacerts" Secret in a cluster), in either of the
// two layouts istiod reads. istiod's own: ca-cert.pem, ca-key.pem, root-cert.pem, cert-chain.pem.
// A kubernetes.io/tls Secret (what cert-manager writes): tls.crt, tls.key, ca.crt - and, as in
// istiod, that layout wins whenever tls.crt exists. Any CA file present means the operator meant
// to plug in a CA, so an incomplete set is an error naming what is missing rather than a silent
// fall-back to a self-signed root. The directory is watched so that a rotated intermediate signs
// new certificates without a restart.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../../config/settings';
import { scopedLogger } from '../../log/logger';
import {
  CaFileNames,
  CaKeyMaterial,
  ISTIOD_CA_FILE_NAMES,
  buildKeyMaterial,
  splitPemCertificates,
} from '../signing/key-material';
import { rootChange, rootChangeProblem } from './plugged-in-roots';

const log = scopedLogger('ca');

/** istiod's layout, in the order a missing-file message lists them. */
export const PLUGGED_IN_FILES = ['ca-cert.pem', 'ca-key.pem', 'root-cert.pem', 'cert-chain.pem'] as const;
/** A kubernetes.io/tls Secret (cert-manager): signing certificate (maybe with its chain), key, issuing root. */
export const TLS_SECRET_FILES = ['tls.crt', 'tls.key', 'ca.crt'] as const;
/** Quiet time after a file event before reloading, so a multi-file update is read once. */
export const PLUGGED_IN_DEBOUNCE_MS = 100;
/** Periodic re-check, for filesystems where watch events are unreliable (some volume mounts). */
export const PLUGGED_IN_POLL_MS = 30_000;

const TLS_SECRET_NAMES: CaFileNames = {
  caCert: 'tls.crt',
  caKey: 'tls.key',
  rootCert: 'ca.crt',
  certChain: 'tls.crt + ca.crt',
};

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

function readAll<T extends string>(dir: string, names: readonly T[]): Map<T, string | undefined> {
  return new Map(names.map((name) => [name, readIfExists(path.join(dir, name))]));
}

function missingOf<T extends string>(files: Map<T, string | undefined>): T[] {
  return [...files].filter(([, text]) => text === undefined).map(([name]) => name);
}

function presentOf<T extends string>(files: Map<T, string | undefined>): T[] {
  return [...files].filter(([, text]) => text !== undefined).map(([name]) => name);
}

/**
 * The tls layout as istiod assembles it: the signing certificate is the first block of tls.crt,
 * the chain is tls.crt followed by ca.crt, the roots are ca.crt. A certificate repeated in that
 * chain (a self-signed tls.crt whose ca.crt is itself) is listed once.
 */
function fromTlsSecret(dir: string, tlsCrt: string, tlsKey: string, caCrt: string): CaKeyMaterial {
  const chain = [...new Set(splitPemCertificates(tlsCrt + '\n' + caCrt))];
  const [signing] = splitPemCertificates(tlsCrt);
  try {
    return buildKeyMaterial(
      { caCertPem: signing ?? '', caKeyPem: tlsKey, rootCertPem: caCrt, certChainPem: chain.join('') },
      'plugged-in',
      TLS_SECRET_NAMES,
    );
  } catch (err) {
    throw new UsageError(`plugged-in CA in ${dir} (kubernetes.io/tls layout): ${(err as Error).message}`);
  }
}

/**
 * Reads ROOT_CA_DIR; undefined when no CA file of either layout exists (use a self-signed root).
 * A folder that is not a usable CA throws a UsageError: at start the CLI prints it as one line and
 * exits 2 (the operator's files are wrong, nothing else is); on reload the watcher logs it.
 */
export function loadPluggedInCa(dir: string): CaKeyMaterial | undefined {
  const tls = readAll(dir, TLS_SECRET_FILES);
  const tlsCrt = tls.get('tls.crt');
  if (tlsCrt !== undefined) {
    const tlsKey = tls.get('tls.key');
    const caCrt = tls.get('ca.crt');
    if (tlsKey === undefined || caCrt === undefined)
      throw new UsageError(
        `plugged-in CA in ${dir} is incomplete: tls.crt is present, so the kubernetes.io/tls layout is used, but ${missingOf(tls).join(', ')} is missing`,
      );
    return fromTlsSecret(dir, tlsCrt, tlsKey, caCrt);
  }
  const istiod = readAll(dir, PLUGGED_IN_FILES);
  const caCertPem = istiod.get('ca-cert.pem');
  const caKeyPem = istiod.get('ca-key.pem');
  const rootCertPem = istiod.get('root-cert.pem');
  const certChainPem = istiod.get('cert-chain.pem');
  const strayTls = presentOf(tls);
  if (caCertPem === undefined || caKeyPem === undefined || rootCertPem === undefined || certChainPem === undefined) {
    const present = [...presentOf(istiod), ...strayTls];
    if (present.length === 0) return undefined;
    // istiod ignores tls.key/ca.crt without tls.crt and starts self-signed; a half-copied Secret
    // deserves an error instead, naming what each layout lacks.
    const missing = [`missing ${missingOf(istiod).join(', ')}`];
    if (strayTls.length > 0) missing.push(`or, for the kubernetes.io/tls layout, ${missingOf(tls).join(', ')}`);
    throw new UsageError(
      `plugged-in CA in ${dir} is incomplete: ${missing.join(' ')}; add them, or remove ${present.join(', ')} to use a self-signed root`,
    );
  }
  try {
    return buildKeyMaterial({ caCertPem, caKeyPem, rootCertPem, certChainPem }, 'plugged-in', ISTIOD_CA_FILE_NAMES);
  } catch (err) {
    throw new UsageError(`plugged-in CA in ${dir}: ${(err as Error).message}`);
  }
}

/**
 * Watches ROOT_CA_DIR and calls `onChange` with new material when the files change and still
 * form a valid CA (the whole chain verified, as at start). An invalid update, such as a set of
 * files of which only some were replaced yet, or a root change plugged-in-roots.ts does not allow
 * (`multiRoot` is ISTIO_MULTIROOT_MESH), is logged, counted through `onRefused`, and the previous
 * material stays in use until the files agree.
 */
export function watchPluggedInCa(
  dir: string,
  current: CaKeyMaterial,
  onChange: (m: CaKeyMaterial) => void,
  onRefused: (reason: string) => void = () => undefined,
  multiRoot = false,
): () => void {
  let inUse = current;
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
      onRefused((err as Error).message);
      return;
    }
    if (!next) {
      log.error({ dir }, 'plugged-in CA files disappeared; keeping the previous CA');
      onRefused('the files disappeared');
      return;
    }
    const fp = fingerprintOf(next);
    if (fp === fingerprint) return;
    const roots = rootChange(inUse.roots, next.roots);
    const problem = rootChangeProblem(roots, multiRoot);
    if (problem) {
      log.error({ dir, reason: problem }, 'plugged-in CA files changed their root; keeping the previous CA');
      onRefused(problem);
      return;
    }
    if (roots.removed.length > 0)
      log.warn(
        { dir, removed: roots.removed.map((r) => r.subject) },
        'plugged-in roots removed: certificates still valid under them are no longer trusted by workloads that renew',
      );
    if (roots.added.length > 0)
      log.info({ dir, added: roots.added.map((r) => r.subject) }, 'plugged-in roots added beside the ones in use');
    fingerprint = fp;
    inUse = next;
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
