// One CreateCertificate call with a CSR made elsewhere (here, by openssl for istioctl's cert dir):
// the caller's own identity, no impersonation, over TLS 1.3 trusting the given root.

import * as grpc from '@grpc/grpc-js';
import * as tls from 'node:tls';
import { certificateServiceClient, type IstioCertificateResponse } from '../src/ca/proto';

export interface CertificateRequest {
  address: string;
  rootCert: string;
  serverName: string;
  token: string;
  csr: string;
  validitySeconds?: number;
}

export async function requestCertificate(r: CertificateRequest): Promise<string[]> {
  const creds = grpc.credentials.createFromSecureContext(
    tls.createSecureContext({ ca: r.rootCert, minVersion: 'TLSv1.3' }),
  );
  const Client = certificateServiceClient();
  const client = new Client(r.address, creds, {
    'grpc.ssl_target_name_override': r.serverName,
    'grpc.default_authority': r.serverName,
  }) as grpc.Client & Record<string, unknown>;
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${r.token}`);
  const call = client['CreateCertificate'] as (
    req: unknown,
    m: grpc.Metadata,
    o: grpc.CallOptions,
    cb: (e: grpc.ServiceError | null, res: IstioCertificateResponse) => void,
  ) => void;
  try {
    return await new Promise<string[]>((resolve, reject) =>
      call.call(
        client,
        { csr: r.csr, validity_duration: r.validitySeconds ?? 3600 },
        md,
        { deadline: Date.now() + 15_000 },
        (e, res) => (e ? reject(e) : resolve(res.cert_chain)),
      ),
    );
  } finally {
    client.close();
  }
}
