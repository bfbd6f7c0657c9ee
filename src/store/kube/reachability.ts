// Waiting for the API server at start-up: GET /version until it answers, with backoff. An API
// server that is down or slow when the pod starts is a wait, not an exit: an exit in a cluster is
// CrashLoopBackOff, whose delays grow to 5 minutes, long after the API server is back.

import { scopedLogger } from '../../log/logger';
import { backoffDelay, type BackoffPolicy } from './backoff';
import { assertReachable, REACHABILITY_TIMEOUT_MS } from './config';
import type { KubeClient } from './client';

const log = scopedLogger('kube');

/**
 * Between checks: 1 s first (a connection refused during a control-plane restart is usually over
 * in seconds), doubling to 30 s, the watches' own ceiling, so a long outage costs one request per
 * 30 s per replica.
 */
export const REACHABILITY_BACKOFF: BackoffPolicy = { initialMs: 1_000, maxMs: 30_000 };

export interface ReachabilityOptions {
  backoff?: BackoffPolicy;
  /** Bound on one GET /version. */
  timeoutMs?: number;
}

export class ApiServerReachability {
  /** Why the API server is not reachable yet; undefined once it answered. */
  private problem: string | undefined = 'not contacted yet';
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  /** Resolves when GET /version has answered once; never rejects (stop() leaves it pending). */
  readonly reachable: Promise<void>;

  constructor(
    private readonly client: KubeClient,
    private readonly options: ReachabilityOptions = {},
  ) {
    this.reachable = this.run();
  }

  /** What /ready shows while waiting: the last error. */
  waitingFor(): string[] {
    return this.problem === undefined ? [] : [this.problem];
  }

  get isReachable(): boolean {
    return this.problem === undefined;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.wake?.();
  }

  /** A method, not the field: the field's narrowing would outlive the awaits that change it. */
  private isStopped(): boolean {
    return this.stopped;
  }

  private async run(): Promise<void> {
    let failures = 0;
    let logged = '';
    for (;;) {
      try {
        await assertReachable(this.client, this.options.timeoutMs ?? REACHABILITY_TIMEOUT_MS);
        if (failures > 0) log.info({ server: this.client.server, failures }, 'the Kubernetes API server answers');
        this.problem = undefined;
        return;
      } catch (err) {
        if (this.isStopped()) return new Promise<void>(() => undefined);
        failures++;
        const message = (err as Error).message;
        this.problem = message;
        const retryInMs = backoffDelay(failures, this.options.backoff ?? REACHABILITY_BACKOFF);
        // One warning per distinct error: a long outage is one line, a change of cause another.
        if (message !== logged) log.warn({ err: message, attempt: failures, retryInMs }, 'waiting for the API server');
        else log.debug({ err: message, attempt: failures, retryInMs }, 'waiting for the API server');
        logged = message;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          this.timer = setTimeout(resolve, retryInMs);
        });
        if (this.isStopped()) return new Promise<void>(() => undefined);
      }
    }
  }
}
