// One push fanned out to every stream. The part of a response that every wildcard stream gets
// for this push (type, resources, removals) is encoded once; each stream appends its nonce.

import type { ResourceCache, XdsResource, XdsTypeUrl } from './cache';
import type { PushRequest } from './debounce';
import { encodeResponseBody } from './wire';

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
  body: Buffer;
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
