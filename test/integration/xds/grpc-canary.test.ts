// The canary for grpc-js's internals. src/xds/grpc/transport.ts reaches past grpc-js's public API
// in five places; each has a fallback that keeps the server correct but slower or, for the
// transport, cutting whole connections. So that a grpc-js bump never takes a fallback in silence,
// this drives one real call, over TLS and h2 through the server's own listener (GrpcServers, the
// connection injector), through every reach, and fails naming the one whose shape changed. It
// also pins the version: package.json names one exact grpc-js, and it must be the one installed.
// CONTRIBUTING.md says how to bump it.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { GrpcServers } from '../../../src/server/grpc';
import {
  DIRECT_WRITE_SLICE_BYTES,
  callMessageWriter,
  callTransport,
  replaceMessageDecoder,
  widenReceiveWindows,
} from '../../../src/xds/grpc/transport';
import type { MessageFramer } from '../../../src/xds/wire/request-stream';
import { REPO_ROOT } from '../../support/cli';
import { makeTestPki, SERVER_NAME } from '../../support/tls';
import { ServingCertHolder } from '../../../src/server/serving-cert';

const SERVICE = 'canary.Canary';
const METHOD = 'Chat';
const identity = (b: Buffer) => b;
/** One bidi method over raw bytes: the shape of Delta ADS, without its messages. */
const CANARY_SERVICE: grpc.ServiceDefinition = {
  [METHOD]: {
    path: `/${SERVICE}/${METHOD}`,
    requestStream: true,
    responseStream: true,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};

/** One gRPC message frame: flag 0, big-endian length, bytes. */
function frame(body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/** A framer that records the DATA chunks it is given and returns each message whole. */
class RecordingFramer implements MessageFramer {
  chunks = 0;
  private pending = Buffer.alloc(0);
  write(chunk: Buffer): Buffer[] {
    this.chunks++;
    this.pending = Buffer.concat([this.pending, chunk]);
    const out: Buffer[] = [];
    while (this.pending.length >= 5) {
      const length = this.pending.readUInt32BE(1);
      if (this.pending.length < 5 + length) break;
      out.push(this.pending.subarray(5, 5 + length));
      this.pending = this.pending.subarray(5 + length);
    }
    return out;
  }
}

interface Observed {
  decoderReplaced: boolean;
  framer?: RecordingFramer;
  windows?: string;
  transport: boolean;
  writer: boolean;
  bytesBefore?: number | undefined;
  bytesAfter?: number | undefined;
  written?: Error | null;
}

describe('grpc-js canary', () => {
  test('the installed grpc-js is exactly the version package.json pins', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const pinned = pkg.dependencies['@grpc/grpc-js'];
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    const installed = (
      JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'node_modules/@grpc/grpc-js/package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
    expect(installed).toBe(pinned);
  });

  test('one real call over TLS reaches every hook: decoder, receive windows, direct write, bytes written, reset', async () => {
    const pki = makeTestPki();
    const servers = new GrpcServers(null, { host: '127.0.0.1', port: 0 }, {});
    const observed: Observed = { decoderReplaced: false, transport: false, writer: false };
    const big = Buffer.alloc(DIRECT_WRITE_SLICE_BYTES * 2 + 17, 7);
    let reset: (() => void) | undefined;
    servers.addService(
      CANARY_SERVICE,
      {
        [METHOD]: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
          observed.decoderReplaced = replaceMessageDecoder(call, () => (observed.framer = new RecordingFramer()));
          observed.windows = widenReceiveWindows(call);
          const transport = callTransport(call);
          const writer = callMessageWriter(call);
          observed.transport = transport !== undefined;
          observed.writer = writer !== undefined;
          call.once('data', () => {
            call.sendMetadata(new grpc.Metadata());
            observed.bytesBefore = transport?.bytesWritten();
            writer?.writeMessage([frame(big)], (err) => {
              observed.written = err ?? null;
              observed.bytesAfter = transport?.bytesWritten();
              reset = () => transport?.cancel();
            });
          });
        },
      },
      'secure',
    );
    const certs = new ServingCertHolder();
    certs.set({ certChainPem: pki.certPem, privateKeyPem: pki.keyPem, rootsPem: pki.caPem });
    const listener = await servers.startSecure(certs);
    const client = new grpc.Client(`127.0.0.1:${listener!.port}`, grpc.credentials.createSsl(Buffer.from(pki.caPem)), {
      'grpc.ssl_target_name_override': SERVER_NAME,
    });
    try {
      const call = client.makeBidiStreamRequest(`/${SERVICE}/${METHOD}`, identity, identity);
      const received = new Promise<Buffer>((resolve) => call.once('data', resolve));
      const status = new Promise<grpc.StatusObject>((resolve) => call.once('status', resolve));
      call.on('error', () => undefined);
      call.write(Buffer.from('hello'));
      const message = await received;
      // Direct write: the whole message, sliced on the server, arrives as one.
      expect(message.equals(big)).toBe(true);
      expect(observed).toMatchObject({
        decoderReplaced: true,
        windows: 'widened',
        transport: true,
        writer: true,
        written: null,
      });
      // Decoder: the request's DATA reached the framer put in grpc-js's place.
      expect(observed.framer?.chunks).toBeGreaterThan(0);
      // Bytes written: the connection's count grew by at least the message.
      expect(typeof observed.bytesBefore).toBe('number');
      expect((observed.bytesAfter ?? 0) - (observed.bytesBefore ?? 0)).toBeGreaterThanOrEqual(big.length);
      // Reset: RST_STREAM CANCEL reaches the client as CANCELLED.
      reset?.();
      expect((await status).code).toBe(grpc.status.CANCELLED);
    } finally {
      client.close();
      listener?.forceClose();
    }
  });

  test('closeConnection finds a call by the peer address grpc-js reports and closes its connection', async () => {
    const servers = new GrpcServers({ host: '127.0.0.1', port: 0 }, null, {});
    let peer = '';
    servers.addService(
      CANARY_SERVICE,
      { [METHOD]: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => void (peer = call.getPeer()) },
      'plaintext',
    );
    const listener = await servers.startPlaintext();
    const client = new grpc.Client(`127.0.0.1:${listener!.port}`, grpc.credentials.createInsecure());
    try {
      const call = client.makeBidiStreamRequest(`/${SERVICE}/${METHOD}`, identity, identity);
      const status = new Promise<grpc.StatusObject>((resolve) => call.once('status', resolve));
      call.on('error', () => undefined);
      call.write(Buffer.from('hello'));
      for (let i = 0; i < 500 && peer === ''; i++) await new Promise((r) => setTimeout(r, 10));
      expect(servers.closeConnection(peer)).toBe(true);
      expect((await status).code).toBe(grpc.status.UNAVAILABLE);
      expect(servers.closeConnection('203.0.113.1:1')).toBe(false);
    } finally {
      client.close();
      listener?.forceClose();
    }
  });
});
