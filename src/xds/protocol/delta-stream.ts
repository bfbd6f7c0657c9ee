// One DeltaAggregatedResources stream: authenticates once, reads the node from the first request,
// keeps a TypeSubscription per type, and writes at most one response at a time so a client that
// stops reading only accumulates a set of pending names, never a queue of messages.

import * as grpc from '@grpc/grpc-js';
import type { CallAuthenticator, CallerIdentity } from '../../security/identity';
import type { Logger } from '../../log/logger';
import { ResourceCache, XDS_TYPE_ORDER } from '../../contract/xds-resources';
import type { Clock } from './debounce';
import type { XdsMetrics } from './metrics';
import { metricType } from './metrics';
import { NodeError, ProxyNode, parseNode } from './node';
import type { DeltaDiscoveryRequest } from '../grpc/proto';
import type { FullSyncGate, PushBatch, SnapshotCache } from './push';
import { TakeContext, TypeSubscription } from './subscription';
import { clientText } from '../wire/client-limits';
import type { CutReason, DrainMonitor } from './drain';
import { DeltaRequestFramer } from '../wire/request-stream';
import {
  CallTransport,
  MessageWriter,
  callMessageWriter,
  callTransport,
  replaceMessageDecoder,
  widenReceiveWindows,
} from '../grpc/transport';
import type { GrpcHookFallbacks } from '../grpc/hooks';
import type { CacheDigests } from '../wire/version-digest';
import { OutgoingResponse, encodeResponseBody } from '../wire/wire';

/** Requests held while authentication is in flight (ztunnel sends two). */
export const MAX_REQUESTS_BEFORE_AUTH = 16;
/** Distinct type URLs one stream may subscribe to; ztunnel uses two. */
export const MAX_TYPES_PER_STREAM = 16;
/** Explicitly watched names per type; beyond it the stream is ended with RESOURCE_EXHAUSTED. */
export const MAX_WATCHED_NAMES = 100_000;
/**
 * Responses at least this large are written on the HTTP/2 stream directly (MessageWriter),
 * sharing the encoded body with every other stream, instead of through grpc-js, which copies each
 * message into a buffer of its own. Below it the copy costs less than the three pieces of a direct
 * write.
 */
export const DIRECT_WRITE_MIN_BYTES = 64 * 1024;

export type DeltaCall = grpc.ServerDuplexStream<DeltaDiscoveryRequest, OutgoingResponse>;

export interface StreamDeps {
  cache: ResourceCache;
  /** Undefined when XDS_AUTH is off. */
  authenticator: CallAuthenticator | undefined;
  /** PILOT_ENABLE_XDS_IDENTITY_CHECK. */
  identityCheck: boolean;
  metrics: XdsMetrics;
  clock: Clock;
  log: Logger;
  snapshots: SnapshotCache;
  fullSyncs: FullSyncGate;
  /** Watches each write until the client has taken its bytes; cuts clients that stop reading. */
  drains: DrainMonitor;
  /** Where a reach past grpc-js that found another shape is reported (grpc/hooks.ts). */
  hooks: GrpcHookFallbacks;
  /**
   * Destroys the connection a call came on, by its peer (public grpc-js API, server/grpc.ts): the
   * drain's bound when the stream itself cannot be reset. False when the connection is unknown.
   */
  closeConnection: (peer: string) => boolean;
  /** Digests of the cache's resources per type, for unchanged reconnects. */
  digests: CacheDigests;
  onReady(stream: DeltaStream): void;
  onClose(stream: DeltaStream): void;
}

interface StreamError {
  code: grpc.status;
  details: string;
}

let streamCounter = 0;

/** Position of a type in every push: XDS_TYPE_ORDER first, other types after (stable sort keeps arrival order). */
function typeRank(typeUrl: string): number {
  const i = (XDS_TYPE_ORDER as readonly string[]).indexOf(typeUrl);
  return i < 0 ? XDS_TYPE_ORDER.length : i;
}

export class DeltaStream {
  readonly id = (++streamCounter).toString(36);
  readonly connectedAt = new Date();
  readonly peer: string;
  node: ProxyNode | undefined;
  identity: CallerIdentity | undefined;
  readonly subs = new Map<string, TypeSubscription>();
  /** The subscriptions in write order: Address, Authorization, then other types as they came. */
  private readonly writeOrder: TypeSubscription[] = [];
  private authState: 'pending' | 'done' | 'failed' = 'pending';
  private readonly early: DeltaDiscoveryRequest[] = [];
  private writing = false;
  private closed = false;
  private seq = 0;
  private readonly wake = () => this.flush();
  /** What take() needs from this stream; fixed once the node is known. */
  private takeContext: TakeContext | undefined;
  /**
   * The FullSyncGate slot of the write in flight, if it carries a full state. Freed when the
   * write's bytes have drained into the connection, not when the client answers: a client that
   * reads but never ACKs holds nothing, and one that stops reading is cut by the DrainMonitor.
   */
  private slot: (() => void) | undefined;
  /**
   * Set while the write in flight has given its slot up for lack of progress (SLOT_STALL_RELEASE_MS)
   * and is kept, counted by the FullSyncGate, until it drains or is cut.
   */
  private stalledPlace: (() => void) | undefined;
  private readonly transport: CallTransport | undefined;
  private readonly writer: MessageWriter | undefined;

  constructor(
    private readonly call: DeltaCall,
    private readonly deps: StreamDeps,
  ) {
    this.peer = call.getPeer();
    this.transport = callTransport(call);
    if (!this.transport) deps.hooks.taken('transport');
    this.writer = callMessageWriter(call);
    if (!this.writer) deps.hooks.taken('direct-write');
    // Before grpc-js reads a byte: large requests (a reconnect's held versions) are digested as
    // their DATA frames arrive instead of being concatenated first (request-stream.ts).
    if (!replaceMessageDecoder(call, (max) => new DeltaRequestFramer(max))) deps.hooks.taken('decoder');
    // And they arrive under receive windows wide enough not to stop the client every 64 KiB. A
    // session already closing has nothing to widen: only a missing session is a lost hook.
    if (widenReceiveWindows(call) === 'unreachable') deps.hooks.taken('receive-windows');
  }

  start(): void {
    this.call.on('data', (req: DeltaDiscoveryRequest) => this.receive(req));
    this.call.on('end', () => this.close());
    this.call.on('error', () => this.close());
    this.call.on('cancelled', () => this.close());
    void this.authenticate();
  }

  /** Ends the stream cleanly (OK status): ztunnel reconnects at once, possibly to another replica. */
  end(): void {
    if (this.closed) return;
    this.close();
    this.call.end();
  }

  /** Merges a push into every subscription and writes if the stream is idle. */
  enqueue(batch: PushBatch): void {
    if (this.closed || !this.node) return;
    for (const sub of this.subs.values()) sub.addPush(batch);
    this.flush();
  }

  private async authenticate(): Promise<void> {
    if (this.deps.authenticator) {
      try {
        this.identity = await this.deps.authenticator.authenticate(this.call);
      } catch (err) {
        this.authState = 'failed';
        this.deps.log.warn(
          { peer: this.peer, reason: clientText((err as Error).message) },
          'xDS stream authentication failed',
        );
        this.fail({ code: grpc.status.UNAUTHENTICATED, details: 'authentication failed' });
        return;
      }
    }
    this.authState = 'done';
    for (const req of this.early.splice(0)) this.receive(req);
  }

  private receive(req: DeltaDiscoveryRequest): void {
    if (this.closed || this.authState === 'failed') return;
    if (this.authState === 'pending') {
      if (this.early.length >= MAX_REQUESTS_BEFORE_AUTH) {
        this.fail({
          code: grpc.status.RESOURCE_EXHAUSTED,
          details: `more than ${MAX_REQUESTS_BEFORE_AUTH} requests before authentication completed`,
        });
        return;
      }
      this.early.push(req);
      return;
    }
    if (req.invalid !== undefined) {
      this.deps.log.warn(
        { stream: this.id, node: clientText(this.node?.id), peer: this.peer, reason: req.invalid },
        'xDS request over a limit; stream ended',
      );
      this.fail({ code: grpc.status.INVALID_ARGUMENT, details: req.invalid });
      return;
    }
    try {
      if (!this.node && !this.accept(req)) return;
      this.handle(req);
    } catch (err) {
      this.deps.log.error({ stream: this.id, err }, 'xDS request failed');
      this.fail({ code: grpc.status.INTERNAL, details: 'internal error' });
    }
  }

  /** First request: node id and metadata, then istiod's identity check. */
  private accept(req: DeltaDiscoveryRequest): boolean {
    try {
      this.node = parseNode(req.node);
    } catch (err) {
      if (!(err instanceof NodeError)) throw err;
      this.deps.log.warn({ peer: this.peer, reason: err.message }, 'xDS stream rejected');
      this.fail({ code: grpc.status.INVALID_ARGUMENT, details: err.message });
      return false;
    }
    const id = this.identity;
    if (this.deps.identityCheck && id && id.namespace !== this.node.namespace) {
      const nodeNamespace = clientText(this.node.namespace);
      this.deps.log.warn(
        { peer: this.peer, node: clientText(this.node.id), callerNamespace: id.namespace, nodeNamespace },
        'xDS identity check failed',
      );
      this.fail({
        code: grpc.status.PERMISSION_DENIED,
        details: `authorization failed: node namespace "${nodeNamespace}" is not the caller's namespace "${id.namespace}"`,
      });
      this.node = undefined;
      return false;
    }
    this.deps.log.info({ stream: this.id, node: clientText(this.node.id), peer: this.peer }, 'xDS stream connected');
    this.deps.onReady(this);
    // onReady ends a stream that becomes ready after the server closed: nothing more to handle.
    return !this.closed;
  }

  private handle(req: DeltaDiscoveryRequest): void {
    const type = req.type_url;
    if (!type) {
      this.deps.log.warn({ stream: this.id }, 'ignoring request without type_url');
      return;
    }
    let sub = this.subs.get(type);
    if (req.error_detail) {
      this.nack(type, sub, req);
      return;
    }
    if (!sub) {
      if (this.subs.size >= MAX_TYPES_PER_STREAM) {
        this.fail({
          code: grpc.status.RESOURCE_EXHAUSTED,
          details: `more than ${MAX_TYPES_PER_STREAM} type URLs on one stream`,
        });
        return;
      }
      const served = (XDS_TYPE_ORDER as readonly string[]).includes(type);
      if (!served)
        this.deps.log.info(
          { stream: this.id, type: clientText(type) },
          'request for a type not served; answering empty',
        );
      sub = new TypeSubscription(type, served);
      this.subs.set(type, sub);
      this.writeOrder.push(sub);
      this.writeOrder.sort((a, b) => typeRank(a.typeUrl) - typeRank(b.typeUrl));
      if (served) this.deps.metrics.connected.inc({ type: metricType(type) });
      sub.initialize(req, this.deps.cache, this.deps.digests.get(type));
    } else if (req.response_nonce !== '') {
      if (req.response_nonce !== sub.nonceSent) return; // stale: an answer to a response already superseded
      sub.lastAck = { nonce: req.response_nonce, at: new Date() };
      if (sub.sentEventAt !== undefined) {
        this.deps.metrics.convergence.observe((this.deps.clock.now() - sub.sentEventAt) / 1000);
        sub.sentEventAt = undefined;
      }
      if (req.resource_names_subscribe.length === 0 && req.resource_names_unsubscribe.length === 0) return;
      sub.resubscribe(req);
    } else {
      sub.resubscribe(req);
    }
    if (sub.subscriptionCount() > MAX_WATCHED_NAMES) {
      this.fail({
        code: grpc.status.RESOURCE_EXHAUSTED,
        details: `more than ${MAX_WATCHED_NAMES} names watched for ${type}`,
      });
      return;
    }
    this.flush();
  }

  private nack(type: string, sub: TypeSubscription | undefined, req: DeltaDiscoveryRequest): void {
    // Kept and logged truncated: the full text can run to MAX_ERROR_DETAIL_BYTES.
    const message = clientText(req.error_detail?.message);
    this.deps.metrics.rejects.inc({ type: metricType(type) });
    this.deps.log.warn(
      {
        stream: this.id,
        node: clientText(this.node?.id),
        type: clientText(type),
        nonce: clientText(req.response_nonce),
        code: req.error_detail?.code,
        message,
      },
      'xDS response rejected (NACK)',
    );
    if (sub && req.response_nonce === sub.nonceSent) {
      sub.lastNack = { nonce: req.response_nonce, message, at: new Date() };
      sub.sentEventAt = undefined;
    }
  }

  /** Writes the next response, Address first, unless a write is still in flight. */
  private flush(): void {
    if (this.writing || this.closed || !this.node) return;
    const ctx = (this.takeContext ??= {
      cache: this.deps.cache,
      nodeName: this.node.nodeName,
      snapshots: this.deps.snapshots,
    });
    for (const sub of this.writeOrder) {
      if (!sub.hasWork()) continue;
      let release: (() => void) | undefined;
      if (sub.needsFullSync() && this.deps.snapshots.isLarge(sub.typeUrl)) {
        // Wait for a slot rather than skip ahead: Address must precede Authorization.
        release = this.deps.fullSyncs.tryAcquire(this.wake);
        if (!release) return;
      }
      const delta = sub.take(ctx);
      if (!delta) {
        release?.();
        continue;
      }
      const nonce = `${this.id}-${(++this.seq).toString(36)}`;
      const body =
        delta.shared ??
        encodeResponseBody({ typeUrl: sub.typeUrl, resources: delta.resources, removed: delta.removed });
      sub.nonceSent = nonce;
      sub.sentAt = new Date();
      sub.sentEventAt = delta.eventAt;
      this.writing = true;
      const started = this.deps.clock.now();
      this.deps.metrics.pushed(sub.typeUrl);
      this.slot = release;
      const onSlotStall = release && (() => this.giveSlotUp());
      const drained = this.deps.drains.track(this.transport, (reason) => this.cut(reason, body.length), onSlotStall);
      const written = (err?: Error | null) => {
        // The last byte has passed HTTP/2 flow control into the connection (see transport.ts).
        drained();
        this.freeSlot();
        this.leaveStalled();
        this.writing = false;
        if (err) {
          this.close(); // the HTTP/2 stream is gone; grpc-js reports it as the call's end or error
          return;
        }
        this.deps.metrics.sendTime.observe((this.deps.clock.now() - started) / 1000);
        this.flush();
      };
      if (this.writer && body.length >= DIRECT_WRITE_MIN_BYTES) {
        // grpc-js sends the response headers once, before its first message; a direct write needs them too.
        this.call.sendMetadata(new grpc.Metadata());
        this.writer.writeMessage(body.grpcFrame(nonce), written);
      } else this.call.write({ body, nonce } satisfies OutgoingResponse, written);
      return;
    }
  }

  private freeSlot(): void {
    const release = this.slot;
    this.slot = undefined;
    release?.();
  }

  /**
   * The response holding a slot made no progress for SLOT_STALL_RELEASE_MS: the slot goes to the
   * next waiting stream and the response is kept (until it drains or the stall cut), unless
   * MAX_STALLED_FULL_SYNCS are kept already: then false, and the DrainMonitor cuts this stream.
   */
  private giveSlotUp(): boolean {
    if (!this.slot) return true;
    const place = this.deps.fullSyncs.keepStalled();
    if (!place) return false;
    this.stalledPlace = place;
    this.freeSlot();
    return true;
  }

  private leaveStalled(): void {
    const leave = this.stalledPlace;
    this.stalledPlace = undefined;
    leave?.();
  }

  /** The client stopped taking the response in flight: reset the stream, freeing its bytes and slot. */
  private cut(reason: CutReason, bytes: number): void {
    const { stallTimeoutMs, drainDeadlineMs, slotStallMs } = this.deps.drains.settings;
    const why =
      reason === 'stalled'
        ? `no byte taken for ${stallTimeoutMs} ms`
        : reason === 'deadline'
          ? `not drained within ${drainDeadlineMs} ms`
          : `no byte taken for ${slotStallMs} ms while ${this.deps.fullSyncs.stalledLimit} stalled full responses are already kept (MAX_STALLED_FULL_SYNCS)`;
    this.deps.log.warn(
      { stream: this.id, node: clientText(this.node?.id), peer: this.peer, bytes, reason: why },
      'xDS client is not reading its responses; stream reset',
    );
    this.freeSlot();
    this.leaveStalled();
    // The drain's bound never rests on the hook: without a stream to reset, its connection goes.
    if (this.transport) this.transport.cancel();
    else this.deps.closeConnection(this.peer);
    this.close();
  }

  private fail(err: StreamError): void {
    if (this.closed) return;
    this.close();
    this.call.emit('error', err);
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.deps.fullSyncs.forget(this.wake);
    this.freeSlot();
    this.leaveStalled();
    for (const [type, sub] of this.subs) if (sub.served) this.deps.metrics.connected.dec({ type: metricType(type) });
    this.deps.onClose(this);
  }

  /** Whether a response is still being written (for /debug/ztunnels). */
  get busy(): boolean {
    return this.writing;
  }
}
