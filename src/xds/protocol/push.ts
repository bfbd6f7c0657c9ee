// One push fanned out to every stream. The part of a response that every wildcard stream gets
// for this push (type, resources, removals) is encoded once; each stream appends its nonce.

import type { ResourceCache, XdsResource, XdsTypeUrl } from '../../contract/xds-resources';
import type { PushRequest } from './debounce';
import { EncodedBody, encodeResponseBody } from '../wire/wire';

export interface DeltaContent {
  resources: XdsResource[];
  removed: string[];
}

/** Latest state of changed names for a client that holds everything: present → sent, gone → removed. */
export function wildcardDelta(cache: ResourceCache, typeUrl: string, names: Iterable<string>): DeltaContent {
  const resources: XdsResource[] = [];
  const removed: string[] = [];
  for (const name of names) {
    const r = cache.get(typeUrl as XdsTypeUrl, name);
    if (r) resources.push(r);
    else removed.push(name);
  }
  return { resources, removed };
}

export interface EncodedDelta extends DeltaContent {
  body: EncodedBody;
}

export class PushBatch {
  private readonly bodies = new Map<string, EncodedDelta>();
  /** True only while the push is being fanned out; later the cache may have moved on. */
  private live = true;

  constructor(
    readonly request: PushRequest,
    private readonly cache: ResourceCache,
  ) {}

  /** The shared body for streams whose pending names for `typeUrl` are exactly this push's. */
  sharedDelta(typeUrl: string): EncodedDelta | undefined {
    if (!this.live) return undefined;
    let enc = this.bodies.get(typeUrl);
    if (!enc) {
      const delta = wildcardDelta(this.cache, typeUrl, this.request.changes.get(typeUrl) ?? []);
      enc = { ...delta, body: encodeResponseBody({ typeUrl, ...delta }) };
      this.bodies.set(typeUrl, enc);
    }
    return enc;
  }

  /** Ends the fan-out: streams that write later build their own response from the latest state. */
  finish(): void {
    this.live = false;
    this.bodies.clear();
  }
}

/**
 * The full state of a type, encoded once per cache generation: every fresh wildcard stream (and
 * every stream of a full push) gets the same bytes, so 1,000 connecting ztunnels cost one encoding.
 */
export class SnapshotCache {
  private readonly bodies = new Map<string, EncodedDelta>();

  constructor(private readonly cache: ResourceCache) {}

  /** The cache changed: the next full response is encoded again. */
  invalidate(): void {
    this.bodies.clear();
  }

  /** Whether a full response of this type is big enough to need a FullSyncGate slot. */
  isLarge(typeUrl: string): boolean {
    return this.get(typeUrl).body.length >= GATED_FULL_SYNC_BYTES;
  }

  get(typeUrl: string): EncodedDelta {
    let enc = this.bodies.get(typeUrl);
    if (!enc) {
      const resources = [...this.cache.all(typeUrl as XdsTypeUrl)];
      enc = { resources, removed: [], body: encodeResponseBody({ typeUrl, resources, removed: [] }) };
      this.bodies.set(typeUrl, enc);
    }
    return enc;
  }
}

/**
 * Limits how many full-state responses are in flight at once. A full response for 100k workloads
 * is ~17 MB per stream; without a limit 1,000 reconnecting clients would hold 1,000 copies in
 * gRPC, HTTP/2 and TLS buffers at once. A slot is released when the response's last byte has
 * passed HTTP/2 flow control into the connection (the write callback: see transport.ts), so a
 * client that reads but never answers holds it only for the transfer; one that stops reading
 * gives its slot up after SLOT_STALL_RELEASE_MS (see MAX_STALLED_FULL_SYNCS) and is cut by the
 * DrainMonitor (drain.ts) after RESPONSE_STALL_TIMEOUT_MS. FULL_SYNC_SLOT_TIMEOUT_MS is a backstop
 * that no stream should reach: the drain deadline cuts a trickling client first.
 */
export const MAX_CONCURRENT_FULL_SYNCS = 8;
export const FULL_SYNC_SLOT_TIMEOUT_MS = 30_000;
/**
 * Full responses kept after giving their slot up for lack of progress (SLOT_STALL_RELEASE_MS),
 * until they drain or are cut at RESPONSE_STALL_TIMEOUT_MS. Memory bound: at most
 * MAX_CONCURRENT_FULL_SYNCS + MAX_STALLED_FULL_SYNCS full responses are buffered at once, twice
 * the bound without the early release (16 × ~17 MB at 100k workloads), and each stalled one for at
 * most the stall timeout. A slot holder that stalls while this many are kept is cut at once: that
 * many clients stopping within one stall timeout is an outage of theirs, and cutting them costs
 * each a reconnect, whereas keeping its slot would make every other node wait.
 */
export const MAX_STALLED_FULL_SYNCS = MAX_CONCURRENT_FULL_SYNCS;
/** Full responses of types smaller than this (empty policy lists, small meshes) need no slot. */
export const GATED_FULL_SYNC_BYTES = 1024 * 1024;

export class FullSyncGate {
  private inUse = 0;
  private stalledKept = 0;
  private readonly waiting = new Set<() => void>();

  constructor(
    readonly limit: number = MAX_CONCURRENT_FULL_SYNCS,
    private readonly slotTimeoutMs: number = FULL_SYNC_SLOT_TIMEOUT_MS,
    readonly stalledLimit: number = MAX_STALLED_FULL_SYNCS,
  ) {}

  /**
   * Counts a stalled response kept without a slot; returns the function to call once it drains or
   * is cut, or undefined when stalledLimit are kept already (the caller must cut it instead).
   */
  keepStalled(): (() => void) | undefined {
    if (this.stalledKept >= this.stalledLimit) return undefined;
    this.stalledKept++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.stalledKept--;
    };
  }

  /** Takes a slot, or queues `wake` to be called when one frees and returns undefined. */
  tryAcquire(wake: () => void): (() => void) | undefined {
    if (this.inUse >= this.limit) {
      this.waiting.add(wake);
      return undefined;
    }
    this.waiting.delete(wake);
    this.inUse++;
    let released = false;
    const timer = setTimeout(() => release(), this.slotTimeoutMs);
    timer.unref();
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      this.inUse--;
      const next = this.waiting.values().next();
      if (!next.done) {
        this.waiting.delete(next.value);
        next.value();
      }
    };
    return release;
  }

  /** A stream that closes stops waiting. */
  forget(wake: () => void): void {
    this.waiting.delete(wake);
  }

  get active(): number {
    return this.inUse;
  }

  get queued(): number {
    return this.waiting.size;
  }

  /** Stalled responses kept without a slot. */
  get stalled(): number {
    return this.stalledKept;
  }
}
