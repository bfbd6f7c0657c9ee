// Per-stream, per-type subscription state: what the client watches (wildcard or explicit names),
// the work pending for it as a set of names (latest state wins, never a queue of versions), and
// the ACK/NACK bookkeeping of the last response.

import { ADDRESS_TYPE_URL, ResourceCache, XdsResource, XdsTypeUrl } from '../../contract/xds-resources';
import type { DeltaDiscoveryRequest } from '../grpc/proto';
import { DeltaContent, PushBatch, SnapshotCache, wildcardDelta } from './push';
import { VersionDigest, sameDigest } from '../wire/version-digest';
import type { EncodedBody } from '../wire/wire';

const WILDCARD = '*';
/** A pending delta this large is treated as a full sync (it waits for a FullSyncGate slot). */
export const LARGE_DELTA_NAMES = 1_000;

export interface AckState {
  nonce: string;
  at: Date;
}
export interface NackState extends AckState {
  message: string;
}

export interface TakenDelta extends DeltaContent {
  /** Pre-encoded body shared with other streams of the same push. */
  shared?: EncodedBody;
  /** Oldest change behind this response (clock ms), for convergence time. */
  eventAt: number | undefined;
}

export interface TakeContext {
  cache: ResourceCache;
  /** NODE_NAME of the client (its workloads come with on-demand answers). */
  nodeName: string;
  /** Full state encoded once per cache generation, shared by streams. */
  snapshots?: SnapshotCache;
}

export class TypeSubscription {
  wildcard = false;
  /** Explicit subscriptions: requested keys and the resource names sent for them. */
  readonly watched = new Set<string>();

  // Pending work.
  private full = false;
  private readonly names = new Set<string>();
  /** On-demand keys to resolve, with the version the client already holds ("" when none). */
  private readonly keys = new Map<string, string>();
  private mustRespond = false;
  private shared: PushBatch | undefined;
  private eventAt: number | undefined;

  // Last response and its answer.
  nonceSent = '';
  /** When nonceSent was written (istiod's LastSendTime, shown by the sync status views). */
  sentAt: Date | undefined;
  sentEventAt: number | undefined;
  lastAck: AckState | undefined;
  lastNack: NackState | undefined;

  constructor(
    readonly typeUrl: string,
    /** False for types we do not serve: they get empty responses. */
    readonly served: boolean,
  ) {}

  /**
   * The first request of this type on the stream (istiod's wildcard rule, IRV joins the set).
   * `held` is the digest of the cache's current resources of this type, when the server keeps one.
   */
  initialize(req: DeltaDiscoveryRequest, cache: ResourceCache, held?: VersionDigest): void {
    const set = new Set(req.resource_names_subscribe);
    const irv = req.initial_resource_versions;
    for (const k of req.resource_names_unsubscribe) set.delete(k);
    this.wildcard = set.has(WILDCARD) || req.resource_names_subscribe.length === 0;
    this.mustRespond = true;
    if (this.wildcard && irv.size === 0) {
      this.full = true;
    } else if (this.wildcard) {
      // Compare the held versions now and keep only the differences: a reconnect storm must not
      // keep every client's 100k-entry map alive while it waits for a full-sync slot, and an
      // unchanged reconnect then owes nothing but an empty response. Equal digests mean the
      // client holds exactly the cache's set: no map is decoded at all.
      const type = this.typeUrl as XdsTypeUrl;
      if (this.served && !(held && sameDigest(held, irv.digest))) {
        const versions = irv.map();
        for (const r of cache.all(type)) if (versions.get(r.name) !== r.version) this.names.add(r.name);
        for (const name of versions.keys()) if (!cache.get(type, name)) this.names.add(name);
      }
    } else {
      // IRV names join the explicit subscriptions (istiod's rule).
      const versions = irv.map();
      for (const k of versions.keys()) if (!req.resource_names_unsubscribe.includes(k)) set.add(k);
      set.delete(WILDCARD);
      for (const key of set) this.keys.set(key, versions.get(key) ?? '');
    }
  }

  /** A later request without a nonce: subscription changes, always answered. */
  resubscribe(req: DeltaDiscoveryRequest): void {
    for (const key of req.resource_names_subscribe) {
      if (key === WILDCARD) {
        if (!this.wildcard) {
          this.wildcard = true;
          this.full = true;
          this.watched.clear();
        }
      } else if (!this.wildcard) {
        this.keys.set(key, '');
      }
    }
    for (const key of req.resource_names_unsubscribe) {
      if (key === WILDCARD) this.wildcard = false;
      this.watched.delete(key);
      this.keys.delete(key);
    }
    this.shared = undefined;
    this.mustRespond = true;
  }

  /** Merges a push's changed names; remembers when the pending set is exactly the push's. */
  addPush(batch: PushBatch): void {
    const changed = batch.request.changes.get(this.typeUrl);
    const full = batch.request.full && this.served;
    if (!full && (!changed || changed.size === 0)) return;
    const idle = !this.hasWork();
    this.shared = idle && !full && this.wildcard ? batch : undefined;
    if (full) this.full = true;
    if (changed) for (const n of changed) this.names.add(n);
    const at = batch.request.eventAt;
    this.eventAt = this.eventAt === undefined ? at : Math.min(this.eventAt, at);
  }

  /** The next response may carry most of the type's state (large; see FullSyncGate). */
  needsFullSync(): boolean {
    return this.served && this.wildcard && (this.full || this.names.size >= LARGE_DELTA_NAMES);
  }

  hasWork(): boolean {
    return this.mustRespond || this.full || this.names.size > 0 || this.keys.size > 0;
  }

  /** Explicit names watched or waiting to be resolved (bounded by MAX_WATCHED_NAMES). */
  subscriptionCount(): number {
    return this.watched.size + this.keys.size;
  }

  /** Pending names, for /debug/syncz. */
  pendingCount(): number {
    return this.names.size + this.keys.size + (this.full ? 1 : 0);
  }

  /** The content of the next response, or undefined when there is nothing to send. Clears pending work. */
  take(ctx: TakeContext): TakenDelta | undefined {
    if (!this.hasWork()) return undefined;
    const { cache, nodeName } = ctx;
    const eventAt = this.eventAt;
    let out: TakenDelta;
    const sharedDelta = this.shared?.sharedDelta(this.typeUrl);
    if (!this.served) out = { resources: [], removed: [], eventAt };
    else if (sharedDelta)
      out = { resources: sharedDelta.resources, removed: sharedDelta.removed, shared: sharedDelta.body, eventAt };
    else if (this.wildcard && this.full && this.names.size === 0 && ctx.snapshots) {
      const snap = ctx.snapshots.get(this.typeUrl);
      out = { resources: snap.resources, removed: [], shared: snap.body, eventAt };
    } else if (this.wildcard) out = { ...this.takeWildcard(cache), eventAt };
    else out = { ...this.takeExplicit(cache, nodeName), eventAt };
    const respond = this.mustRespond;
    this.full = false;
    // clear() reallocates a collection's table even when empty; this runs per stream per push.
    if (this.names.size > 0) this.names.clear();
    if (this.keys.size > 0) this.keys.clear();
    this.mustRespond = false;
    this.shared = undefined;
    this.eventAt = undefined;
    if (!respond && out.resources.length === 0 && out.removed.length === 0) return undefined;
    return out;
  }

  private takeWildcard(cache: ResourceCache): DeltaContent {
    const type = this.typeUrl as XdsTypeUrl;
    if (!this.full) return wildcardDelta(cache, type, this.names);
    const resources = [...cache.all(type)];
    // Names that changed while the full response waited, and no longer exist.
    const removed = [...this.names].filter((name) => !cache.get(type, name));
    return { resources, removed };
  }

  private takeExplicit(cache: ResourceCache, nodeName: string): DeltaContent {
    const type = this.typeUrl as XdsTypeUrl;
    const isAddress = type === ADDRESS_TYPE_URL;
    const selected = new Map<string, string>(); // name -> version the client holds
    const removed: string[] = [];
    const resolve = (key: string): string[] =>
      isAddress ? cache.resolveAddress(key) : cache.get(type, key) ? [key] : [];
    for (const [key, known] of this.keys) {
      const matches = resolve(key);
      for (const m of matches) if (!selected.has(m)) selected.set(m, m === key ? known : '');
      this.watched.add(key);
      // ztunnel wakes a lookup only on its exact key: a key that is not itself a resource name
      // is listed as removed (adds are applied first, so the matches still land).
      if (!cache.get(type, key)) removed.push(key);
    }
    const onNode =
      isAddress && nodeName !== '' && (this.mustRespond || this.names.size > 0)
        ? new Set(cache.workloadsOnNode(nodeName))
        : new Set<string>();
    if (this.mustRespond) for (const w of onNode) if (!selected.has(w)) selected.set(w, '');
    if (this.full) for (const w of this.watched) if (!selected.has(w)) selected.set(w, '');
    for (const name of this.names) {
      if (!this.watched.has(name) && !onNode.has(name)) continue;
      if (cache.get(type, name)) {
        if (!selected.has(name)) selected.set(name, '');
      } else {
        removed.push(name);
        this.watched.delete(name);
      }
    }
    const resources: XdsResource[] = [];
    for (const [name, known] of selected) {
      const r = cache.get(type, name);
      if (!r) continue;
      this.watched.add(name);
      if (r.version !== known) resources.push(r);
    }
    return { resources, removed: [...new Set(removed)] };
  }
}
