// Watch streams: chunked JSON lines of {type, object}. A watch from a resourceVersion replays the
// history after it, a watch without one starts with synthetic ADDED events for what exists, and a
// watch from a compacted resourceVersion gets one ERROR event carrying a 410 Status, then ends.

import type { ServerResponse } from 'node:http';
import type { Matcher } from './selectors';
import { apiVersionFor, resourceKey, type ServedResource } from './resources';
import { errors } from './status';
import type { Storage, StoredEvent, StoredObject, WatchEventType } from './storage';

export interface WatchRequest {
  resource: ServedResource;
  version: string;
  namespace?: string;
  matches: Matcher;
  /** Absent, "" or "0": start with the current state. */
  resourceVersion?: string;
  bookmarks: boolean;
  timeoutSeconds?: number;
}

interface ActiveWatch {
  req: WatchRequest;
  res: ServerResponse;
  key: string;
  timers: NodeJS.Timeout[];
  /** Open but sending nothing: no events, no bookmarks, no end at its timeout. */
  stalled?: boolean;
}

export class WatchHub {
  private readonly active = new Set<ActiveWatch>();

  constructor(
    private readonly storage: Storage,
    private readonly bookmarkIntervalMs: number,
  ) {
    storage.onEvent((event) => this.dispatch(event));
  }

  get count(): number {
    return this.active.size;
  }

  open(req: WatchRequest, res: ServerResponse): void {
    const key = resourceKey(req.resource.group, req.resource.plural);
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache',
    });
    res.flushHeaders();
    const rvText = req.resourceVersion ?? '';
    if (rvText === '' || rvText === '0') {
      for (const object of this.storage.list(key)) {
        if (this.inScope(req, object)) this.write(res, req, 'ADDED', object);
      }
    } else {
      const rv = Number(rvText);
      const missed = Number.isFinite(rv) ? this.storage.eventsSince(rv) : undefined;
      if (!missed) {
        res.end(
          JSON.stringify({ type: 'ERROR', object: errors.gone(rv, this.storage.oldestUsableRv()).toStatus() }) + '\n',
        );
        return;
      }
      for (const event of missed) if (event.resource === key) this.deliver(res, req, event);
    }
    const watch: ActiveWatch = { req, res, key, timers: [] };
    this.active.add(watch);
    res.on('close', () => this.close(watch));
    if (req.timeoutSeconds !== undefined && req.timeoutSeconds > 0) {
      watch.timers.push(setTimeout(() => res.end(), req.timeoutSeconds * 1000));
    }
    if (req.bookmarks) watch.timers.push(setInterval(() => this.bookmark(watch), this.bookmarkIntervalMs));
  }

  private close(watch: ActiveWatch): void {
    for (const t of watch.timers) clearTimeout(t);
    this.active.delete(watch);
  }

  private inScope(req: WatchRequest, object: StoredObject): boolean {
    if (req.namespace !== undefined && object.metadata.namespace !== req.namespace) return false;
    return req.matches(object);
  }

  private write(
    res: ServerResponse,
    req: WatchRequest,
    type: WatchEventType | 'BOOKMARK',
    object: StoredObject | Record<string, unknown>,
  ): void {
    const body = { ...object, apiVersion: apiVersionFor(req.resource, req.version), kind: req.resource.kind };
    res.write(JSON.stringify({ type, object: body }) + '\n');
  }

  /** A change seen through the watch's selectors: entering the selection is ADDED, leaving it DELETED. */
  private deliver(res: ServerResponse, req: WatchRequest, event: StoredEvent): void {
    const now = this.inScope(req, event.object);
    if (event.type !== 'MODIFIED') {
      if (now) this.write(res, req, event.type, event.object);
      return;
    }
    const before = event.old !== undefined && this.inScope(req, event.old);
    if (now && before) this.write(res, req, 'MODIFIED', event.object);
    else if (now) this.write(res, req, 'ADDED', event.object);
    else if (before) this.write(res, req, 'DELETED', event.object);
  }

  private dispatch(event: StoredEvent): void {
    for (const watch of this.active)
      if (watch.key === event.resource && !watch.stalled) this.deliver(watch.res, watch.req, event);
  }

  private bookmark(watch: ActiveWatch): void {
    this.write(watch.res, watch.req, 'BOOKMARK', { metadata: { resourceVersion: String(this.storage.currentRv()) } });
  }

  /** Sends a BOOKMARK now on every watch that asked for them. */
  bookmarkAll(): void {
    for (const watch of this.active) if (watch.req.bookmarks && !watch.stalled) this.bookmark(watch);
  }

  /** Every open watch goes silent but stays open, as behind a proxy that lost the other side; later watches work. */
  stallAll(): void {
    for (const watch of this.active) {
      watch.stalled = true;
      for (const t of watch.timers) clearTimeout(t);
    }
  }

  /** The open watches: resource (group/plural key) and the timeoutSeconds each asked for. */
  describeOpen(): { resource: string; timeoutSeconds: number | undefined }[] {
    return [...this.active].map((w) => ({ resource: w.key, timeoutSeconds: w.req.timeoutSeconds }));
  }

  /** Cuts every watch connection without a clean end, as a crashed server or a proxy would. */
  dropAll(filter?: (key: string) => boolean): void {
    for (const watch of [...this.active]) {
      if (filter && !filter(watch.key)) continue;
      this.close(watch);
      watch.res.socket?.destroy();
    }
  }

  /** Ends watches cleanly (the server's own timeout). */
  endAll(): void {
    for (const watch of [...this.active]) {
      this.close(watch);
      watch.res.end();
    }
  }
}
