// Leader election in Kubernetes mode, on the same locks istiod takes, so that istiod-ts replicas
// and istiod replicas of any revision form one election per singleton controller:
// - a ConfigMap named after the election in the system namespace, its annotation
//   control-plane.alpha.kubernetes.io/leader holding the JSON record (istiod's NewLeaderElection:
//   root certificates, node untaint, ServiceEntry IP allocation);
// - a Lease where istiod calls NewLeaseLeaderElection (the ambient status writer), its holder key
//   in annotation leader.istio.io/holder-key.
// The holder key is the revision: as in istiod, a replica of the default revision (the revision
// label of MutatingWebhookConfiguration istio-revision-tag-default) takes a live lock from another
// revision. Timing is client-go's with istiod's values; leader-election.ts runs the loop,
// leader-record.ts holds the record format and the decisions, leader-lock.ts the two lock kinds.

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { LEASE_NAMES, type LeaderElector } from '../../contract/leader';
import type { KubeClient } from './client';
import { WebhookDefaultRevision, type DefaultRevisionSource } from './leader-default-revision';
import { ACQUIRE_JITTER, Election, lockCallTimeoutMs, type LeaderTiming, type StopFn } from './leader-election';
import { newLock, type LockKind } from './leader-lock';
import { DEFAULT_REVISION_NAME } from './leader-record';
import { KubeWriter } from './writes';

export { LEASE_NAMES } from '../../contract/leader';
export { ACQUIRE_JITTER, type LeaderTiming } from './leader-election';

/**
 * istiod's: a 30 s lease, renew deadline half of it, retry period a quarter
 * (pilot/pkg/leaderelection). Equal values keep a mixed deployment's failover time what istiod's is.
 */
export const DEFAULT_LEADER_TIMING: LeaderTiming = {
  leaseDurationMs: 30_000,
  renewDeadlineMs: 15_000,
  retryPeriodMs: 7_500,
};

/**
 * The elections istiod locks with a Lease (NewLeaseLeaderElection); every other election name
 * is a ConfigMap lock, as istiod's NewLeaderElection takes. A different kind under the same name
 * would be a second lock, and both sides would lead at once.
 */
export const LEASE_LOCKED_ELECTIONS: ReadonlySet<string> = new Set([LEASE_NAMES.status]);

export function lockKindOf(election: string): LockKind {
  return LEASE_LOCKED_ELECTIONS.has(election) ? 'Lease' : 'ConfigMap';
}

export interface KubeLeaderElectorOptions {
  client: KubeClient;
  /** The system namespace (POD_NAMESPACE), where istiod keeps its locks. */
  namespace: string;
  /** Holder identity; default the host name with a random suffix (callers pass POD_NAME, as istiod uses). */
  identity?: string;
  /** REVISION: the holder key; '' means istiod's 'default'. */
  revision?: string;
  timing?: Partial<LeaderTiming>;
  /** Where the default revision is read; default the istio-revision-tag-default webhook, else the tag's Service. */
  defaultRevision?: DefaultRevisionSource;
  /** `client` is a remote cluster this replica manages from outside (EXTERNAL_ISTIOD): keys get istiod's '^'. */
  remote?: boolean;
}

export function validateTiming(t: LeaderTiming): void {
  for (const [name, ms] of Object.entries(t))
    if (!(Number.isFinite(ms) && ms > 0)) throw new Error(`leader election: ${name} (${ms}) must be a positive number`);
  if (!(t.leaseDurationMs > t.renewDeadlineMs))
    throw new Error(
      `leader election: lease duration (${t.leaseDurationMs} ms) must exceed the renew deadline (${t.renewDeadlineMs} ms)`,
    );
  if (!(t.renewDeadlineMs > t.retryPeriodMs * ACQUIRE_JITTER)) {
    throw new Error(
      `leader election: renew deadline (${t.renewDeadlineMs} ms) must exceed ${ACQUIRE_JITTER} x retry period (${t.retryPeriodMs} ms)`,
    );
  }
}

export class KubeLeaderElector implements LeaderElector {
  readonly identity: string;
  readonly revision: string;
  private readonly timing: LeaderTiming;
  private readonly elections = new Map<string, Election>();
  private readonly writer: KubeWriter;
  private readonly defaultRevision: DefaultRevisionSource;
  private stopped = false;

  constructor(private readonly options: KubeLeaderElectorOptions) {
    this.identity = options.identity || `${hostname()}-${randomBytes(4).toString('hex')}`;
    this.revision = options.revision || DEFAULT_REVISION_NAME;
    this.timing = { ...DEFAULT_LEADER_TIMING, ...options.timing };
    validateTiming(this.timing);
    this.writer = new KubeWriter(options.client);
    this.defaultRevision =
      options.defaultRevision ??
      new WebhookDefaultRevision(
        this.writer,
        this.timing.retryPeriodMs,
        {
          // Read inside a lock try, so it has a lock call's limit.
          timeoutMs: lockCallTimeoutMs(this.timing),
          maxAttempts: 1,
        },
        options.namespace,
      );
  }

  runWhileLeader(lease: string, run: () => StopFn): void {
    if (this.stopped) throw new Error(`leader election for ${lease}: the elector is stopped`);
    let election = this.elections.get(lease);
    if (!election) {
      if (this.elections.size === 0) {
        // Read the default revision once up front: a missing permission shows in the first
        // seconds, not at the first contested lock.
        void this.defaultRevision.current();
      }
      election = new Election({
        name: lease,
        lock: newLock(lockKindOf(lease), this.writer, this.options.namespace, lease),
        identity: this.identity,
        revision: this.revision,
        ...(this.options.remote ? { remote: true } : {}),
        timing: this.timing,
        defaultRevision: this.defaultRevision,
      });
      this.elections.set(lease, election);
      election.start();
    }
    election.add(run);
  }

  isLeader(lease: string): boolean {
    return this.elections.get(lease)?.leading ?? false;
  }

  /** Leadership per election, for /debug. */
  status(): Record<string, boolean> {
    return Object.fromEntries([...this.elections].map(([name, e]) => [name, e.leading]));
  }

  /** The SIGTERM path: stop every controller and release every lock held. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.elections.values()].map((e) => e.stop()));
  }
}
