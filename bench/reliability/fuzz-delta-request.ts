// DeltaDiscoveryRequest bytes as ztunnel sends them (first request with its node, on-demand
// subscriptions, a reconnect listing held versions, ACKs and NACKs), mutated field by field and
// fed through the server's own decoder (src/xds/wire/request-wire.ts) into a real DeltaStream of the
// XdsServer over the demo mesh, on an in-memory call. Decoding errors and gRPC refusals
// (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, ...) are clean; an INTERNAL status (the stream's catch-all
// for an exception) or an exception escaping the server is a failure, as is a stack overflow.

import { EventEmitter } from 'node:events';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protobuf from 'protobufjs';
import { Registry } from 'prom-client';
import type { CallAuthenticator } from '../../src/server/context';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL } from '../../src/contract/xds-resources';
import type { DeltaCall } from '../../src/xds/protocol/delta-stream';
import { XdsMetrics } from '../../src/xds/protocol/metrics';
import { DELTA_METHOD, protoDir } from '../../src/xds/grpc/proto';
import { decodeDeltaRequest } from '../../src/xds/wire/request-wire';
import { XdsServer } from '../../src/xds/server';
import { OutgoingResponse, serializeOutgoing } from '../../src/xds/wire/wire';
import { buildFolderIndex, DEMO_DIR, FolderIndex } from './folder-index';
import { mutateProto } from './mutate-proto';
import type { Rng } from './prng';
import { CaseRecord, count, FuzzFailure, FuzzTarget, Verdict } from './target';

/** grpc-js refuses larger messages before they reach the decoder (ISTIO_GPRC_MAXRECVMSGSIZE default). */
const MAX_RECEIVE_BYTES = 4 * 1024 * 1024;

const NODE = {
  id: 'ztunnel~10.244.1.2~ztunnel-7k2xq.istio-system~istio-system.svc.cluster.local',
  metadata: {
    fields: {
      NAMESPACE: { stringValue: 'istio-system' },
      NODE_NAME: { stringValue: 'node-a' },
      CLUSTER_ID: { stringValue: 'Kubernetes' },
      INSTANCE_IPS: { stringValue: '10.244.1.2' },
      NAME: { stringValue: 'ztunnel-7k2xq' },
      LABELS: { structValue: { fields: { app: { stringValue: 'ztunnel' } } } },
      LIST: { listValue: { values: [{ numberValue: 1 }, { boolValue: true }] } },
    },
  },
};

class FakeCall extends EventEmitter {
  status: { code: number; details: string } | undefined;
  ended = false;
  responses = 0;
  lastNonce = '';
  constructor() {
    super();
    this.on('error', (e: { code: number; details: string }) => (this.status ??= e));
  }
  getPeer(): string {
    return 'fuzz:1';
  }
  write(r: OutgoingResponse, cb: () => void): boolean {
    serializeOutgoing(r);
    this.responses++;
    this.lastNonce = r.nonce;
    cb();
    return true;
  }
  end(): void {
    this.ended = true;
  }
}

const noAuth: CallAuthenticator = {
  authenticate: () => Promise.reject(new Error('authentication is off in the fuzzer')),
};

function isStackOverflow(err: unknown): boolean {
  return err instanceof RangeError && /call stack/i.test(err.message);
}

export async function deltaRequestTarget(): Promise<FuzzTarget> {
  const demo: FolderIndex = await buildFolderIndex(DEMO_DIR);
  const server = new XdsServer(
    demo.index,
    noAuth,
    { debounce: { after: 100, max: 1000 }, auth: false, identityCheck: false },
    new XdsMetrics(new Registry()),
  );
  const accept = server.implementation('secure')[DELTA_METHOD] as (call: DeltaCall) => void;
  const root = new protobuf.Root();
  root.loadSync(path.join(protoDir(), 'xds.proto'), { keepCase: true });
  const Req = root.lookupType('envoy.service.discovery.v3.DeltaDiscoveryRequest');
  const enc = (o: object) => Buffer.from(Req.encode(Req.fromObject(o)).finish());
  const held = Object.fromEntries([...demo.index.all(ADDRESS_TYPE_URL)].map((r) => [r.name, r.version]));
  const firsts = [
    enc({ node: NODE, type_url: ADDRESS_TYPE_URL, resource_names_subscribe: ['*'] }),
    enc({ node: NODE, type_url: AUTHORIZATION_TYPE_URL, resource_names_subscribe: ['*'] }),
    enc({ node: NODE, type_url: ADDRESS_TYPE_URL, resource_names_subscribe: ['*'], resource_names_unsubscribe: ['*'] }),
    enc({ node: NODE, type_url: ADDRESS_TYPE_URL, initial_resource_versions: held }),
    enc({
      node: NODE,
      type_url: ADDRESS_TYPE_URL,
      initial_resource_versions: { ...held, 'Kubernetes//Pod/bookinfo/gone': 'x' },
    }),
  ];
  const later = (nonce: string) => [
    enc({ type_url: ADDRESS_TYPE_URL, response_nonce: nonce }),
    enc({ type_url: AUTHORIZATION_TYPE_URL, response_nonce: nonce }),
    enc({ type_url: ADDRESS_TYPE_URL, response_nonce: nonce, error_detail: { code: 3, message: 'rejected' } }),
    enc({
      type_url: ADDRESS_TYPE_URL,
      resource_names_subscribe: ['bookinfo/reviews.bookinfo.svc.cluster.local', 'Kubernetes/10.244.1.10'],
    }),
    enc({ type_url: ADDRESS_TYPE_URL, resource_names_unsubscribe: ['bookinfo/reviews.bookinfo.svc.cluster.local'] }),
    enc({ node: NODE, type_url: 'type.googleapis.com/istio.workload.Workload', resource_names_subscribe: ['*'] }),
  ];
  const tally = new Map<string, number>();

  return {
    name: 'delta-request',
    describe:
      'DeltaDiscoveryRequest bytes through decodeDeltaRequest() (src/xds/wire/request-wire.ts) into a DeltaStream of XdsServer over the demo mesh',
    tally,
    run(rng: Rng, record: CaseRecord): Verdict {
      const call = new FakeCall();
      accept(call as unknown as DeltaCall);
      const inputs: string[] = [];
      try {
        const n = 1 + rng.int(3);
        for (let k = 0; k < n && !call.status; k++) {
          let bytes: Buffer =
            k === 0 || rng.chance(0.2) ? rng.pick(firsts) : rng.pick(later(rng.chance(0.8) ? call.lastNonce : 'stale'));
          if (rng.chance(0.95)) for (let m = 1 + rng.int(3); m > 0; m--) bytes = mutateProto(rng, bytes);
          inputs.push(
            bytes.length > 4096
              ? `${bytes.subarray(0, 4096).toString('base64')}… (${bytes.length} bytes)`
              : bytes.toString('base64'),
          );
          record.input = `requests (base64): ${inputs.join(' | ')}`;
          if (bytes.length > MAX_RECEIVE_BYTES) {
            count(tally, 'refused by grpc-js: over max_receive_message_length');
            return 'refused';
          }
          let req;
          try {
            req = decodeDeltaRequest(bytes);
          } catch (err) {
            if (isStackOverflow(err))
              throw new FuzzFailure(`decoding overflowed the stack (unbounded recursion): ${(err as Error).message}`);
            count(tally, 'decode error (grpc-js ends the call)');
            return 'refused';
          }
          call.emit('data', req);
        }
      } finally {
        if (!call.status) call.emit('end');
      }
      if (call.status) {
        const code = grpc.status[call.status.code] ?? String(call.status.code);
        // A plain number: a code off the wire need not be one grpc-js names.
        if (call.status.code === (grpc.status.INTERNAL as number))
          throw new FuzzFailure(`the stream failed with INTERNAL (an exception in the server): ${call.status.details}`);
        count(
          tally,
          `stream ended ${code}: ${call.status.details
            .replace(/"[^"]*"/g, '"…"')
            .replace(/\d+/g, 'N')
            .slice(0, 90)}`,
        );
        return 'refused';
      }
      count(tally, call.responses > 0 ? 'answered' : 'no answer (no node yet or nothing to send)');
      return 'accepted';
    },
    close() {
      server.close();
      return demo.close();
    },
  };
}
