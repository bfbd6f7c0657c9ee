// Fair scheduling of CSR checks and signing by requesting node. Every CreateCertificate, once
// authenticated and authorized, runs its CSR check + signature through one NodeFairQueue: at most
// `slots` run at once, and when they are all taken, calls wait in one bounded queue per node
// (per caller identity for callers that are not node agents) served round-robin. A node with one
// call waits for at most one call of each other busy node, never behind a whole flood.
//
// Inside the signing workers the same calls are served round-robin by node too (each job carries
// its node as a lane, see csr-verifier-pool.ts), so the slots can be many: enough to keep every
// worker fed while the event loop is busy, without a newly arrived node waiting behind them.
//
// Alone, a call costs two Map lookups and a counter: while a slot is free and nobody waits, the
// task starts at once (the fast path).

/** Calls waiting per node beyond the running ones; a full queue answers RESOURCE_EXHAUSTED. */
export const NODE_QUEUE_LIMIT = 512;
/**
 * Signing slots per verifier worker. Under a flood the event loop answers a worker's results
 * tens of milliseconds late; 32 jobs per worker keep it busy through that (at 4 per worker one
 * flooding node lost over half its rate), and the workers' own per-node lanes keep another
 * node's job from waiting behind them.
 */
export const SLOTS_PER_WORKER = 32;
/**
 * Least token-bucket capacity with CA_NODE_RATE_LIMIT set: Kubernetes' default maxPods per node,
 * so a restarted ztunnel can still fetch every pod's certificate at once, then at the limit.
 */
export const NODE_RATE_MIN_BURST = 110;
/** Window of the recent per-node rate shown by /debug/ca, and of per-node bookkeeping. */
export const NODE_RATE_WINDOW_MS = 10_000;

export type FairnessDenialReason = 'queue_full' | 'rate_limited';

/** A call refused before it ran: its node's queue is full or its rate limit is spent. */
export class FairnessDenial extends Error {
  constructor(
    readonly reason: FairnessDenialReason,
    readonly node: string,
    message: string,
  ) {
    super(message);
  }
}

export interface FairQueueOptions {
  /** Calls running at once (CSR check + signature); default SLOTS_PER_WORKER per worker. */
  slots: number;
  queueLimit?: number;
  /** CA_NODE_RATE_LIMIT: certificates per second per node; 0 disables the limit. */
  ratePerSecond?: number;
  /** Told of each denial (metrics, interval logs). */
  onDenied?: (denial: FairnessDenial) => void;
  /** Told how long each call waited for its slot. */
  onWait?: (ms: number) => void;
  now?: () => number;
}

interface Waiting {
  run: () => void;
  enqueuedAt: number;
}

interface NodeState {
  /** Waiting calls from `head` on; compacted when the head passes half. */
  waiting: Waiting[];
  head: number;
  running: number;
  /** Calls started in the current and the previous rate window. */
  started: number;
  startedBefore: number;
  tokens: number;
  refilledAt: number;
}

export interface NodeQueueView {
  node: string;
  queued: number;
  running: number;
  /** Calls started per second over the current and the previous NODE_RATE_WINDOW_MS. */
  recentPerSecond: number;
}

export interface FairQueueView {
  slots: number;
  running: number;
  queued: number;
  queueLimit: number;
  ratePerSecond: number | 'off';
  /** Nodes with waiting calls or recent activity, busiest first; at most `top`. */
  nodes: NodeQueueView[];
  nodesTracked: number;
}

export class NodeFairQueue {
  private readonly nodes = new Map<string, NodeState>();
  /** Nodes with waiting calls, in serving order; a node served and still waiting goes to the back. */
  private ring: string[] = [];
  private ringHead = 0;
  private running = 0;
  private queued = 0;
  private windowStart: number;
  /** Whether the previous rate window was a full one that just ended (its counts are valid). */
  private previousWindow = false;
  private readonly queueLimit: number;
  private readonly rate: number;
  private readonly burst: number;
  private readonly now: () => number;

  constructor(private readonly opts: FairQueueOptions) {
    if (!(opts.slots >= 1)) throw new Error(`fair queue slots must be at least 1, got ${opts.slots}`);
    this.queueLimit = opts.queueLimit ?? NODE_QUEUE_LIMIT;
    this.rate = opts.ratePerSecond ?? 0;
    this.burst = Math.max(this.rate, NODE_RATE_MIN_BURST);
    this.now = opts.now ?? Date.now;
    this.windowStart = this.now();
  }

  /**
   * Runs `task` when `node` gets its turn. Rejects with FairnessDenial, without running it, when
   * the node's queue is full or its rate limit is spent. `inline`: the task signs on the event loop
   * at once and takes no worker, so it does not wait for a slot (the slots only bound the jobs
   * queued in the workers); under a flood, waiting for one of the flood's jobs to come back from
   * a worker was most of a lone node's wait. The rate limit still applies.
   */
  run<T>(node: string, task: () => Promise<T>, inline = false): Promise<T> {
    const now = this.now();
    if (now - this.windowStart >= NODE_RATE_WINDOW_MS) this.roll(now);
    let state = this.nodes.get(node);
    if (!state) {
      state = { waiting: [], head: 0, running: 0, started: 0, startedBefore: 0, tokens: this.burst, refilledAt: now };
      this.nodes.set(node, state);
    }
    const s = state;
    const free = inline || (this.running < this.opts.slots && this.queued === 0);
    if (!free && s.waiting.length - s.head >= this.queueLimit) {
      return Promise.reject(
        this.deny(
          'queue_full',
          node,
          `node ${node} already has ${this.queueLimit} certificate requests queued (NODE_QUEUE_LIMIT)`,
        ),
      );
    }
    if (this.rate > 0 && !this.takeToken(s, now)) {
      return Promise.reject(
        this.deny('rate_limited', node, `node ${node} is over CA_NODE_RATE_LIMIT (${this.rate} certificates/s)`),
      );
    }
    if (free) {
      this.opts.onWait?.(0);
      return this.start(s, task);
    }
    return new Promise<T>((resolve, reject) => {
      const enqueuedAt = now;
      if (s.waiting.length === s.head) this.ring.push(node);
      s.waiting.push({
        enqueuedAt,
        run: () => {
          this.opts.onWait?.(this.now() - enqueuedAt);
          this.start(s, task).then(resolve, reject);
        },
      });
      this.queued++;
    });
  }

  private start<T>(s: NodeState, task: () => Promise<T>): Promise<T> {
    this.running++;
    s.running++;
    s.started++;
    let p: Promise<T>;
    try {
      p = task();
    } catch (err) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes on what the task threw, as its own rejection would
      p = Promise.reject(err);
    }
    return p.finally(() => {
      this.running--;
      s.running--;
      this.next();
    });
  }

  /** Gives free slots to waiting calls, one node at a time in ring order. */
  private next(): void {
    while (this.running < this.opts.slots && this.queued > 0) {
      const node = this.ring[this.ringHead++];
      const s = node === undefined ? undefined : this.nodes.get(node);
      const w = s?.waiting[s.head];
      // queued > 0 means some node with a waiting call is in the ring, and roll() keeps the state of waiting nodes.
      if (node === undefined || s === undefined || w === undefined)
        throw new Error('fair queue: a queued call is lost');
      s.waiting[s.head++] = undefined as never;
      this.queued--;
      if (s.head === s.waiting.length) {
        s.waiting = [];
        s.head = 0;
      } else {
        if (s.head > 64 && s.head * 2 > s.waiting.length) {
          s.waiting = s.waiting.slice(s.head);
          s.head = 0;
        }
        this.ring.push(node);
      }
      if (this.ringHead > 64 && this.ringHead * 2 > this.ring.length) {
        this.ring = this.ring.slice(this.ringHead);
        this.ringHead = 0;
      }
      w.run();
    }
  }

  private takeToken(s: NodeState, now: number): boolean {
    s.tokens = Math.min(this.burst, s.tokens + ((now - s.refilledAt) * this.rate) / 1000);
    s.refilledAt = now;
    if (s.tokens < 1) return false;
    s.tokens -= 1;
    return true;
  }

  private deny(reason: FairnessDenialReason, node: string, message: string): FairnessDenial {
    const d = new FairnessDenial(reason, node, message);
    this.opts.onDenied?.(d);
    return d;
  }

  /** Starts a new rate window and forgets nodes with nothing waiting, running or recent. */
  private roll(now: number): void {
    const fresh = now - this.windowStart < 2 * NODE_RATE_WINDOW_MS;
    this.previousWindow = fresh;
    this.windowStart = now;
    for (const [node, s] of this.nodes) {
      s.startedBefore = fresh ? s.started : 0;
      s.started = 0;
      const bucketFull = this.rate === 0 || s.tokens + ((now - s.refilledAt) * this.rate) / 1000 >= this.burst;
      if (s.startedBefore === 0 && s.running === 0 && s.waiting.length === s.head && bucketFull)
        this.nodes.delete(node);
    }
  }

  /** What /debug/ca shows: totals and the `top` busiest nodes. */
  view(top = 20): FairQueueView {
    const now = this.now();
    if (now - this.windowStart >= NODE_RATE_WINDOW_MS) this.roll(now);
    // Calls started over the previous full window plus the current one, per second.
    const spanMs = Math.max(1, now - this.windowStart + (this.previousWindow ? NODE_RATE_WINDOW_MS : 0));
    const nodes: NodeQueueView[] = [];
    for (const [node, s] of this.nodes) {
      const recentPerSecond = Math.round(((s.started + s.startedBefore) * 1000 * 10) / spanMs) / 10;
      nodes.push({ node, queued: s.waiting.length - s.head, running: s.running, recentPerSecond });
    }
    nodes.sort((a, b) => b.queued - a.queued || b.running - a.running || b.recentPerSecond - a.recentPerSecond);
    return {
      slots: this.opts.slots,
      running: this.running,
      queued: this.queued,
      queueLimit: this.queueLimit,
      ratePerSecond: this.rate > 0 ? this.rate : 'off',
      nodes: nodes.slice(0, top),
      nodesTracked: this.nodes.size,
    };
  }
}
