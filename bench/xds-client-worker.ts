// A bench client process: opens many ztunnel-like Delta ADS streams over TLS, ACKs every response
// and reports to the parent (IPC) when each stream is synced and when each pushed version arrives.
// Responses are not decoded beyond their top-level fields: the bench measures the server.

import * as grpc from '@grpc/grpc-js';
import * as fs from 'node:fs';
import * as tls from 'node:tls';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL } from '../src/xds/cache';
import { CLIENT_MAX_RECEIVE_BYTES, ztunnelNodeId } from '../src/xds/ads-client';
import { ADS_SERVICE, DELTA_METHOD, loadProtos } from '../src/xds/proto';

export interface WorkerConfig {
  port: number;
  caFile: string;
  serverName: string;
  token: string;
  streams: number;
  firstIndex: number;
  /** A JSON file of name -> version sent as initial_resource_versions of the Address request. */
  irvFile?: string;
  /** Load, report 'ready', and connect only on 'go' (so the parent can time just the server's work). */
  waitForGo?: boolean;
}

export type WorkerMessage =
  | { t: 'synced'; stream: number; at: number; resources: number; bytes: number }
  | { t: 'recv'; items: [string, number][] }
  | { t: 'error'; message: string }
  | { t: 'ready' };

const now = () => performance.timeOrigin + performance.now();
const BENCH_FLOW_CONTROL_WINDOW = 8 * 1024 * 1024;

interface Parsed {
  typeUrl: string;
  nonce: string;
  resources: number;
  versions: string[];
}

function varint(buf: Buffer, pos: number): [number, number] {
  let result = 0;
  let mul = 1;
  for (;;) {
    const b = buf[pos++]!;
    result += (b & 0x7f) * mul;
    if (b < 0x80) return [result, pos];
    mul *= 128;
  }
}

/** Reads type_url, nonce and the resource count; versions only when asked (small pushes). */
function parseResponse(buf: Buffer, withVersions: boolean): Parsed {
  const out: Parsed = { typeUrl: '', nonce: '', resources: 0, versions: [] };
  let pos = 0;
  while (pos < buf.length) {
    let tag: number;
    [tag, pos] = varint(buf, pos);
    let len: number;
    [len, pos] = varint(buf, pos); // every field of DeltaDiscoveryResponse is length-delimited
    const field = tag >>> 3;
    if (field === 4) out.typeUrl = buf.toString('utf8', pos, pos + len);
    else if (field === 5) out.nonce = buf.toString('utf8', pos, pos + len);
    else if (field === 2) {
      out.resources++;
      if (withVersions) {
        let p = pos;
        while (p < pos + len) {
          let t: number;
          let l: number;
          [t, p] = varint(buf, p);
          [l, p] = varint(buf, p);
          if (t >>> 3 === 1) out.versions.push(buf.toString('utf8', p, p + l));
          p += l;
        }
      }
    }
    pos += len;
  }
  return out;
}

function main(): void {
  const config = JSON.parse(process.argv[2]!) as WorkerConfig;
  if (!config.waitForGo) {
    start(config);
    return;
  }
  process.once('message', () => start(config));
  process.send!({ t: 'ready' } satisfies WorkerMessage);
}

function start(config: WorkerConfig): void {
  const service = loadProtos(['xds.proto'])[ADS_SERVICE] as grpc.ServiceDefinition;
  const method = service[DELTA_METHOD]!;
  const rawService = { [DELTA_METHOD]: { ...method, responseDeserialize: (b: Buffer) => b } } as grpc.ServiceDefinition;
  const Ctor = grpc.makeGenericClientConstructor(rawService, 'AggregatedDiscoveryService');
  const creds = grpc.credentials.createFromSecureContext(tls.createSecureContext({ ca: fs.readFileSync(config.caFile, 'utf8'), minVersion: 'TLSv1.3' }));
  const irv: Record<string, string> = config.irvFile ? (JSON.parse(fs.readFileSync(config.irvFile, 'utf8')) as Record<string, string>) : {};

  let pending: [string, number][] = [];
  const flushRecv = () => {
    if (pending.length === 0) return;
    process.send!({ t: 'recv', items: pending } satisfies WorkerMessage);
    pending = [];
  };
  setInterval(flushRecv, 20).unref();

  for (let s = 0; s < config.streams; s++) {
    const index = config.firstIndex + s;
    const client = new Ctor(`127.0.0.1:${config.port}`, creds, {
      'grpc.ssl_target_name_override': config.serverName,
      'grpc.max_receive_message_length': CLIENT_MAX_RECEIVE_BYTES,
      'grpc.use_local_subchannel_pool': 1,
      // HTTP/2 windows sized for bulk transfer, as hyper's adaptive window (ztunnel) grows to;
      // the 64 KB default would make the client's event loop the bottleneck of the initial sync.
      'grpc-node.flow_control_window': BENCH_FLOW_CONTROL_WINDOW,
    });
    const md = new grpc.Metadata();
    md.set('authorization', `Bearer ${config.token}`);
    md.set('clusterid', 'Kubernetes');
    const call = (client as unknown as Record<string, (m: grpc.Metadata) => grpc.ClientDuplexStream<unknown, Buffer>>)[DELTA_METHOD]!.call(client, md);
    const nodeName = `node-${index % 1000}`;
    const node = {
      id: ztunnelNodeId(`10.200.${(index >> 8) & 255}.${index & 255}`, `ztunnel-${index}`, 'istio-system'),
      metadata: { fields: { NAMESPACE: { stringValue: 'istio-system' }, NODE_NAME: { stringValue: nodeName }, CLUSTER_ID: { stringValue: 'Kubernetes' } } },
    };
    const firsts = new Set<string>();
    let resources = 0;
    let bytes = 0;
    call.on('data', (buf: Buffer) => {
      const synced = firsts.size === 2;
      const r = parseResponse(buf, synced);
      call.write({ type_url: r.typeUrl, response_nonce: r.nonce });
      if (!synced) {
        firsts.add(r.typeUrl);
        resources += r.resources;
        bytes += buf.length;
        if (firsts.size === 2) process.send!({ t: 'synced', stream: index, at: now(), resources, bytes } satisfies WorkerMessage);
        return;
      }
      const at = now();
      for (const v of r.versions) pending.push([v, at]);
    });
    call.on('error', (err: Error) => process.send!({ t: 'error', message: `stream ${index}: ${err.message}` } satisfies WorkerMessage));
    call.write({ type_url: ADDRESS_TYPE_URL, node, initial_resource_versions: irv });
    call.write({ type_url: AUTHORIZATION_TYPE_URL, node });
  }
  process.on('disconnect', () => process.exit(0));
}

if (require.main === module) main();
