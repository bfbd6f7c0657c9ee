// One informer per kind: client-node's ListWatch runs the loop (list, then watch from the list's
// resourceVersion, re-list on 410 Gone), with what it leaves to its user: reconnecting with backoff
// after errors, paging the list, slimming every object, turning a kind whose CRD is not installed
// into "no objects", and batching events for the store.
//
// The cache of objects is ours, not the ListWatch's: it applied a whole list to its cache and
// called back once per object in one synchronous run after the last page (a stall that grows with
// the list, in which /ready and the CA answered nobody). Here each page is diffed against the cache
// as it arrives; the ListWatch gets an empty list and, for each watch event, only the event's
// resourceVersion (as a bookmark), which is all its loop needs to resume the watch.

import { ListWatch, Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { KINDS, type WatchKindId } from '../kinds';
import { scopedLogger } from '../../log/logger';
import { keyOf, type KubeObject } from '../types';
import { backoffDelay, type BackoffPolicy } from './backoff';
import { KubeApiError, resourcePath, type KubeClient } from './client';
import { slimObject } from './slim';
import { sharedApplyPacer, type ApplyPacer, type PacedSource } from './apply-pacer';
import {
  MIN_WATCH_TIMEOUT_SECONDS,
  randomWatchTimeoutSeconds,
  StallWatchdog,
  WATCH_STALL_MARGIN_MS,
} from './watch-liveness';

const log = scopedLogger('kube');

/** Objects per list page. */
export const LIST_PAGE_SIZE = 500;

export interface WatchTiming {
  /** Backoff after a failed list or watch. */
  backoff: BackoffPolicy;
  /** How often a kind whose CRD is missing is looked for again. */
  missingKindRetryMs: number;
  /** A watch that ends this soon without delivering anything counts as a failure. */
  quickFailMs: number;
  /**
   * The least server-side watch timeout: each watch asks for a random one in [this, 2 x this), as
   * client-go does; the informer then resumes from its resourceVersion.
   */
  watchTimeoutSeconds: number;
  /** A watch silent for its timeout plus this long is aborted and opened again (watch-liveness.ts). */
  stallMarginMs: number;
}

export const DEFAULT_WATCH_TIMING: WatchTiming = {
  backoff: { initialMs: 500, maxMs: 30_000 },
  missingKindRetryMs: 30_000,
  quickFailMs: 1_000,
  watchTimeoutSeconds: MIN_WATCH_TIMEOUT_SECONDS,
  stallMarginMs: WATCH_STALL_MARGIN_MS,
};

export interface KindStatus {
  synced: boolean;
  /** Objects in the informer cache (before the discovery namespace filter). */
  objects: number;
  resourceVersion: string;
  consecutiveFailures: number;
  /** The kind's CRD is not installed. */
  missing: boolean;
  /** Watches aborted by the watchdog for sending nothing (no event, no bookmark) past their timeout. */
  stalledWatches: number;
  /** The last list or watch failure since the last success (a 403 names the resource refused), for /debug. */
  lastError?: string;
}

export interface Change {
  object: KubeObject;
  deleted?: boolean;
}

export interface KindWatcherOptions {
  client: KubeClient;
  kind: WatchKindId;
  /** Watch one namespace only. */
  namespace?: string;
  fieldSelector?: string;
  /** Watch only objects with these labels (a controller's own small watch, e.g. the istio-cni pods). */
  labelSelector?: string;
  timing: WatchTiming;
  onChanges(changes: Change[]): void;
  onSynced(): void;
  /** Paces how many buffered changes reach onChanges per turn; default the process's shared pacer. */
  pacer?: ApplyPacer;
  /** Takes credentials out of an error before it is logged or shown (a remote cluster's, remote-secret.ts). */
  redact?: (text: string) => string;
}

type WatchCallback = (phase: string, apiObj: unknown, watchObj?: unknown) => void;

/** client-node's Watch, with bookmarks and a timeout asked for, objects slimmed, and backoff. */
class SlimmingWatch extends Watch {
  constructor(
    config: KubeConfig,
    private readonly owner: KindWatcher,
  ) {
    super(config);
  }

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: WatchCallback,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    await this.owner.beforeWatch();
    if (this.owner.stopped) return new AbortController();
    const timeoutSeconds = randomWatchTimeoutSeconds(this.owner.timing.watchTimeoutSeconds);
    const query = { ...queryParams, allowWatchBookmarks: true, timeoutSeconds };
    this.owner.watchStarted();
    const watchState = { ended: false };
    try {
      const controller = await super.watch(
        path,
        query,
        (phase, obj, raw) => {
          const isObject = phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED';
          this.owner.watchDelivered();
          if (!isObject) callback(phase, obj, raw);
          else if (wellFormed(obj, this.owner.kind)) {
            const slim = this.owner.slim(obj);
            this.owner.watched(slim, phase === 'DELETED');
            // The ListWatch keeps no objects; it needs the resourceVersion to resume from.
            const resourceVersion = slim.metadata.resourceVersion;
            if (resourceVersion) callback('BOOKMARK', { metadata: { resourceVersion } }, raw);
          }
        },
        (err) => {
          watchState.ended = true;
          this.owner.watchEnded(err);
          done(err);
        },
      );
      if (!watchState.ended) this.owner.watchOpened(controller, timeoutSeconds);
      return controller;
    } catch (err) {
      // e.g. the credentials could not be read: report it like any failed watch, never reject.
      done(err);
      return new AbortController();
    }
  }
}

/**
 * An object without a name cannot be keyed; it is skipped (and logged) rather than crash the
 * informer. A Secret's text is never logged: its data are credentials.
 */
function wellFormed(o: unknown, kind: WatchKindId): o is KubeObject {
  // Untrusted JSON: metadata itself may be missing, whatever KubeObject's type says.
  const name =
    typeof o === 'object' && o !== null ? (o as { metadata?: { name?: unknown } }).metadata?.name : undefined;
  const ok = typeof name === 'string' && name !== '';
  if (!ok)
    log.warn(
      { kind, object: kind === 'Secret' ? '(not shown)' : (JSON.stringify(o) as string | undefined)?.slice(0, 200) },
      'skipping an object without metadata.name',
    );
  return ok;
}

export class KindWatcher implements PacedSource {
  stopped = false;
  readonly timing: WatchTiming;
  private informer: ListWatch<KubernetesObject>;
  /** Every object of the kind as last listed or watched, slimmed, by namespace/name. */
  private readonly cache = new Map<string, KubeObject>();
  /** Changes not yet handed to the store, from `pendingHead` on. */
  private pending: Change[] = [];
  private pendingHead = 0;
  private listDone = false;
  private synced = false;
  private failures = 0;
  private quickEnds = 0;
  private missingLogged = false;
  private watchStartedAt = 0;
  private deliveredSinceStart = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private backoffWait: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  private openWatch: AbortController | undefined;
  private stalls = 0;
  private lastError: string | undefined;
  private readonly watchdog = new StallWatchdog((silentForMs) => this.watchStalled(silentForMs));

  constructor(private readonly options: KindWatcherOptions) {
    this.timing = options.timing;
    this.informer = this.makeInformer();
  }

  get kind(): WatchKindId {
    return this.options.kind;
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  private makeInformer(): ListWatch<KubernetesObject> {
    const { client, kind, namespace, fieldSelector, labelSelector } = this.options;
    const info = KINDS[kind];
    const path = resourcePath({
      group: info.group,
      version: info.version,
      plural: info.plural,
      ...(namespace !== undefined ? { namespace } : {}),
    });
    const watch = new SlimmingWatch(client.kubeConfig, this);
    const informer = new ListWatch<KubernetesObject>(
      path,
      watch,
      async () => {
        const resourceVersion = await this.listAll(path);
        // No items: listAll put them in our cache page by page; the ListWatch needs only where to watch from.
        const listed = { metadata: { ...(resourceVersion !== undefined ? { resourceVersion } : {}) }, items: [] };
        return listed;
      },
      false,
      labelSelector,
      fieldSelector,
    );
    informer.on('error', (err: unknown) => this.onError(err));
    return informer;
  }

  start(): void {
    this.stopped = false;
    this.restart();
  }

  private restart(): void {
    this.informer.start().catch((err: unknown) => this.onError(err));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watchdog.clear();
    clearTimeout(this.retryTimer);
    if (this.backoffWait) {
      clearTimeout(this.backoffWait.timer);
      this.backoffWait.resolve();
    }
    await this.informer.stop();
  }

  /** For /debug: whether the initial list is in, where the watch resumes, and recent trouble. */
  status(): KindStatus {
    return {
      synced: this.synced,
      objects: this.cache.size,
      resourceVersion: this.informer.latestResourceVersion(),
      consecutiveFailures: this.failures,
      missing: this.missingLogged,
      stalledWatches: this.stalls,
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }

  /** Every object of the kind as last seen, slimmed. */
  list(): KubeObject[] {
    return [...this.cache.values()];
  }

  /** A watch event: the cache and the buffer follow it. */
  watched(object: KubeObject, deleted: boolean): void {
    const key = keyOf(object);
    if (deleted) {
      const old = this.cache.get(key);
      if (!old) return;
      this.cache.delete(key);
      this.buffer({ object: old, deleted: true });
    } else this.listedOrWatched(key, object);
  }

  /** Adds or updates a cached object, buffering the change unless its resourceVersion is the one cached. */
  private listedOrWatched(key: string, object: KubeObject): void {
    const old = this.cache.get(key);
    const rv = old?.metadata.resourceVersion;
    if (old && rv !== undefined && rv === object.metadata.resourceVersion) return;
    this.cache.set(key, object);
    this.buffer({ object });
  }

  slim(o: KubeObject): KubeObject {
    return slimObject(this.options.kind, o);
  }

  /**
   * Lists every page, applying each to the cache as it arrives; objects the list no longer has are
   * deleted at the end. Returns the list's resourceVersion, where the watch starts.
   */
  private async listAll(path: string): Promise<string | undefined> {
    const listed = new Set<string>();
    let resourceVersion: string | undefined;
    let cont: string | undefined;
    do {
      const page = await this.options.client.call<{
        metadata?: { resourceVersion?: string; continue?: string };
        items?: KubeObject[];
      }>({
        method: 'GET',
        path,
        query: {
          limit: LIST_PAGE_SIZE,
          continue: cont,
          fieldSelector: this.options.fieldSelector,
          labelSelector: this.options.labelSelector,
        },
      });
      for (const item of page.items ?? [])
        if (wellFormed(item, this.options.kind)) {
          const object = this.slim(item);
          const key = keyOf(object);
          listed.add(key);
          this.listedOrWatched(key, object);
        }
      resourceVersion = page.metadata?.resourceVersion;
      cont = page.metadata?.continue || undefined;
    } while (cont);
    for (const [key, object] of this.cache)
      if (!listed.has(key)) {
        this.cache.delete(key);
        this.buffer({ object, deleted: true });
      }
    this.failures = 0;
    this.lastError = undefined;
    this.missingLogged = false;
    this.listDone = true;
    this.scheduleFlush();
    return resourceVersion;
  }

  private buffer(change: Change): void {
    this.pending.push(change);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    (this.options.pacer ?? sharedApplyPacer).request(this);
  }

  hasPending(): boolean {
    return this.pending.length > this.pendingHead;
  }

  /**
   * Hands at most `max` buffered changes to the store (the pacer decides how many per turn, so
   * other I/O is served in between). The kind counts as synced only once the whole list has been
   * handed over.
   */
  drain(max: number): number {
    const end = Math.min(this.pending.length, this.pendingHead + Math.max(1, max));
    const changes =
      this.pendingHead === 0 && end === this.pending.length ? this.pending : this.pending.slice(this.pendingHead, end);
    this.pendingHead = end;
    if (this.pendingHead === this.pending.length) {
      this.pending = [];
      this.pendingHead = 0;
    }
    if (changes.length > 0) this.options.onChanges(changes);
    if (this.pending.length === 0 && this.listDone && !this.synced) this.markSynced();
    return changes.length;
  }

  private markSynced(): void {
    this.synced = true;
    this.options.onSynced();
  }

  private onError(err: unknown): void {
    if (this.stopped) return;
    const kind = this.options.kind;
    // List errors are KubeApiErrors; client-node's watch reports an HTTP status as statusCode.
    const status = err instanceof KubeApiError ? err.status : (err as { statusCode?: number } | undefined)?.statusCode;
    if (status === 404 && KINDS[kind].crd) {
      this.kindMissing();
      return;
    }
    this.failures++;
    const delay = backoffDelay(this.failures, this.timing.backoff);
    const level = this.failures === 1 ? 'warn' : 'debug';
    // Watch errors are not always Errors (client-node passes some as plain objects).
    const message = (err as { message?: unknown } | null | undefined)?.message;
    const text = (this.options.redact ?? String)(typeof message === 'string' ? message : String(err));
    this.lastError =
      status === 403 ? `forbidden (HTTP 403): the credentials may not list or watch ${kind}: ${text}` : text;
    log[level]({ kind, attempt: this.failures, retryInMs: delay, err: this.lastError }, 'list/watch failed; retrying');
    this.retryTimer = setTimeout(() => {
      if (!this.stopped) this.restart();
    }, delay);
  }

  /** The CRD is not installed: no objects of the kind, synced, looked for again later. */
  private kindMissing(): void {
    const kind = this.options.kind;
    if (!this.missingLogged) {
      log.warn(
        { kind, retryInMs: this.timing.missingKindRetryMs },
        `${kind} is not served by the API server (CRD not installed); treating it as empty`,
      );
      this.missingLogged = true;
    }
    // Through the buffer, so these deletes come after any event the old informer left in it.
    for (const object of this.cache.values()) this.buffer({ object, deleted: true });
    this.cache.clear();
    // A fresh informer forgets the objects and the resourceVersion of the vanished kind.
    this.informer = this.makeInformer();
    if (!this.synced) this.markSynced();
    this.retryTimer = setTimeout(() => {
      if (!this.stopped) this.restart();
    }, this.timing.missingKindRetryMs);
  }

  // ---- called by SlimmingWatch ----

  async beforeWatch(): Promise<void> {
    if (this.quickEnds === 0 || this.stopped) return;
    const delay = backoffDelay(this.quickEnds, this.timing.backoff);
    await new Promise<void>((resolve) => {
      this.backoffWait = { timer: setTimeout(resolve, delay), resolve };
    });
    this.backoffWait = undefined;
  }

  watchStarted(): void {
    this.watchStartedAt = Date.now();
    this.deliveredSinceStart = false;
  }

  /** The watch is open: from now on it must send something (an event or a bookmark) within its window. */
  watchOpened(controller: AbortController, timeoutSeconds: number): void {
    this.openWatch = controller;
    this.watchdog.arm(timeoutSeconds * 1000 + this.timing.stallMarginMs);
  }

  /**
   * Nothing arrived for the watch's timeout plus the margin, and the API server did not end it:
   * abort it. The informer reports the abort as a failed watch and opens a new one from its
   * resourceVersion (a re-list only if that is gone, 410), as client-go's reflector does.
   */
  private watchStalled(silentForMs: number): void {
    if (this.stopped) return;
    this.stalls++;
    log.warn({ kind: this.options.kind, silentForMs }, 'watch sent nothing (no event, no bookmark); restarting it');
    this.openWatch?.abort();
  }

  watchDelivered(): void {
    this.watchdog.touch();
    this.deliveredSinceStart = true;
    this.failures = 0;
    this.lastError = undefined;
    this.quickEnds = 0;
  }

  /** Errors are retried by onError; a clean end is resumed by the informer at once, so a watch
   * that ends at once without a single event would be retried in a tight loop without this. */
  watchEnded(err: unknown): void {
    this.watchdog.clear();
    this.openWatch = undefined;
    if (err) return;
    if (!this.deliveredSinceStart && Date.now() - this.watchStartedAt < this.timing.quickFailMs) this.quickEnds++;
    else this.quickEnds = 0;
  }
}
