// A Delta ADS client that connects as ztunnel does (TLS 1.3 + h2, bearer token and clusterid
// headers, node id and metadata on the first request of each type, one ACK per response). Used by
// `istiod-ts xds-client` and by the tests.

import * as grpc from '@grpc/grpc-js';
import * as tls from 'node:tls';
import { ADS_SERVICE, DELTA_METHOD, loadProtos } from '../xds/grpc/proto';

/** ztunnel's xDS decode limit. */
export const CLIENT_MAX_RECEIVE_BYTES = 200 * 1024 * 1024;

export interface DeltaResource {
  name: string;
  version: string;
  aliases: string[];
  resource: { type_url: string; value: Buffer } | null;
}

export interface DeltaResponse {
  type_url: string;
  nonce: string;
  system_version_info: string;
  resources: DeltaResource[];
  removed_resources: string[];
}

export interface DeltaRequestInit {
  type_url: string;
  resource_names_subscribe?: string[];
  resource_names_unsubscribe?: string[];
  initial_resource_versions?: Record<string, string>;
  response_nonce?: string;
  error_detail?: { code: number; message: string };
}

export interface ClientNode {
  id: string;
  metadata: Record<string, string>;
}

export interface AdsClientOptions {
  /** host:port */
  address: string;
  /** PEM roots; without them the connection is plaintext (port 15010). */
  rootCertPem?: string;
  /** Name checked against the server certificate (default: the address host). */
  serverName?: string;
  token?: string;
  clusterId?: string;
  node: ClientNode;
  /** Decides the answer to a response: undefined ACKs, a message NACKs (code 0, as ztunnel). */
  review?: (response: DeltaResponse) => string | undefined;
  /** Do not answer responses at all (the caller sends ACKs itself). */
  manualAck?: boolean;
}

/** ztunnel's node id: ztunnel~<ip>~<pod>.<ns>~<ns>.svc.cluster.local */
export function ztunnelNodeId(ip: string, pod: string, namespace: string): string {
  return `ztunnel~${ip}~${pod}.${namespace}~${namespace}.svc.cluster.local`;
}

function toStruct(metadata: Record<string, string>): { fields: Record<string, { stringValue: string }> } {
  const fields: Record<string, { stringValue: string }> = {};
  for (const [k, v] of Object.entries(metadata)) fields[k] = { stringValue: v };
  return { fields };
}

type DeltaStreamCall = grpc.ClientDuplexStream<unknown, DeltaResponse>;
/** The generic client's methods, by name as the proto names them. */
type StreamMethods = Partial<Record<string, (m: grpc.Metadata) => DeltaStreamCall>>;

export class AdsClient {
  private readonly client: grpc.Client;
  private readonly call: DeltaStreamCall;
  private readonly sentNode = new Set<string>();
  private readonly responseListeners = new Set<(r: DeltaResponse) => void>();
  /** Resolves with the final status of the stream. */
  readonly status: Promise<grpc.StatusObject>;

  constructor(private readonly options: AdsClientOptions) {
    const service = loadProtos(['xds.proto'])[ADS_SERVICE] as grpc.ServiceDefinition | undefined;
    if (!service) throw new Error(`${ADS_SERVICE} not found in proto/xds.proto`);
    const ctor = grpc.makeGenericClientConstructor(service, 'AggregatedDiscoveryService');
    const channelOptions: grpc.ChannelOptions = {
      'grpc.max_receive_message_length': CLIENT_MAX_RECEIVE_BYTES,
      // Each client is its own connection, as each ztunnel is.
      'grpc.use_local_subchannel_pool': 1,
    };
    let creds: grpc.ChannelCredentials;
    if (options.rootCertPem) {
      // ztunnel's rustls speaks TLS 1.3 only; so does this client.
      const context = tls.createSecureContext({ ca: options.rootCertPem, minVersion: 'TLSv1.3' });
      creds = grpc.credentials.createFromSecureContext(context);
      if (options.serverName) channelOptions['grpc.ssl_target_name_override'] = options.serverName;
    } else {
      creds = grpc.credentials.createInsecure();
    }
    this.client = new ctor(options.address, creds, channelOptions);
    const metadata = new grpc.Metadata();
    if (options.token) {
      metadata.set('authorization', `Bearer ${options.token}`);
      metadata.set('clusterid', options.clusterId ?? '');
    }
    const method = (this.client as unknown as StreamMethods)[DELTA_METHOD];
    if (!method) throw new Error(`${ADS_SERVICE}.${DELTA_METHOD} not found in proto/xds.proto`);
    this.call = method.call(this.client, metadata);
    this.status = new Promise((resolve) => this.call.on('status', resolve));
    this.call.on('error', () => undefined); // the status promise carries the outcome
    this.call.on('data', (r: DeltaResponse) => this.receive(r));
  }

  /** Sends a request; the first one of each type carries the node, as ztunnel's do. */
  send(req: DeltaRequestInit): void {
    const first = !this.sentNode.has(req.type_url);
    this.sentNode.add(req.type_url);
    const node = first ? { id: this.options.node.id, metadata: toStruct(this.options.node.metadata) } : null;
    this.call.write({ ...req, node });
  }

  ack(response: DeltaResponse, nackMessage?: string): void {
    const req: DeltaRequestInit = { type_url: response.type_url, response_nonce: response.nonce };
    if (nackMessage !== undefined) req.error_detail = { code: 0, message: nackMessage };
    this.send(req);
  }

  onResponse(listener: (r: DeltaResponse) => void): () => void {
    this.responseListeners.add(listener);
    return () => this.responseListeners.delete(listener);
  }

  /** Stops reading responses (flow control then stalls the server's writes). */
  pause(): void {
    this.call.pause();
  }

  close(): void {
    this.call.cancel();
    this.client.close();
  }

  private receive(r: DeltaResponse): void {
    for (const l of this.responseListeners) l(r);
    if (!this.options.manualAck) this.ack(r, this.options.review?.(r));
  }
}

/** What a client holds after applying responses: name -> resource, per type. */
export class HeldResources {
  readonly byType = new Map<string, Map<string, DeltaResource>>();

  /** Adds first, then removals, in ztunnel's order. */
  apply(r: DeltaResponse): void {
    let held = this.byType.get(r.type_url);
    if (!held) this.byType.set(r.type_url, (held = new Map<string, DeltaResource>()));
    for (const res of r.resources) held.set(res.name, res);
    for (const name of r.removed_resources) held.delete(name);
  }

  names(typeUrl: string): string[] {
    return [...(this.byType.get(typeUrl)?.keys() ?? [])].sort();
  }

  versions(typeUrl: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [n, r] of this.byType.get(typeUrl) ?? []) out[n] = r.version;
    return out;
  }
}
