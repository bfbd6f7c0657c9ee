// The soak's callers, each speaking to the running server as its real client would: ztunnel's
// xDS stream and CreateCertificate over TLS with a bearer token, and the API server's
// AdmissionReview POSTs over HTTPS keep-alive.

import * as https from 'node:https';
import * as tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { certificateServiceClient, IstioCertificateResponse } from '../../src/ca/proto';
import { AdsClient, HeldResources, ztunnelNodeId } from '../../src/cli/ads-client';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL } from '../../src/contract/xds-resources';

export const SERVER_NAME = 'istiod.istio-system.svc';

export interface ZtunnelIdentity {
  token: string;
  nodeName: string;
  pod: string;
  ip: string;
}

/** A wildcard ztunnel: subscribes to Address and Authorization and keeps what it is sent. */
export class SoakZtunnel {
  readonly held = new HeldResources();
  readonly types = new Set<string>();
  responses = 0;
  private readonly client: AdsClient;

  constructor(port: number, rootPem: string, id: ZtunnelIdentity) {
    this.client = new AdsClient({
      address: `127.0.0.1:${port}`,
      rootCertPem: rootPem,
      serverName: SERVER_NAME,
      token: id.token,
      clusterId: 'Kubernetes',
      node: {
        id: ztunnelNodeId(id.ip, id.pod, 'istio-system'),
        metadata: {
          NAMESPACE: 'istio-system',
          NODE_NAME: id.nodeName,
          CLUSTER_ID: 'Kubernetes',
          INSTANCE_IPS: id.ip,
          NAME: id.pod,
        },
      },
    });
    this.client.onResponse((r) => {
      this.held.apply(r);
      this.types.add(r.type_url);
      this.responses++;
    });
    this.client.send({ type_url: ADDRESS_TYPE_URL, resource_names_subscribe: ['*'] });
    this.client.send({ type_url: AUTHORIZATION_TYPE_URL, resource_names_subscribe: ['*'] });
  }

  get status(): Promise<grpc.StatusObject> {
    return this.client.status;
  }

  /** Resolves once both types have been answered at least once. */
  async synced(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.types.size < 2) {
      if (Date.now() > deadline)
        throw new Error(
          `no full sync within ${timeoutMs} ms (types answered: ${[...this.types].join(', ') || 'none'})`,
        );
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** name -> version per type, as a ztunnel would hold them now. */
  state(): Record<string, Record<string, string>> {
    return {
      [ADDRESS_TYPE_URL]: this.held.versions(ADDRESS_TYPE_URL),
      [AUTHORIZATION_TYPE_URL]: this.held.versions(AUTHORIZATION_TYPE_URL),
    };
  }

  close(): void {
    this.client.close();
  }
}

export class CaCaller {
  private readonly client: grpc.Client & Record<string, unknown>;

  constructor(port: number, rootPem: string) {
    const creds = grpc.credentials.createFromSecureContext(
      tls.createSecureContext({ ca: rootPem, minVersion: 'TLSv1.3' }),
    );
    const Client = certificateServiceClient();
    this.client = new Client(`127.0.0.1:${port}`, creds, {
      'grpc.ssl_target_name_override': SERVER_NAME,
      'grpc.default_authority': SERVER_NAME,
    });
  }

  createCertificate(csr: string, token: string, impersonate?: string): Promise<IstioCertificateResponse> {
    const md = new grpc.Metadata();
    md.set('authorization', `Bearer ${token}`);
    md.set('clusterid', 'Kubernetes');
    const metadata = impersonate ? { fields: { ImpersonatedIdentity: { stringValue: impersonate } } } : null;
    const call = this.client['CreateCertificate'] as (
      r: unknown,
      m: grpc.Metadata,
      cb: (e: grpc.ServiceError | null, r: IstioCertificateResponse) => void,
    ) => void;
    return new Promise((resolve, reject) =>
      call.call(this.client, { csr, validity_duration: 3600, metadata }, md, (err, res) =>
        err ? reject(err) : resolve(res),
      ),
    );
  }

  close(): void {
    this.client.close();
  }
}

/** POSTs AdmissionReviews the way the API server does: HTTPS keep-alive, Content-Length bodies. */
export class ReviewCaller {
  private readonly agent: https.Agent;

  constructor(
    private readonly port: number,
    rootPem: string,
  ) {
    this.agent = new https.Agent({ keepAlive: true, maxSockets: 4, ca: rootPem, servername: SERVER_NAME });
  }

  review(body: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port: this.port,
          path: '/validate?timeout=10s',
          method: 'POST',
          agent: this.agent,
          servername: SERVER_NAME,
          headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
