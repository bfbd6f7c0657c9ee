// Removes the istio-cni readiness taint from nodes whose istio-cni pod is Ready (istiod's
// NodeUntaintController). Nodes come from the shared store, the istio-cni pods from their own
// (cni-pods.ts); a change to either queues the node it concerns. Each node is handled by one
// worker at a time: the rule is checked on the stores, then the node is read fresh and patched
// with a JSON patch whose `test` op fails if its taints changed since that read. A failed test
// (another writer was first), a conflict or any other failure is retried from a fresh read with
// backoff, at most UNTAINT_MAX_ATTEMPTS times; then the node is left until it or its istio-cni pod
// changes. Every failure is logged at warn and counted, so a refusal (RBAC, an admission webhook)
// shows without costing the API server a request per node every minute forever.

import type { Counter } from 'prom-client';
import { scopedLogger } from '../../log/logger';
import { backoffDelay, type BackoffPolicy } from '../../store/kube/backoff';
import { KubeApiError } from '../../store/kube/client';
import { isNotFound, type KubeWriter, type ObjectRef } from '../../store/kube/writes';
import type { KubeObject, ObjectStore } from '../../store/types';
import { CNI_PODS_BY_NODE, podNodeName } from './cni-pods';
import { taintRemovalPatch, taintsOf, untaintDecision, type UntaintRule } from './decision';

const log = scopedLogger('untaint');

/**
 * Retry delays per node. A failed `test` op means another writer changed the taints a moment ago,
 * so the first retry comes soon; an API server that keeps refusing (RBAC, an admission webhook)
 * is asked at most once a minute per node.
 */
export const UNTAINT_BACKOFF: BackoffPolicy = { initialMs: 200, maxMs: 60_000 };

/**
 * Attempts per node before giving up until the node or its istio-cni pod changes (istiod's queue
 * allows 5). A refusal that lasts is an operator's problem to fix; retrying it forever only costs
 * the API server, and the change that fixes it (or any change of the node) brings the node back.
 */
export const UNTAINT_MAX_ATTEMPTS = 5;

/** The metric of failed attempts, by HTTP status ('error' when the API server gave none). */
export const UNTAINT_FAILURES_METRIC = 'istiod_ts_node_untaint_failures_total';

/**
 * Nodes handled at once. A cluster that boots many nodes together is untainted in parallel, while
 * a burst of node events costs the API server at most this many GET+PATCH pairs in flight.
 */
export const UNTAINT_CONCURRENCY = 4;

const NODES = { group: '', version: 'v1', plural: 'nodes' };

type Outcome = 'done' | 'retry';

export interface NodeUntaintControllerOptions {
  /** Where Nodes are read (the shared store). */
  nodes: ObjectStore;
  /** The istio-cni pods, indexed by CNI_PODS_BY_NODE (CniPodWatch's store). */
  cniPods: ObjectStore;
  /** The one write path: a fresh GET of the node, then the JSON patch. */
  writer: Pick<KubeWriter, 'get' | 'patch'>;
  rule: UntaintRule;
  backoff?: BackoffPolicy;
  concurrency?: number;
  maxAttempts?: number;
  /** Counts each failed attempt by `code` (UNTAINT_FAILURES_METRIC). */
  failures?: Counter<'code'>;
}

/** A change the API server refused because the object moved on: retry from a fresh read. */
function movedOn(err: unknown): boolean {
  // 422: a JSON patch `test` op failed; 409: a conflict.
  return err instanceof KubeApiError && (err.status === 422 || err.status === 409);
}

export class NodeUntaintController {
  private readonly backoff: BackoffPolicy;
  private readonly concurrency: number;
  private readonly maxAttempts: number;
  /** Nodes waiting for a worker, in arrival order; a node is queued at most once. */
  private readonly queued = new Set<string>();
  /** Nodes a worker is handling, with the promise that ends when it is done. */
  private readonly active = new Map<string, Promise<void>>();
  /** Nodes that changed while a worker had them: handled again afterwards. */
  private readonly dirty = new Set<string>();
  /** Nodes waiting out a backoff, with their failed attempts so far. */
  private readonly retries = new Map<string, { attempts: number; timer?: NodeJS.Timeout }>();
  private unsubscribe: (() => void)[] = [];
  private stopped = false;
  /**
   * Aborted on stop: a read or patch still retrying when the leadership ends is cancelled, so no
   * write starts after the lock may have passed to another replica.
   */
  private readonly cancel = new AbortController();

  constructor(private readonly options: NodeUntaintControllerOptions) {
    this.backoff = options.backoff ?? UNTAINT_BACKOFF;
    this.concurrency = Math.max(1, options.concurrency ?? UNTAINT_CONCURRENCY);
    this.maxAttempts = Math.max(1, options.maxAttempts ?? UNTAINT_MAX_ATTEMPTS);
  }

  start(): void {
    const { nodes, cniPods, rule } = this.options;
    this.unsubscribe.push(
      nodes.subscribe((events) => {
        for (const e of events) {
          if (e.kind !== 'Node') continue;
          if (e.type === 'delete') this.forget(e.object.metadata.name);
          else if (this.carriesTaint(e.object)) this.enqueue(e.object.metadata.name);
        }
      }),
      cniPods.subscribe((events) => {
        for (const e of events) {
          const node = e.kind === 'Pod' && e.type !== 'delete' ? podNodeName(e.object) : undefined;
          if (node !== undefined) this.enqueue(node);
        }
      }),
    );
    log.info({ taint: rule.taintKey, cniNamespace: rule.cniNamespace }, 'node untaint controller started');
    // Pods already in the cni store raised no event for us; their nodes are looked at once now.
    for (const pod of cniPods.list('Pod')) {
      const node = podNodeName(pod);
      if (node !== undefined) this.enqueue(node);
    }
  }

  /** Stops taking work; resolves once no worker can write any more. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancel.abort();
    for (const off of this.unsubscribe.splice(0)) off();
    for (const retry of this.retries.values()) clearTimeout(retry.timer);
    this.retries.clear();
    this.queued.clear();
    this.dirty.clear();
    await Promise.all(this.active.values());
  }

  /** Nodes given up on since start (each until it or its istio-cni pod changes). */
  givenUp = 0;

  /** For tests and /debug: nodes queued, being handled, and waiting out a backoff. */
  pending(): { queued: number; active: number; retrying: number } {
    return { queued: this.queued.size, active: this.active.size, retrying: this.retries.size };
  }

  private carriesTaint(node: KubeObject): boolean {
    return taintsOf(node).some((t) => t.key === this.options.rule.taintKey);
  }

  private enqueue(name: string): void {
    if (this.stopped) return;
    // A node waiting out a backoff is looked at when its timer fires, with what the stores hold then.
    if (this.retries.get(name)?.timer !== undefined) return;
    if (this.active.has(name)) {
      this.dirty.add(name);
      return;
    }
    this.queued.add(name);
    this.pump();
  }

  private forget(name: string): void {
    this.queued.delete(name);
    this.dirty.delete(name);
    clearTimeout(this.retries.get(name)?.timer);
    this.retries.delete(name);
  }

  private pump(): void {
    for (const name of this.queued) {
      if (this.active.size >= this.concurrency || this.stopped) return;
      this.queued.delete(name);
      // `then` runs after this turn, so the entry below exists before finish() removes it.
      this.active.set(
        name,
        this.work(name).then((outcome) => this.finish(name, outcome)),
      );
    }
  }

  private async work(name: string): Promise<Outcome> {
    try {
      return await this.reconcile(name);
    } catch (err) {
      // Cancelled by stop(): nothing failed, and finish() retries nothing once stopped.
      if (this.stopped) return 'retry';
      const attempt = (this.retries.get(name)?.attempts ?? 0) + 1;
      const code = err instanceof KubeApiError ? err.status : undefined;
      this.options.failures?.inc({ code: code === undefined ? 'error' : String(code) });
      log.warn(
        {
          node: name,
          attempt,
          maxAttempts: this.maxAttempts,
          ...(code !== undefined ? { code } : {}),
          err: (err as Error).message,
        },
        attempt < this.maxAttempts
          ? `removing taint ${this.options.rule.taintKey} failed; retrying`
          : `removing taint ${this.options.rule.taintKey} failed; giving up until the node or its istio-cni pod changes`,
      );
      return 'retry';
    }
  }

  private finish(name: string, outcome: Outcome): void {
    this.active.delete(name);
    if (this.stopped) return;
    if (outcome === 'retry') {
      const changed = this.dirty.delete(name);
      // Given up: a change that came during the last attempt is the change that brings it back.
      if (!this.retryLater(name) && changed) this.queued.add(name);
    } else {
      this.retries.delete(name);
      if (this.dirty.delete(name)) this.queued.add(name);
    }
    this.pump();
  }

  /** Schedules the next attempt; false when the attempts are spent and the node is left alone. */
  private retryLater(name: string): boolean {
    const retry = this.retries.get(name) ?? { attempts: 0 };
    retry.attempts++;
    if (retry.attempts >= this.maxAttempts) {
      // Left alone: the next event of the node or its istio-cni pod queues it with a fresh count.
      this.retries.delete(name);
      this.givenUp++;
      return false;
    }
    const delay = backoffDelay(retry.attempts, this.backoff);
    retry.timer = setTimeout(() => {
      retry.timer = undefined;
      this.enqueue(name);
    }, delay);
    retry.timer.unref();
    this.retries.set(name, retry);
    return true;
  }

  /** One look at a node: 'retry' when the taint should go but the write did not land. */
  private async reconcile(name: string): Promise<Outcome> {
    const { nodes, cniPods, writer, rule } = this.options;
    const node = nodes.get('Node', undefined, name);
    if (!node) return 'done';
    const decision = untaintDecision(node, cniPods.byIndex('Pod', CNI_PODS_BY_NODE, name), rule);
    if (!decision.remove) return 'done';

    // The store may lag: the patch is built on a fresh read and guarded by a `test` of what it read.
    const ref: ObjectRef = { ...NODES, name };
    const fresh = await writer.get(ref, { signal: this.cancel.signal });
    if (!fresh) return 'done';
    // A node deleted and created again under the same name: its own store event brings it back here.
    if (node.metadata.uid !== undefined && fresh.metadata.uid !== node.metadata.uid) return 'done';
    const ops = taintRemovalPatch(taintsOf(fresh), rule.taintKey);
    if (!ops) return 'done';
    if (this.stopped) return 'done';
    try {
      await writer.patch(ref, { type: 'json', ops }, { signal: this.cancel.signal });
    } catch (err) {
      if (isNotFound(err)) return 'done';
      if (!movedOn(err)) throw err;
      // Another writer was first: a normal race, retried from a fresh read, but bounded and counted
      // like any failure.
      this.options.failures?.inc({ code: String((err as KubeApiError).status) });
      log.debug(
        { node: name, status: (err as KubeApiError).status },
        'taints changed under us; retrying on a fresh read',
      );
      return 'retry';
    }
    log.info({ node: name, taint: rule.taintKey }, 'istio-cni is ready on the node; taint removed');
    return 'done';
  }
}
