// One StreamAggregatedResources (State-of-the-World) stream. ztunnel speaks Delta xDS only; this
// method exists for istioctl, which asks istiod's debug types (istio.io/debug/...) over it. As in
// istiod, debug answers go only to callers authenticated over TLS, and a caller outside the system
// namespace sees only proxies of its own namespace. Every answer is built at once from a snapshot
// of the streams and written as this call's own buffer: a caller that reads slowly holds its buffer
// and its place among MAX_SOTW_STREAMS, nothing the Delta streams share, and is cut after
// SOTW_WRITE_TIMEOUT_MS.

import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../../log/logger';
import type { CallAuthenticator, CallerIdentity } from '../../security/identity';
import { clientText } from '../wire/client-limits';
import type { DeltaStream } from '../protocol/delta-stream';
import { CLIENT_CONFIG_TYPE_URL, SotwRequest, encodeClientConfig, encodeSotwResponse } from '../wire/sotw-wire';
import { MAX_SYNCZ_CLIENT_CONFIGS, synczClientConfigs, visibleTo } from './sotw-syncz';
import { callTransport } from '../grpc/transport';
import type { GrpcHookFallbacks } from '../grpc/hooks';

/** istiod's debug types share this prefix; it answers them on any stream that asks. */
export const DEBUG_TYPE_PREFIX = 'istio.io/debug';
export const SYNCZ_TYPE = 'istio.io/debug/syncz';
export const CONFIG_DUMP_TYPE = 'istio.io/debug/config_dump';
/** istiod's DebugGen: the one resource name is a debug page. */
export const DEBUG_TYPE = 'istio.io/debug';

/** The reply to any caller that may not see debug data; the reason is logged, never sent. */
export const UNAUTHENTICATED_MESSAGE = 'authentication required';

/**
 * Concurrent SotW streams. istioctl opens one per istiod replica and closes it after one answer;
 * 32 allows a few operators and scripts at once while bounding the memory held by answers being
 * written (one syncz answer each). Beyond it a new stream ends with RESOURCE_EXHAUSTED.
 */
export const MAX_SOTW_STREAMS = 32;

/**
 * A response the client has not taken within this time ends the stream (RST_STREAM CANCEL),
 * freeing its buffer and its place among MAX_SOTW_STREAMS. istioctl's own timeout is 30 s.
 */
export const SOTW_WRITE_TIMEOUT_MS = 30_000;

export type SotwCall = grpc.ServerDuplexStream<SotwRequest, Buffer>;

export interface SotwDeps {
  /** The connected Delta streams (ztunnels), read when an answer is built. */
  streams: () => Iterable<DeltaStream>;
  authenticator: CallAuthenticator;
  /** Callers whose identity is in this namespace see every proxy (POD_NAMESPACE). */
  systemNamespace: string;
  /** envoy.config.core.v3.ControlPlane.identifier for every response. */
  controlPlane: string;
  log: Logger;
  writeTimeoutMs: number;
  /** Records each refusal and answer by outcome (logs carry the detail). */
  count: (outcome: SotwOutcome) => void;
  /**
   * Whether the call came on the TLS port: known from the port the implementation was registered
   * on (XdsServer.implementation), not read from the call.
   */
  encrypted: boolean;
  /** Where a reach past grpc-js that found another shape is reported. */
  hooks: GrpcHookFallbacks;
  /** Destroys the connection of `peer` when its stream cannot be reset (DeltaStream's). */
  closeConnection: (peer: string) => boolean;
  onClose(stream: SotwStream): void;
}

export type SotwOutcome =
  'answered' | 'unauthenticated' | 'invalid' | 'refused_type' | 'write_timeout' | 'refused_streams';

let counter = 0;

interface AuthResult {
  identity?: CallerIdentity;
  /** Why the caller has no identity (logged, never sent). */
  reason?: string;
}

export class SotwStream {
  readonly id = `sotw-${(++counter).toString(36)}`;
  private readonly peer: string;
  private auth: AuthResult | undefined;
  /** The request waiting for authentication or for the write in flight; only the latest is kept. */
  private next: SotwRequest | undefined;
  private writing = false;
  /** The client has sent its last request (grpcurl sends one and half-closes at once). */
  private halfClosed = false;
  private closed = false;
  private seq = 0;
  private lastNonce = '';
  private nodeId = '';

  constructor(
    private readonly call: SotwCall,
    private readonly deps: SotwDeps,
  ) {
    this.peer = call.getPeer();
  }

  start(): void {
    this.call.on('data', (req: SotwRequest) => this.receive(req));
    this.call.on('end', () => {
      this.halfClosed = true;
      this.finishIfDone();
    });
    this.call.on('error', () => this.close());
    this.call.on('cancelled', () => this.close());
    void this.authenticate();
  }

  /** Ends the stream with OK (server shutdown). */
  end(): void {
    if (this.closed) return;
    this.close();
    this.call.end();
  }

  private async authenticate(): Promise<void> {
    let result: AuthResult;
    if (!this.deps.encrypted) {
      result = { reason: 'debug types are served only over TLS (the secure gRPC port)' };
    } else {
      try {
        result = { identity: await this.deps.authenticator.authenticate(this.call) };
      } catch (err) {
        result = { reason: clientText((err as Error).message) };
      }
    }
    this.auth = result;
    this.takeWaiting();
  }

  /** Handles the request that waited for authentication or for a write, then ends a half-closed stream if idle. */
  private takeWaiting(): void {
    const waiting = this.next;
    this.next = undefined;
    if (waiting) this.receive(waiting);
    this.finishIfDone();
  }

  /** A half-closed stream ends with OK once its last request is answered. */
  private finishIfDone(): void {
    if (this.halfClosed && this.auth && !this.writing && !this.next) this.end();
  }

  private receive(req: SotwRequest): void {
    if (this.closed) return;
    if (req.nodeId && !this.nodeId) this.nodeId = req.nodeId;
    if (!this.auth || this.writing) {
      this.next = req;
      return;
    }
    if (req.invalid !== undefined) {
      this.refuse('invalid', grpc.status.INVALID_ARGUMENT, req.invalid);
      return;
    }
    const type = req.type_url;
    if (!type.startsWith(DEBUG_TYPE_PREFIX)) {
      this.refuse(
        'refused_type',
        grpc.status.INVALID_ARGUMENT,
        `type "${clientText(type)}" is not served over State-of-the-World ADS: ztunnel uses Delta xDS ` +
          `(DeltaAggregatedResources); StreamAggregatedResources answers istioctl's ${DEBUG_TYPE_PREFIX} types only`,
      );
      return;
    }
    if (req.nack !== undefined) {
      this.deps.log.warn(
        { stream: this.id, type: clientText(type), message: req.nack },
        'debug response rejected (NACK)',
      );
      return;
    }
    // An answer to our last response asks for nothing new; istioctl's first request carries a nonce of its own.
    if (req.response_nonce !== '' && req.response_nonce === this.lastNonce) return;
    const identity = this.auth.identity;
    if (!identity) {
      this.deps.log.warn(
        {
          stream: this.id,
          peer: this.peer,
          node: clientText(this.nodeId),
          type: clientText(type),
          reason: this.auth.reason,
        },
        'debug request refused: the caller is not authenticated',
      );
      this.refuse('unauthenticated', grpc.status.UNAUTHENTICATED, UNAUTHENTICATED_MESSAGE);
      return;
    }
    if (type === DEBUG_TYPE && req.resource_names.length !== 1) {
      this.refuse('invalid', grpc.status.INVALID_ARGUMENT, 'exactly one debug request is required');
      return;
    }
    this.answer(type, req.resource_names, identity);
  }

  private answer(type: string, names: string[], identity: CallerIdentity): void {
    const resources: { type_url: string; value: Uint8Array }[] = [];
    if (type === SYNCZ_TYPE) {
      const visible = visibleTo(identity.namespace, this.deps.systemNamespace);
      const { configs, omitted } = synczClientConfigs(this.deps.streams(), visible);
      if (omitted > 0)
        this.deps.log.warn(
          { stream: this.id, shown: configs.length, omitted, limit: MAX_SYNCZ_CLIENT_CONFIGS },
          'syncz answer cut at MAX_SYNCZ_CLIENT_CONFIGS',
        );
      for (const c of configs) resources.push({ type_url: CLIENT_CONFIG_TYPE_URL, value: encodeClientConfig(c) });
    } else {
      // config_dump (an Envoy dump, which ztunnel has not: its own admin port serves its config),
      // istio.io/debug pages (served on istiod-ts's HTTP debug port) and any other debug type
      // istiod's status generator leaves empty.
      this.deps.log.info(
        { stream: this.id, type: clientText(type), names: names.map(clientText), caller: identity.identities[0] },
        'debug type not served over xDS; answering empty',
      );
    }
    const nonce = `${this.id}-${(++this.seq).toString(36)}`;
    const body = encodeSotwResponse({
      version_info: new Date().toISOString(),
      type_url: type,
      nonce,
      resources,
      controlPlane: this.deps.controlPlane,
    });
    this.lastNonce = nonce;
    this.deps.count('answered');
    this.write(body);
  }

  private write(body: Buffer): void {
    this.writing = true;
    const timer = setTimeout(() => this.cut(body.length), this.deps.writeTimeoutMs);
    timer.unref();
    this.call.write(body, () => {
      clearTimeout(timer);
      this.writing = false;
      this.takeWaiting();
    });
  }

  private cut(bytes: number): void {
    if (this.closed) return;
    this.deps.log.warn(
      { stream: this.id, peer: this.peer, bytes, timeoutMs: this.deps.writeTimeoutMs },
      'debug client did not take its response in time; stream reset',
    );
    this.deps.count('write_timeout');
    this.close();
    const transport = callTransport(this.call);
    if (transport) transport.cancel();
    else {
      this.deps.hooks.taken('transport');
      this.deps.closeConnection(this.peer);
    }
  }

  private refuse(outcome: SotwOutcome, code: grpc.status, details: string): void {
    if (this.closed) return;
    if (outcome !== 'unauthenticated')
      this.deps.log.info(
        { stream: this.id, peer: this.peer, node: clientText(this.nodeId), details },
        'SotW request refused',
      );
    this.deps.count(outcome);
    this.close();
    this.call.emit('error', { code, details });
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.next = undefined;
    this.deps.onClose(this);
  }
}
