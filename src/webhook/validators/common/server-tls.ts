// Server-side TLS settings shared by Gateway servers and Sidecar ingress listeners.

import { ServerTLSSettings_TLSmode, ServerTLSSettings_TLSProtocol } from './enum-types';
import { enumOf, JsonObject, list, str, strList } from './fields';
import { at, Report } from './report';

/** Envoy takes at most two server certificates (one RSA, one ECDSA). */
export const MAX_SERVER_CERTIFICATES = 2;

const VALID_CIPHER_SUITES = new Set([
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  'ECDHE-ECDSA-AES128-SHA',
  'ECDHE-RSA-AES128-SHA',
  'ECDHE-ECDSA-AES256-SHA',
  'ECDHE-RSA-AES256-SHA',
  'AES128-GCM-SHA256',
  'AES256-GCM-SHA384',
  'AES128-SHA',
  'AES256-SHA',
  'DES-CBC3-SHA',
]);

/** Operator expressions such as "-AES128-SHA" or "[A|B]" are passed through, as istiod does. */
export function isValidCipherSuite(cs: string): boolean {
  if (cs === '' || cs === 'ALL') return true;
  if (!/^[\p{L}\p{N}]/u.test(cs)) return true;
  return VALID_CIPHER_SUITES.has(cs);
}

export interface ServerTLS {
  mode: (typeof ServerTLSSettings_TLSmode.values)[number];
  httpsRedirect: boolean;
  credentialName: string;
  credentialNames: string[];
  tlsCertificates: number;
  serverCertificate: string;
  privateKey: string;
  caCertificates: string;
  caCrl: string;
  subjectAltNames: string[];
}

export function readServerTLS(r: Report, tls: JsonObject, path: string): ServerTLS {
  return {
    mode: enumOf(r, tls['mode'], at(path, 'mode'), ServerTLSSettings_TLSmode),
    httpsRedirect: tls['httpsRedirect'] === true,
    credentialName: str(r, tls['credentialName'], at(path, 'credentialName')) ?? '',
    credentialNames: strList(r, tls['credentialNames'], at(path, 'credentialNames')) ?? [],
    tlsCertificates: list(r, tls['tlsCertificates'], at(path, 'tlsCertificates'))?.length ?? 0,
    serverCertificate: str(r, tls['serverCertificate'], at(path, 'serverCertificate')) ?? '',
    privateKey: str(r, tls['privateKey'], at(path, 'privateKey')) ?? '',
    caCertificates: str(r, tls['caCertificates'], at(path, 'caCertificates')) ?? '',
    caCrl: str(r, tls['caCrl'], at(path, 'caCrl')) ?? '',
    subjectAltNames: strList(r, tls['subjectAltNames'], at(path, 'subjectAltNames')) ?? [],
  };
}

export function checkServerTLS(r: Report, raw: JsonObject, path: string): void {
  const tls = readServerTLS(r, raw, path);
  const minVersion = enumOf(
    r,
    raw['minProtocolVersion'],
    at(path, 'minProtocolVersion'),
    ServerTLSSettings_TLSProtocol,
  );
  enumOf(r, raw['maxProtocolVersion'], at(path, 'maxProtocolVersion'), ServerTLSSettings_TLSProtocol);
  const ciphers = strList(r, raw['cipherSuites'], at(path, 'cipherSuites')) ?? [];
  if ((minVersion === 'TLSV1_0' || minVersion === 'TLSV1_1') && ciphers.length === 0) {
    r.warn(
      path,
      'TLS version below TLSV1_2 require setting compatible ciphers as by default they no longer include compatible ciphers.',
    );
  }
  const invalid = new Set<string>();
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const cs of ciphers) {
    if (!isValidCipherSuite(cs)) invalid.add(cs);
    else if (seen.has(cs)) dup.add(cs);
    else seen.add(cs);
  }
  if (invalid.size > 0)
    r.warn(at(path, 'cipherSuites'), `ignoring invalid cipher suites: [${[...invalid].sort().join(' ')}]`);
  if (dup.size > 0)
    r.warn(at(path, 'cipherSuites'), `ignoring duplicate cipher suites: [${[...dup].sort().join(' ')}]`);

  if (tls.mode === 'ISTIO_MUTUAL') {
    if (tls.serverCertificate)
      r.error(at(path, 'serverCertificate'), 'ISTIO_MUTUAL TLS cannot have associated server certificate');
    if (tls.privateKey) r.error(at(path, 'privateKey'), 'ISTIO_MUTUAL TLS cannot have associated private key');
    if (tls.caCertificates) r.error(at(path, 'caCertificates'), 'ISTIO_MUTUAL TLS cannot have associated CA bundle');
    if (tls.tlsCertificates > 0)
      r.error(at(path, 'tlsCertificates'), 'ISTIO_MUTUAL TLS cannot have associated tlsCertificates');
    if (tls.credentialName)
      r.error(at(path, 'credentialName'), 'ISTIO_MUTUAL TLS cannot have associated credentialName');
    if (tls.credentialNames.length > 0)
      r.error(at(path, 'credentialNames'), 'ISTIO_MUTUAL TLS cannot have associated credentialNames');
    return;
  }
  const anyCert =
    tls.caCrl ||
    tls.serverCertificate ||
    tls.privateKey ||
    tls.caCertificates ||
    tls.tlsCertificates > 0 ||
    tls.credentialName ||
    tls.credentialNames.length > 0;
  if ((tls.mode === 'PASSTHROUGH' || tls.mode === 'AUTO_PASSTHROUGH') && anyCert) {
    r.warn(path, `${tls.mode} mode does not use certificates, they will be ignored`);
  }
  const sources = [
    tls.serverCertificate !== '' && tls.privateKey !== '',
    tls.credentialName !== '',
    tls.credentialNames.length > 0,
    tls.tlsCertificates > 0,
  ];
  if (sources.filter(Boolean).length > 1) {
    r.error(
      path,
      'only one of credential_name, credential_names, server_certificate/private_key, tls_certificates should be specified',
    );
  }
  const terminating = tls.mode === 'SIMPLE' || tls.mode === 'MUTUAL' || tls.mode === 'OPTIONAL_MUTUAL';
  if (terminating && (tls.credentialName !== '' || tls.credentialNames.length > 0)) return;
  if (terminating) {
    const prefix = tls.mode === 'SIMPLE' ? 'SIMPLE TLS' : 'MUTUAL TLS';
    if (tls.mode !== 'SIMPLE' && tls.caCertificates === '')
      r.error(at(path, 'caCertificates'), `${prefix} requires a client CA bundle`);
    if (tls.tlsCertificates > MAX_SERVER_CERTIFICATES)
      r.warn(at(path, 'tlsCertificates'), `${prefix} can support up to ${MAX_SERVER_CERTIFICATES} server certificates`);
    const certs =
      tls.tlsCertificates > 0
        ? (raw['tlsCertificates'] as unknown[]).map((c, i) => ({
            c: (c ?? {}) as JsonObject,
            p: `${at(path, 'tlsCertificates')}[${i}]`,
          }))
        : [{ c: raw, p: path }];
    for (const { c, p } of certs) {
      if (!c['serverCertificate']) r.error(at(p, 'serverCertificate'), `${prefix} requires a server certificate`);
      if (!c['privateKey']) r.error(at(p, 'privateKey'), `${prefix} requires a private key`);
    }
  }
  if (tls.caCrl) {
    if (tls.credentialName)
      r.error(at(path, 'caCrl'), 'CRL is not supported with credentialName. CRL has to be specified in the credential');
    if (tls.mode === 'SIMPLE') r.error(at(path, 'caCrl'), 'CRL is not supported with SIMPLE TLS');
  }
}
