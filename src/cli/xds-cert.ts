// `istiod-ts xds-client cert`: asks the CA for a certificate as a node's ztunnel asks for one of
// its pods' identities (a fresh key and CSR, the ztunnel's own token, the identity in the
// ImpersonatedIdentity metadata) and prints what came back: SANs, validity and the chain. The
// private key never leaves this process and is never printed.

import 'reflect-metadata';
import * as grpc from '@grpc/grpc-js';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as tls from 'node:tls';
import * as x509 from '@peculiar/x509';
import { certificateServiceClient, IstioCertificateResponse } from '../ca/proto';
import { describe, HELP_FLAG, parseFlags, SettingSpec, UsageError } from '../config/settings';

x509.cryptoProvider.set(crypto.webcrypto as never);

export const XDS_CERT_FLAGS = {
  identity: { kind: 'string', default: '', help: 'SPIFFE identity to request, spiffe://TD/ns/NS/sa/SA' },
  addr: { kind: 'string', default: '', help: 'CA HOST:PORT (the secure xDS port, 15012)' },
  rootCert: { kind: 'string', default: '', help: 'PEM file of the roots that sign the server certificate' },
  serverName: { kind: 'string', default: '', help: 'name checked against the server certificate' },
  token: { kind: 'string', default: '', help: "the ztunnel's bearer token, or a file holding it" },
  clusterId: { kind: 'string', default: 'Kubernetes', help: 'clusterid header' },
  validity: {
    kind: 'duration',
    default: '24h',
    help: 'requested validity (the CA may shorten it)',
    check: (v: number) => (v < 1000 ? 'must be at least 1s' : undefined),
  },
  chainOut: {
    kind: 'string',
    default: '',
    help: 'also write the returned chain (certificates only, leaf first) to this PEM file, e.g. for openssl verify',
  },
  timeout: {
    kind: 'duration',
    default: '15s',
    help: 'deadline of the call',
    check: (v: number) => (v <= 0 ? 'must be greater than 0' : undefined),
  },
  help: HELP_FLAG,
} as const satisfies Record<string, SettingSpec>;

export function xdsCertHelp(): string {
  return [
    'Usage: istiod-ts xds-client cert --identity spiffe://TD/ns/NS/sa/SA --addr HOST:PORT --rootCert FILE --token TOKEN',
    '                                [--serverName NAME] [--clusterId ID] [--validity 24h] [--chainOut FILE]',
    '',
    "Requests a certificate for an identity as a node's ztunnel does (impersonating it with the ztunnel's",
    'token) and prints its SANs, validity and chain. The private key is made here and never printed.',
    '',
    describe(XDS_CERT_FLAGS, '--'),
    '',
  ].join('\n');
}

type Writer = (s: string) => void;

/** A token given inline, or the path of a file holding it (as ztunnel's AUTH_TOKEN). */
export function readToken(value: string): string {
  if (value === '') return '';
  if (fs.existsSync(value) && fs.statSync(value).isFile()) {
    const text = fs.readFileSync(value, 'utf8').trim();
    if (text === '') throw new UsageError(`--token file ${value} is empty`);
    return text;
  }
  return value;
}

/** A P-256 key and a CSR with an empty subject and one critical URI SAN, as ztunnel builds them. */
async function makeCsr(identity: string): Promise<string> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256' };
  const keys = await crypto.webcrypto.subtle.generateKey(alg, false, ['sign', 'verify']);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'url', value: identity }], true)],
  });
  return csr.toString('pem');
}

function describeChain(chain: string[]): string {
  const lines: string[] = [];
  const certs = chain.map((pem) => new crypto.X509Certificate(pem));
  const leaf = certs[0];
  if (!leaf) return 'the CA returned an empty chain\n';
  lines.push(`SANS       ${leaf.subjectAltName ?? '(none)'}`);
  lines.push(`NOT BEFORE ${new Date(leaf.validFrom).toISOString()}`);
  lines.push(`NOT AFTER  ${new Date(leaf.validTo).toISOString()}`);
  lines.push(`CHAIN (${certs.length})`);
  certs.forEach((c, i) => {
    // Node reports an empty distinguished name (ztunnel's leaf has none: the SAN is the identity) as undefined.
    const oneLine = (dn: string | undefined) => (dn ?? '').split('\n').join(', ') || '(empty)';
    lines.push(`  ${i}  subject=${oneLine(c.subject)}  issuer=${oneLine(c.issuer)}`);
  });
  return lines.join('\n') + '\n';
}

export interface CertificateCall {
  /** HOST:PORT of the CA (the secure xDS port). */
  address: string;
  /** PEM roots to trust; without them the call is plaintext. */
  rootCertPem?: string | undefined;
  serverName?: string;
  token?: string;
  clusterId?: string;
  csr: string;
  validitySeconds: number;
  /** An identity asked for on behalf of a pod (ImpersonatedIdentity), as a node's ztunnel asks. */
  impersonate?: string;
  timeoutMs: number;
}

/** One CreateCertificate call as ztunnel makes it: the chain, or the call's grpc.ServiceError. */
export async function createCertificate(c: CertificateCall): Promise<string[]> {
  const creds = c.rootCertPem
    ? grpc.credentials.createFromSecureContext(tls.createSecureContext({ ca: c.rootCertPem, minVersion: 'TLSv1.3' }))
    : grpc.credentials.createInsecure();
  const channel: grpc.ChannelOptions = c.serverName
    ? { 'grpc.ssl_target_name_override': c.serverName, 'grpc.default_authority': c.serverName }
    : {};
  const Client = certificateServiceClient();
  const client = new Client(c.address, creds, channel) as grpc.Client & Record<string, unknown>;
  const md = new grpc.Metadata();
  if (c.token) md.set('authorization', `Bearer ${c.token}`);
  md.set('clusterid', c.clusterId ?? 'Kubernetes');
  const request = {
    csr: c.csr,
    validity_duration: c.validitySeconds,
    ...(c.impersonate ? { metadata: { fields: { ImpersonatedIdentity: { stringValue: c.impersonate } } } } : {}),
  };
  const call = client['CreateCertificate'] as (
    r: unknown,
    m: grpc.Metadata,
    o: grpc.CallOptions,
    cb: (e: grpc.ServiceError | null, r: IstioCertificateResponse) => void,
  ) => void;
  try {
    return await new Promise<string[]>((resolve, reject) =>
      call.call(client, request, md, { deadline: Date.now() + c.timeoutMs }, (e, r) =>
        e ? reject(e) : resolve(r.cert_chain),
      ),
    );
  } finally {
    client.close();
  }
}

export async function runXdsCertCommand(argv: string[], out: Writer, err: Writer): Promise<number> {
  try {
    const { values, given } = parseFlags(XDS_CERT_FLAGS, argv);
    if (values.help) {
      out(xdsCertHelp());
      return 0;
    }
    const missing = (['identity', 'addr'] as const).filter((f) => !given.has(f) || values[f].trim() === '');
    if (missing.length > 0) throw new UsageError(`missing ${missing.map((f) => `--${f}`).join(', ')} (see --help)`);
    if (!values.identity.startsWith('spiffe://')) throw new UsageError('--identity must be a spiffe:// URI');
    let rootCertPem: string | undefined;
    if (values.rootCert !== '') {
      try {
        rootCertPem = fs.readFileSync(values.rootCert, 'utf8');
      } catch (e) {
        throw new UsageError(`cannot read --rootCert ${values.rootCert}: ${(e as Error).message}`);
      }
    }
    const token = readToken(values.token);
    const csr = await makeCsr(values.identity);
    let chain: string[];
    try {
      chain = await createCertificate({
        address: values.addr,
        rootCertPem,
        serverName: values.serverName,
        token,
        clusterId: values.clusterId,
        csr,
        validitySeconds: Math.floor(values.validity / 1000),
        impersonate: values.identity,
        timeoutMs: values.timeout,
      });
    } catch (e) {
      // A call that fails is a grpc.ServiceError; anything else is reported as UNKNOWN, still on one line.
      const { code, details } = e as Partial<grpc.ServiceError>;
      const name = (grpc.status as Record<number, string | undefined>)[code ?? grpc.status.UNKNOWN] ?? 'UNKNOWN';
      const text = typeof details === 'string' ? details : String(e);
      err(`istiod-ts xds-client cert: ${name} (code ${code ?? grpc.status.UNKNOWN}): ${text.split('\n')[0] ?? ''}\n`);
      return 1;
    }
    if (values.chainOut !== '') fs.writeFileSync(values.chainOut, chain.map((c) => c.trim() + '\n').join(''));
    out(describeChain(chain));
    return 0;
  } catch (e) {
    err(`istiod-ts xds-client cert: ${(e as Error).message}\n`);
    return e instanceof UsageError ? 2 : 1;
  }
}
