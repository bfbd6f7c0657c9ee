// A bench client process of silent ztunnels: each stream subscribes like ztunnel (Address and
// Authorization, wildcard), reads every byte it is sent, and never answers (no ACK, no NACK).
// It reports 'synced' once a stream has received both full responses. With `read: false` the
// streams never read at all (a wedged ztunnel): their HTTP/2 windows stay shut after the first
// 64 KiB, and nothing is reported.

import * as grpc from '@grpc/grpc-js';
import * as fs from 'node:fs';
import * as http2 from 'node:http2';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL } from '../src/contract/xds-resources';
import { ztunnelNodeId } from '../src/cli/ads-client';
import { ADS_SERVICE, DELTA_METHOD, loadProtos } from '../src/xds/grpc/proto';
import type { WorkerMessage } from './xds-client-worker';

export interface SilentWorkerConfig {
  port: number;
  caFile: string;
  serverName: string;
  token: string;
  streams: number;
  firstIndex: number;
  /** False: never read a byte (default true). */
  read?: boolean;
}

const now = () => performance.timeOrigin + performance.now();

/** Counts whole gRPC messages in a byte stream by their 5-byte length prefixes, keeping none of them. */
class MessageCounter {
  count = 0;
  private header = Buffer.alloc(5);
  private fill = 0;
  private left = 0;

  push(chunk: Buffer): void {
    let pos = 0;
    while (pos < chunk.length) {
      if (this.left > 0) {
        const take = Math.min(this.left, chunk.length - pos);
        this.left -= take;
        pos += take;
        if (this.left === 0) this.count++;
        continue;
      }
      const take = Math.min(5 - this.fill, chunk.length - pos);
      chunk.copy(this.header, this.fill, pos, pos + take);
      this.fill += take;
      pos += take;
      if (this.fill < 5) return;
      this.fill = 0;
      this.left = this.header.readUInt32BE(1);
      if (this.left === 0) this.count++;
    }
  }
}

function frame(message: Buffer): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt32BE(message.length, 1);
  message.copy(out, 5);
  return out;
}

function main(): void {
  const config = JSON.parse(process.argv[2]!) as SilentWorkerConfig;
  const method = (loadProtos(['xds.proto'])[ADS_SERVICE] as grpc.ServiceDefinition)[DELTA_METHOD]!;
  const encode = (req: Record<string, unknown>) => frame(method.requestSerialize(req));
  const ca = fs.readFileSync(config.caFile, 'utf8');
  for (let s = 0; s < config.streams; s++) {
    const index = config.firstIndex + s;
    const session = http2.connect(`https://127.0.0.1:${config.port}`, {
      ca,
      servername: config.serverName,
      minVersion: 'TLSv1.3',
    });
    session.on('error', (err: Error) =>
      process.send!({ t: 'error', message: `silent stream ${index}: ${err.message}` } satisfies WorkerMessage),
    );
    const stream = session.request({
      ':method': 'POST',
      ':path': `/${ADS_SERVICE}/${DELTA_METHOD}`,
      'content-type': 'application/grpc',
      te: 'trailers',
      authorization: `Bearer ${config.token}`,
    });
    // A stream that never reads is expected to be reset by the server.
    stream.on(
      'error',
      (err: Error) =>
        config.read !== false &&
        process.send!({ t: 'error', message: `silent stream ${index}: ${err.message}` } satisfies WorkerMessage),
    );
    const node = {
      id: ztunnelNodeId(
        `10.202.${(index >> 8) & 255}.${index & 255}`,
        `ztunnel-${config.read === false ? 'deaf' : 'silent'}-${index}`,
        'istio-system',
      ),
      metadata: {
        fields: { NAMESPACE: { stringValue: 'istio-system' }, NODE_NAME: { stringValue: `node-${index % 1000}` } },
      },
    };
    if (config.read === false) {
      stream.pause();
      stream.write(encode({ type_url: ADDRESS_TYPE_URL, node }));
      stream.write(encode({ type_url: AUTHORIZATION_TYPE_URL, node }));
      continue;
    }
    const counter = new MessageCounter();
    let bytes = 0;
    let reported = false;
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      counter.push(chunk);
      if (!reported && counter.count >= 2) {
        reported = true;
        process.send!({ t: 'synced', stream: index, at: now(), resources: 0, bytes } satisfies WorkerMessage);
      }
    });
    stream.write(encode({ type_url: ADDRESS_TYPE_URL, node }));
    stream.write(encode({ type_url: AUTHORIZATION_TYPE_URL, node }));
  }
  process.on('disconnect', () => process.exit(0));
}

if (require.main === module) main();
