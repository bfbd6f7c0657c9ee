// --tlsCertFile / --tlsKeyFile / --caCertFile: istiod's own serving certificate from files (for
// example a cert-manager Secret mounted into the pod) instead of one the mesh CA issues. Read and
// checked while the flags are read, so a wrong file exits 2 before anything starts, and again on
// every change, when a bad file is refused and the certificate in use stays.

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';

export interface TlsFilePaths {
  certFile: string;
  keyFile: string;
  /** '' when not given: the last certificate of the chain is the CA. */
  caFile: string;
  /** How errors name the three files; the flags when not given. */
  names?: TlsFileNames;
}

export interface TlsFileNames {
  cert: string;
  key: string;
  ca: string;
}

const FLAG_NAMES: TlsFileNames = { cert: '--tlsCertFile', key: '--tlsKeyFile', ca: '--caCertFile' };

export interface TlsFiles {
  certChainPem: string;
  privateKeyPem: string;
  /** What clients of istiod must trust: --caCertFile, else the top of the chain. */
  caPem: string;
}

/** A serving certificate file larger than this is not a certificate chain; it is refused unread. */
export const MAX_TLS_FILE_BYTES = 1024 * 1024;

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function read(flag: string, file: string): string {
  const size = fs.statSync(file).size;
  if (size > MAX_TLS_FILE_BYTES) throw new Error(`${flag} ${file} is ${size} bytes, over ${MAX_TLS_FILE_BYTES}`);
  return fs.readFileSync(file, 'utf8');
}

function certificates(flag: string, file: string, pem: string): crypto.X509Certificate[] {
  const blocks = pem.match(PEM_CERT) ?? [];
  if (blocks.length === 0) throw new Error(`${flag} ${file} holds no PEM certificate`);
  return blocks.map((block, i) => {
    try {
      return new crypto.X509Certificate(block);
    } catch (err) {
      throw new Error(`${flag} ${file}: certificate ${i + 1} cannot be parsed (${(err as Error).message})`);
    }
  });
}

/** Reads the three files; throws an Error naming the flag, the file and what is wrong. */
export function readTlsFiles(paths: TlsFilePaths): TlsFiles {
  const names = paths.names ?? FLAG_NAMES;
  const certChainPem = read(names.cert, paths.certFile);
  const chain = certificates(names.cert, paths.certFile, certChainPem);
  const privateKeyPem = read(names.key, paths.keyFile);
  let key: crypto.KeyObject;
  try {
    key = crypto.createPrivateKey(privateKeyPem);
  } catch {
    // The parser's message can quote the input; a private key must never reach a log line.
    throw new Error(`${names.key} ${paths.keyFile} holds no readable PEM private key`);
  }
  const [leaf] = chain;
  if (leaf === undefined || !leaf.checkPrivateKey(key))
    throw new Error(`${names.key} ${paths.keyFile} is not the key of the certificate in ${paths.certFile}`);
  let caPem: string;
  if (paths.caFile !== '') {
    caPem = read(names.ca, paths.caFile);
    certificates(names.ca, paths.caFile, caPem);
  } else {
    const top = chain[chain.length - 1] ?? leaf;
    caPem = top.toString();
  }
  return { certChainPem, privateKeyPem, caPem };
}
