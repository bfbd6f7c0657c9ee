// A bench client process: opens many ztunnel-like Delta ADS streams, each on its own TLS 1.3 +
// HTTP/2 connection, ACKs every response and reports to the parent (IPC) when each stream is
// synced and when each pushed version arrives. It speaks gRPC over node:http2 directly and parses
// responses as they stream in, without assembling a 17 MB message per stream: the bench measures
// the server, and four Node clients assembling 1,000 full syncs would measure themselves.

import * as grpc from '@grpc/grpc-js';
import * as fs from 'node:fs';
import * as http2 from 'node:http2';
import * as tls from 'node:tls';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL } from '../src/contract/xds-resources';
import { ztunnelNodeId } from '../src/cli/ads-client';
import { ADS_SERVICE, DELTA_METHOD, loadProtos } from '../src/xds/grpc/proto';

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
  /**
   * Send the same request bytes on a bare TLS connection (no HTTP/2, no gRPC) to a server that
   * only counts them: the floor any server in Node pays to receive them. The bytes are preceded
   * by their count (4 bytes); 'synced' is reported when the server answers with one byte.
   */
  rawTls?: boolean;
  /**
   * Read the responses from a bare TLS server (floors.ts tlsWriteFloor) instead: the same
   * requests are written and the same bytes parsed by the same ResponseParser, and each response
   * is ACKed on the socket as it is on a stream, but with no HTTP/2 (no DATA frames, no
   * WINDOW_UPDATEs) and no gRPC around them.
   */
  floorTls?: boolean;
}

export type WorkerMessage =
  | { t: 'synced'; stream: number; at: number; resources: number; bytes: number }
  | { t: 'recv'; items: [string, number][] }
  | { t: 'error'; message: string }
  | { t: 'ready' };

const now = () => performance.timeOrigin + performance.now();
/**
 * The clients' HTTP/2 receive windows, those ztunnel's xDS client advertises: its control-plane
 * channel is a hyper client built without window settings, so hyper's defaults apply, 2 MiB per
 * stream and 5 MiB per connection (ztunnel src/tls/control.rs, hyper 1.x src/proto/h2/client.rs).
 * XDS_BENCH_WINDOW / XDS_BENCH_CONN_WINDOW override them (64 KiB each before December 3: the
 * server then waited for a WINDOW_UPDATE every 64 KiB, which no real ztunnel makes it do).
 */
const WINDOW_BYTES = Number(process.env['XDS_BENCH_WINDOW'] ?? 2 * 1024 * 1024);
const CONNECTION_WINDOW_BYTES = Number(process.env['XDS_BENCH_CONN_WINDOW'] ?? 5 * 1024 * 1024);
/** Resource versions are read only from messages this small (pushes), not from full syncs. */
const CAPTURE_LIMIT = 1024 * 1024;
const PATH = `/${ADS_SERVICE}/${DELTA_METHOD}`;

interface Response {
  typeUrl: string;
  nonce: string;
  resources: number;
  versions: string[];
  bytes: number;
}

/**
 * Parses a stream of gRPC frames carrying DeltaDiscoveryResponses without buffering them: only
 * top-level fields are walked; type_url and nonce are kept, resources are counted (and their
 * versions read when the message is small).
 */
class ResponseParser {
  private header = Buffer.alloc(5);
  private headerFill = 0;
  private remaining = 0; // bytes of the current message still to come
  private size = 0;
  private field: { tag: number; len: number; left: number; parts: Buffer[] | null } | null = null;
  private varintBytes: number[] = [];
  private stage: 'tag' | 'len' = 'tag';
  private tag = 0;
  private current: Response | null = null;

  constructor(private readonly onMessage: (r: Response) => void) {}

  push(chunk: Buffer): void {
    let pos = 0;
    while (pos < chunk.length) {
      if (!this.current) {
        const take = Math.min(5 - this.headerFill, chunk.length - pos);
        chunk.copy(this.header, this.headerFill, pos, pos + take);
        this.headerFill += take;
        pos += take;
        if (this.headerFill < 5) return;
        this.headerFill = 0;
        this.size = this.remaining = this.header.readUInt32BE(1);
        this.current = { typeUrl: '', nonce: '', resources: 0, versions: [], bytes: this.size };
        if (this.remaining === 0) this.finish();
        continue;
      }
      if (this.field) {
        const take = Math.min(this.field.left, chunk.length - pos);
        if (this.field.parts) this.field.parts.push(chunk.subarray(pos, pos + take));
        this.field.left -= take;
        this.remaining -= take;
        pos += take;
        if (this.field.left === 0) this.endField();
        continue;
      }
      const b = chunk[pos++]!;
      this.remaining--;
      this.varintBytes.push(b);
      if (b >= 0x80) continue;
      let v = 0;
      for (let i = this.varintBytes.length - 1; i >= 0; i--) v = v * 128 + (this.varintBytes[i]! & 0x7f);
      this.varintBytes = [];
      if (this.stage === 'tag') {
        this.tag = v;
        this.stage = 'len';
      } else {
        this.stage = 'tag';
        const fieldNo = this.tag >>> 3;
        const keep = fieldNo === 4 || fieldNo === 5 || (fieldNo === 2 && this.size < CAPTURE_LIMIT);
        this.field = { tag: fieldNo, len: v, left: v, parts: keep ? [] : null };
        if (v === 0) this.endField();
      }
    }
  }

  private endField(): void {
    const f = this.field!;
    this.field = null;
    const r = this.current!;
    const data = f.parts ? Buffer.concat(f.parts) : null;
    if (f.tag === 4) r.typeUrl = data!.toString();
    else if (f.tag === 5) r.nonce = data!.toString();
    else if (f.tag === 2) {
      r.resources++;
      if (data) r.versions.push(resourceVersion(data));
    }
    if (this.remaining === 0) this.finish();
  }

  private finish(): void {
    const r = this.current!;
    this.current = null;
    this.onMessage(r);
  }
}

function resourceVersion(resource: Buffer): string {
  let p = 0;
  while (p < resource.length) {
    const tag = resource[p++]!;
    let len = 0;
    let mul = 1;
    for (;;) {
      const b = resource[p++]!;
      len += (b & 0x7f) * mul;
      if (b < 0x80) break;
      mul *= 128;
    }
    if (tag >>> 3 === 1) return resource.toString('utf8', p, p + len);
    p += len;
  }
  return '';
}

/**
 * An ACK (type_url, response_nonce) framed for gRPC, written by hand: protobufjs's generic encoder
 * costs the client several times the bytes' worth of CPU, and the clients share the cores with the
 * server they measure. The framing is checked against protobufjs in the xDS unit tests.
 */
export function ack(typeUrl: string, nonce: string): Buffer {
  const type = Buffer.byteLength(typeUrl);
  const n = Buffer.byteLength(nonce);
  if (type > 127 || n > 127) throw new Error('ack fields longer than 127 bytes need multi-byte lengths');
  const out = Buffer.allocUnsafe(5 + 4 + type + n);
  out.writeUInt8(0, 0);
  out.writeUInt32BE(4 + type + n, 1);
  let p = 5;
  out[p++] = (2 << 3) | 2; // type_url
  out[p++] = type;
  p += out.write(typeUrl, p, 'utf8');
  out[p++] = (6 << 3) | 2; // response_nonce
  out[p++] = n;
  out.write(nonce, p, 'utf8');
  return out;
}

function frame(message: Buffer): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt32BE(message.length, 1);
  message.copy(out, 5);
  return out;
}

function ztunnelNode(index: number): Record<string, unknown> {
  return {
    id: ztunnelNodeId(`10.200.${(index >> 8) & 255}.${index & 255}`, `ztunnel-${index}`, 'istio-system'),
    metadata: {
      fields: {
        NAMESPACE: { stringValue: 'istio-system' },
        NODE_NAME: { stringValue: `node-${index % 1000}` },
        CLUSTER_ID: { stringValue: 'Kubernetes' },
      },
    },
  };
}

function sendRaw(config: WorkerConfig, ca: string, index: number, frames: Buffer[]): void {
  const body = Buffer.concat(frames);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(body.length);
  const socket = tls.connect(
    { host: '127.0.0.1', port: config.port, ca, servername: config.serverName, minVersion: 'TLSv1.3' },
    () => socket.write(Buffer.concat([count, body])),
  );
  socket.on('error', (err: Error) =>
    process.send!({ t: 'error', message: `raw stream ${index}: ${err.message}` } satisfies WorkerMessage),
  );
  socket.once('data', () =>
    process.send!({ t: 'synced', stream: index, at: now(), resources: 0, bytes: body.length } satisfies WorkerMessage),
  );
}

/** A client of the TLS write floor: one TLS 1.3 connection, the same requests, parser and ACKs as a stream. */
function connectFloor(config: WorkerConfig, ca: string, index: number, requests: Buffer): void {
  let resources = 0;
  let bytes = 0;
  const firsts = new Set<string>();
  const socket = tls.connect(
    { host: '127.0.0.1', port: config.port, ca, servername: config.serverName, minVersion: 'TLSv1.3' },
    () => socket.write(requests),
  );
  socket.on('error', (err: Error) =>
    process.send!({ t: 'error', message: `floor stream ${index}: ${err.message}` } satisfies WorkerMessage),
  );
  const parser = new ResponseParser((r) => {
    const at = now();
    socket.write(ack(r.typeUrl, r.nonce));
    if (firsts.size >= 2) return;
    firsts.add(r.typeUrl);
    resources += r.resources;
    bytes += r.bytes;
    if (firsts.size === 2) process.send!({ t: 'synced', stream: index, at, resources, bytes } satisfies WorkerMessage);
  });
  socket.on('data', (chunk: Buffer) => parser.push(chunk));
}

function main(): void {
  const config = JSON.parse(process.argv[2]!) as WorkerConfig;
  if (!config.waitForGo) {
    start(config);
    return;
  }
  // The requests (megabytes with held versions) are read and encoded before 'ready', so the
  // parent's window from 'go' holds the server's work and not this process's preparation.
  const prepared = prepare(config);
  process.once('message', () => start(config, prepared));
  process.send!({ t: 'ready' } satisfies WorkerMessage);
}

interface Prepared {
  ca: string;
  encode: (req: Record<string, unknown>) => Buffer;
  /** Each stream's Address request, with the held versions. */
  addressRequest: (index: number) => Buffer;
}

function prepare(config: WorkerConfig): Prepared {
  const method = (loadProtos(['xds.proto'])[ADS_SERVICE] as grpc.ServiceDefinition)[DELTA_METHOD]!;
  const encode = (req: Record<string, unknown>) => frame(method.requestSerialize(req));
  const irv: Record<string, string> = config.irvFile
    ? (JSON.parse(fs.readFileSync(config.irvFile, 'utf8')) as Record<string, string>)
    : {};
  const addressRequest = (index: number) =>
    encode({ type_url: ADDRESS_TYPE_URL, node: ztunnelNode(index), initial_resource_versions: irv });
  const ready = new Map<number, Buffer>();
  if (config.waitForGo)
    for (let s = 0; s < config.streams; s++) ready.set(config.firstIndex + s, addressRequest(config.firstIndex + s));
  return {
    ca: fs.readFileSync(config.caFile, 'utf8'),
    encode,
    addressRequest: (index) => ready.get(index) ?? addressRequest(index),
  };
}

function start(config: WorkerConfig, prepared = prepare(config)): void {
  const { ca, encode, addressRequest } = prepared;

  let pending: [string, number][] = [];
  setInterval(() => {
    if (pending.length === 0) return;
    process.send!({ t: 'recv', items: pending } satisfies WorkerMessage);
    pending = [];
  }, 20).unref();

  for (let s = 0; s < config.streams; s++) {
    const index = config.firstIndex + s;
    if (config.floorTls) {
      connectFloor(
        config,
        ca,
        index,
        Buffer.concat([addressRequest(index), encode({ type_url: AUTHORIZATION_TYPE_URL, node: ztunnelNode(index) })]),
      );
      continue;
    }
    if (config.rawTls) {
      sendRaw(config, ca, index, [
        addressRequest(index),
        encode({ type_url: AUTHORIZATION_TYPE_URL, node: ztunnelNode(index) }),
      ]);
      continue;
    }
    const session = http2.connect(`https://127.0.0.1:${config.port}`, {
      ca,
      servername: config.serverName,
      minVersion: 'TLSv1.3',
      settings: { initialWindowSize: WINDOW_BYTES },
    });
    session.on('connect', () => session.setLocalWindowSize(CONNECTION_WINDOW_BYTES));
    session.on('error', (err: Error) =>
      process.send!({ t: 'error', message: `stream ${index}: ${err.message}` } satisfies WorkerMessage),
    );
    const stream = session.request({
      ':method': 'POST',
      ':path': PATH,
      'content-type': 'application/grpc',
      te: 'trailers',
      authorization: `Bearer ${config.token}`,
      clusterid: 'Kubernetes',
    });
    stream.on('error', (err: Error) =>
      process.send!({ t: 'error', message: `stream ${index}: ${err.message}` } satisfies WorkerMessage),
    );
    stream.on('trailers', (t: http2.IncomingHttpHeaders) => {
      if (t['grpc-status'] !== '0')
        process.send!({
          t: 'error',
          message: `stream ${index}: grpc-status ${String(t['grpc-status'])} ${String(t['grpc-message'])}`,
        } satisfies WorkerMessage);
    });
    const node = ztunnelNode(index);
    const firsts = new Set<string>();
    let resources = 0;
    let bytes = 0;
    const parser = new ResponseParser((r) => {
      // Received and parsed: that is the moment a change reached this client (the ACK is ours).
      const at = now();
      stream.write(ack(r.typeUrl, r.nonce));
      if (firsts.size < 2) {
        firsts.add(r.typeUrl);
        resources += r.resources;
        bytes += r.bytes;
        if (firsts.size === 2)
          process.send!({ t: 'synced', stream: index, at, resources, bytes } satisfies WorkerMessage);
        return;
      }
      for (const v of r.versions) pending.push([v, at]);
    });
    stream.on('data', (chunk: Buffer) => parser.push(chunk));
    stream.write(addressRequest(index));
    stream.write(encode({ type_url: AUTHORIZATION_TYPE_URL, node }));
  }
  process.on('disconnect', () => process.exit(0));
}

if (require.main === module) main();
