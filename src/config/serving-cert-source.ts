// Where istiod's own serving certificate (secure gRPC, webhook) comes from, as istiod decides it:
// --tlsCertFile/--tlsKeyFile first; else a certificate mounted in istiod's well-known folder
// (tls.crt, tls.key, and the CA in ../ca/root-cert.pem or else tls/ca.crt), which the upstream
// chart mounts for external providers such as cert-manager; else PILOT_CERT_PROVIDER says who
// issues one. Only `istiod` issues one here; `custom` means "the folder must be there".

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TlsFileNames, TlsFilePaths } from './tls-files';

/** istiod's folder for an externally provided serving certificate, relative as istiod resolves it (from / in the image). */
export const ISTIOD_TLS_DIR = './var/run/secrets/istiod/tls';
/** istiod's folder for that certificate's CA (root-cert.pem), preferred over tls/ca.crt. */
export const ISTIOD_TLS_CA_DIR = './var/run/secrets/istiod/ca';

export const PILOT_CERT_PROVIDERS = ['istiod', 'kubernetes', 'custom'] as const;
export type PilotCertProvider = (typeof PILOT_CERT_PROVIDERS)[number];

/** Why a PILOT_CERT_PROVIDER value cannot be used here, or undefined when it can. */
export function certProviderProblem(value: string): string | undefined {
  if (value === 'istiod' || value === 'custom') return undefined;
  if (value === 'kubernetes')
    return (
      'kubernetes is not supported: it asked the Kubernetes CSR API for a certificate from the legacy-unknown signer, ' +
      'which Kubernetes no longer signs (istiod refuses it too); use istiod, or custom with a certificate mounted in ' +
      ISTIOD_TLS_DIR
    );
  if (value.startsWith('k8s.io/'))
    return `${value} (a Kubernetes CSR API signer) is not supported here; use istiod, or custom with a certificate mounted in ${ISTIOD_TLS_DIR}`;
  return `must be one of ${PILOT_CERT_PROVIDERS.join(', ')}`;
}

export interface ServingCertSourceInput {
  tlsCertFile: string;
  tlsKeyFile: string;
  caCertFile: string;
  provider: string;
  /** Tests point these elsewhere; istiod's folders otherwise. */
  tlsDir?: string;
  caDir?: string;
}

const MOUNT_NAMES: TlsFileNames = { cert: 'mounted tls.crt', key: 'mounted tls.key', ca: 'mounted CA' };

function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The files to serve from, or undefined when the mesh CA issues the certificate. Throws an Error
 * naming the missing files when PILOT_CERT_PROVIDER=custom and the folder is incomplete.
 */
export function servingCertFiles(input: ServingCertSourceInput): TlsFilePaths | undefined {
  if (input.tlsCertFile !== '')
    return { certFile: input.tlsCertFile, keyFile: input.tlsKeyFile, caFile: input.caCertFile };
  const tlsDir = input.tlsDir ?? ISTIOD_TLS_DIR;
  const caDir = input.caDir ?? ISTIOD_TLS_CA_DIR;
  const certFile = path.join(tlsDir, 'tls.crt');
  const keyFile = path.join(tlsDir, 'tls.key');
  const caFile = [path.join(caDir, 'root-cert.pem'), path.join(tlsDir, 'ca.crt')].find(isFile);
  // As istiod: only a complete set counts, whatever the provider.
  if (isFile(certFile) && isFile(keyFile) && caFile !== undefined)
    return { certFile, keyFile, caFile, names: MOUNT_NAMES };
  if (input.provider !== 'custom') return undefined;
  const missing = [
    ...(isFile(certFile) ? [] : [certFile]),
    ...(isFile(keyFile) ? [] : [keyFile]),
    ...(caFile === undefined ? [`${path.join(tlsDir, 'ca.crt')} (or ${path.join(caDir, 'root-cert.pem')})`] : []),
  ];
  throw new Error(`PILOT_CERT_PROVIDER=custom needs a mounted serving certificate: missing ${missing.join(', ')}`);
}
