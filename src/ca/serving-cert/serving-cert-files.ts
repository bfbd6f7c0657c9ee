// istiod's serving certificate from --tlsCertFile/--tlsKeyFile/--caCertFile instead of the mesh CA.
// The files are polled (a mounted Secret changes by a symlink swap, which file watches miss); a
// change that reads cleanly replaces the certificate for new handshakes, a bad one is logged and
// the certificate in use stays. The mesh roots still come from the CA: clients' certificates are
// checked against them, and a CA rotation reaches the listeners as before.

import * as crypto from 'node:crypto';
import { scopedLogger } from '../../log/logger';
import { readTlsFiles, type TlsFilePaths, type TlsFiles } from '../../config/tls-files';
import type { ServingCertSink } from '../../contract/serving-cert';

const log = scopedLogger('ca');

/** How often the files are looked at; cert-manager renews days ahead, so seconds are plenty. */
export const TLS_FILE_POLL_MS = 5_000;

function fingerprint(files: TlsFiles): string {
  return crypto
    .createHash('sha256')
    .update(files.certChainPem)
    .update('\0')
    .update(files.privateKeyPem)
    .update('\0')
    .update(files.caPem)
    .digest('hex');
}

export class ServingCertFiles {
  private timer: NodeJS.Timeout | undefined;
  private files: TlsFiles;
  private seen: string;
  private lastError = '';

  /** Reads the files now (the flags were checked, so this normally succeeds) and sets the certificate. */
  constructor(
    private readonly paths: TlsFilePaths,
    private readonly sink: ServingCertSink,
    private readonly meshRootsPem: () => string,
  ) {
    this.files = readTlsFiles(paths);
    this.seen = fingerprint(this.files);
    this.publish('start');
  }

  /** Polls the files every `periodMs` until stop(). */
  watch(periodMs = TLS_FILE_POLL_MS): void {
    this.timer = setInterval(() => this.poll(), periodMs);
    this.timer.unref();
  }

  /** The mesh roots changed: the listeners must check client certificates against the new ones. */
  rootsChanged(): void {
    this.publish('CA changed');
  }

  poll(): void {
    let next: TlsFiles;
    try {
      next = readTlsFiles(this.paths);
    } catch (err) {
      const message = (err as Error).message;
      // Logged when it first appears (not every poll); the certificate in use stays.
      if (message !== this.lastError)
        log.error({ err: message }, 'serving certificate files are unusable; keeping the current certificate');
      this.lastError = message;
      return;
    }
    this.lastError = '';
    const print = fingerprint(next);
    if (print === this.seen) return;
    this.files = next;
    this.seen = print;
    this.publish('files changed');
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private publish(why: string): void {
    this.sink.set({
      certChainPem: this.files.certChainPem,
      privateKeyPem: this.files.privateKeyPem,
      rootsPem: this.meshRootsPem(),
      servingCaPem: this.files.caPem,
    });
    const leaf = new crypto.X509Certificate(this.files.certChainPem);
    log.info(
      { why, subject: leaf.subject, notAfter: leaf.validTo, file: this.paths.certFile },
      'serving certificate loaded from files',
    );
  }
}
